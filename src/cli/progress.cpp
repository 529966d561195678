#include "cli/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace strop::cli {

bool Progress::enabled() {
  return isatty(STDERR_FILENO) == 1;
}

Progress::Progress(std::string label, Index total)
    : label_(std::move(label)), total_(total), active_(enabled()) {
  if (active_) draw(0, {});
}

Progress::~Progress() {
  finish();
}

void Progress::update(Index done, const std::string& note) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  draw(done, note);
}

void Progress::draw(Index done, const std::string& note) {
  last_draw_ = std::chrono::steady_clock::now();
  std::string line = "\r\033[K" + label_;
  if (total_ > 0) {
    constexpr int width = 30;
    const Index clamped = std::clamp<Index>(done, 0, total_);
    const int filled = static_cast<int>(width * clamped / total_);
    line += " [" + std::string(filled, '#') + std::string(width - filled, '.') + "] " +
            std::to_string(clamped) + "/" + std::to_string(total_);
  } else {
    line += " ...";
  }
  if (!note.empty()) line += "  " + note;
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!active_) return;
  active_ = false;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

}  // namespace strop::cli
