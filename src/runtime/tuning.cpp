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
  // Guards `choices`, `pending`, `file` and `epoch`; never held during file I/O, so lookups
  // (tuned_choice in every tuned apply) never wait for a disk write or another process.
  std::mutex mutex;
  std::map<std::string, std::string> choices;
  // The choices this process stored that are not yet in the file (stored since it was
  // loaded, or since a write that failed). Only these overwrite what the file holds: an
  // entry merely loaded earlier may be stale (another process measured it again since).
  std::map<std::string, std::string> pending;
  std::string file;
  std::uint64_t epoch = 0;  // counts set_tuning_file and clear_tuned_choices calls
  // Serialises writing the file within this process (FILE.lock serialises processes):
  // held from reading the file to renaming the new one, so that two threads' writes cannot
  // drop each other's entries. Taken before `mutex`, never while holding it.
  std::mutex persist_mutex;
  // Read on every GPU apply: atomic, so that it never waits for a lock.
  std::atomic<bool> enabled{false};
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
  return cache().enabled.load();
}

void set_tuning_enabled(bool enabled) {
  cache().enabled.store(enabled);
}

void set_tuning_file(const std::string& path) {
  std::map<std::string, std::string> loaded = load(path);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  // The file's entries replace those in memory; a stored choice the file has replaced is no
  // longer this process's to write back.
  for (auto& [key, value] : loaded) {
    c.pending.erase(key);
    c.choices[key] = std::move(value);
  }
  c.file = path;
  ++c.epoch;
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
  {
    std::lock_guard lock(c.mutex);
    c.choices[key] = value;
    c.pending[key] = value;
    ++c.generation;
    if (c.file.empty()) return;  // kept pending: written to a file set later
  }
  // Merge with what the file holds now (another process may have added or re-measured
  // choices); a file that stopped being a tuning cache is not overwritten. Persisting is
  // best effort: the choice is made and kept in memory, and an engine's apply that measured
  // it must not fail (only its first call, for each new key) because the file cannot be
  // written (missing or read-only directory, disk full, file no longer a cache).
  std::lock_guard persist(c.persist_mutex);
  // What to write, taken under the persist lock: a thread that stored before another's
  // write began has its choice written by that one (and then finds nothing pending).
  std::map<std::string, std::string> ours;
  std::string file;
  std::uint64_t epoch = 0;
  {
    std::lock_guard lock(c.mutex);
    ours = c.pending;
    file = c.file;
    epoch = c.epoch;
  }
  if (ours.empty() || file.empty()) return;
  // Other processes merge into the same file: an advisory lock on "FILE.lock" from the read
  // to the rename, or one's write drops the entries another wrote in between.
  const int file_lock = ::open((file + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (file_lock >= 0) ::flock(file_lock, LOCK_EX);  // no lock (read-only directory): as before
  bool written = false;
  try {
    std::map<std::string, std::string> merged = load(file);
    for (const auto& [k, v] : ours)
      merged[k] = v;
    write_file(file, merged);
    written = true;
  } catch (const Error& e) {
    std::fprintf(stderr, "strop: tuned choice kept in memory only: %s\n", e.what());
  }
  if (file_lock >= 0) ::close(file_lock);
  if (!written) return;  // still pending: the next store tries again
  std::lock_guard lock(c.mutex);
  // Unless the file was changed or the memory cleared meanwhile: what was written is no
  // longer pending (a later measurement in another process may replace it in the file).
  // The memory keeps its own choices: entries of the file are not taken in here, or a
  // clear_tuned_choices() would be undone by the next store.
  if (c.epoch != epoch) return;
  for (const auto& [k, v] : ours)
    if (const auto it = c.pending.find(k); it != c.pending.end() && it->second == v)
      c.pending.erase(it);
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
  c.pending.clear();
  ++c.epoch;
  ++c.generation;
}

namespace detail {
std::uint64_t tuning_generation() {
  return cache().generation.load(std::memory_order_acquire);
}
}  // namespace detail

}  // namespace strop
