// The process-wide tuning cache: a map from problem keys to chosen configurations, mirrored
// to a text file when one is set.
#include "strop/core/tuning.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "io/atomic_file.hpp"
#include "strop/core/error.hpp"

namespace strop {
namespace {

constexpr const char* kHeader = "# strop tuning cache v1";

std::map<std::string, std::string> read_file(const std::string& path, std::istream& in);

// Loads `path` when it exists (an empty map otherwise). Only a missing file is empty: one
// that exists but cannot be read (EACCES, EIO, ...) is an IoError, or the next store would
// replace it and lose its entries.
std::map<std::string, std::string> load(const std::string& path) {
  if (path.empty()) return {};
  errno = 0;
  std::ifstream in(path);
  if (!in) {
    const int error = errno;
    require<IoError>(error == ENOENT, "tuning file ", path, ": cannot be read (",
                     std::strerror(error), ")");
    return {};
  }
  return read_file(path, in);
}

struct Cache {
  std::mutex mutex;
  std::map<std::string, std::string> choices;
  std::string file;
  bool enabled = false;
  std::atomic<std::uint64_t> generation{0};  // counts changes to `choices`

  // From the environment: STROP_TUNE=1, STROP_TUNING_FILE=path.
  Cache() {
    const char* tune = std::getenv("STROP_TUNE");
    enabled = tune != nullptr && std::string(tune) == "1";
    if (const char* path = std::getenv("STROP_TUNING_FILE"); path != nullptr) {
      // A file that is not a tuning cache is ignored (and never overwritten), as
      // set_tuning_file would leave it: throwing here would make every later call
      // (tuning_enabled() in each apply, even with tuning off) throw it again.
      try {
        choices = load(path);
        file = path;
      } catch (const Error& e) {
        std::fprintf(stderr, "strop: ignoring STROP_TUNING_FILE: %s\n", e.what());
      }
    }
  }
};

Cache& cache() {
  static Cache c;
  return c;
}

// Parses a cache file; IoError naming the line on anything unexpected. write_file ends every
// line with a newline: a last line without one was cut off (its value may be a prefix of
// the real one), so the file is refused as damaged, like a line cut inside its key.
std::map<std::string, std::string> read_file(const std::string& path, std::istream& in) {
  std::map<std::string, std::string> entries;
  std::string line;
  require<IoError>(std::getline(in, line) && line == kHeader, "tuning file ", path,
                   ": not a strop tuning cache (first line must be \"", kHeader, "\")");
  for (int number = 2; std::getline(in, line); ++number) {
    require<IoError>(!in.eof(), "tuning file ", path, ", line ", number,
                     ": cut off (no final newline)");
    if (line.empty()) continue;
    // One tab, between a non-empty key and a non-empty value (what store_tuned_choice takes).
    const auto tab = line.find('\t');
    require<IoError>(tab != std::string::npos && tab > 0 && tab + 1 < line.size() &&
                         line.find('\t', tab + 1) == std::string::npos,
                     "tuning file ", path, ", line ", number, ": expected \"key<TAB>value\"");
    entries[line.substr(0, tab)] = line.substr(tab + 1);
  }
  require<IoError>(!in.bad(), "tuning file ", path, ": read error");  // not a short file
  return entries;
}

void write_file(const std::string& path, const std::map<std::string, std::string>& entries) {
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << kHeader << "\n";
    for (const auto& [key, value] : entries)
      out << key << "\t" << value << "\n";
  });
}

}  // namespace

bool tuning_enabled() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.enabled;
}

void set_tuning_enabled(bool enabled) {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.enabled = enabled;
}

void set_tuning_file(const std::string& path) {
  std::map<std::string, std::string> loaded = load(path);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  for (auto& [key, value] : loaded)
    c.choices[key] = std::move(value);
  c.file = path;
  ++c.generation;
}

std::string tuning_file() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.file;
}

std::optional<std::string> tuned_choice(const std::string& key) {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  const auto it = c.choices.find(key);
  if (it == c.choices.end()) return std::nullopt;
  return it->second;
}

void store_tuned_choice(const std::string& key, const std::string& value) {
  require<ShapeError>(!key.empty() && key.find_first_of("\t\n") == std::string::npos &&
                          !value.empty() && value.find_first_of("\t\n") == std::string::npos,
                      "store_tuned_choice: keys and values are non-empty, without tabs or "
                      "newlines");
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.choices[key] = value;
  ++c.generation;
  if (c.file.empty()) return;
  // Merge with what the file holds now (another process may have added choices); a file
  // that stopped being a tuning cache is not overwritten. Persisting is best effort: the
  // choice is made and kept in memory, and an engine's apply that measured it must not fail
  // (only its first call, for each new key) because the file cannot be written (missing or
  // read-only directory, disk full, file no longer a cache).
  // Other processes merge into the same file: an advisory lock on "FILE.lock" from the read
  // to the rename, or one's write drops the entries another wrote in between.
  const int file_lock = ::open((c.file + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (file_lock >= 0) ::flock(file_lock, LOCK_EX);  // no lock (read-only directory): as before
  try {
    std::map<std::string, std::string> on_disk = load(c.file);
    for (const auto& [k, v] : c.choices)
      on_disk[k] = v;
    write_file(c.file, on_disk);
  } catch (const Error& e) {
    std::fprintf(stderr, "strop: tuned choice kept in memory only: %s\n", e.what());
  }
  if (file_lock >= 0) ::close(file_lock);
}

std::size_t tuned_choice_count() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.choices.size();
}

std::vector<std::pair<std::string, std::string>> tuned_choices() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return {c.choices.begin(), c.choices.end()};
}

void clear_tuned_choices() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.choices.clear();
  ++c.generation;
}

namespace detail {
std::uint64_t tuning_generation() {
  return cache().generation.load(std::memory_order_acquire);
}
}  // namespace detail

}  // namespace strop
