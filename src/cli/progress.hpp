#pragma once
// A progress bar on stderr for long work, drawn only when stderr is a terminal: scripts
// and pipes see nothing, so stdout stays machine-readable and logs stay clean.
#include <chrono>
#include <string>

#include "strop/core/scalar.hpp"

namespace strop::cli {

class Progress {
 public:
  // total > 0: a bar of done/total; total == 0: a line that only says what is running.
  Progress(std::string label, Index total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Redraws at most ~10 times a second (and always for the last step).
  void update(Index done, const std::string& note = {});
  // Clears the line; later updates are ignored.
  void finish();

  // True when stderr is a terminal (and so progress is drawn).
  static bool enabled();

 private:
  void draw(Index done, const std::string& note);
  std::string label_;
  Index total_;
  bool active_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace strop::cli
