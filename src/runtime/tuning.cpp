// The process-wide tuning cache: a map from problem keys to chosen configurations, mirrored
// to a text file when one is set.
#include "strop/core/tuning.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>

#include "io/atomic_file.hpp"
#include "strop/core/error.hpp"

namespace strop {
namespace {

constexpr const char* kHeader = "# strop tuning cache v1";

std::map<std::string, std::string> read_file(const std::string& path, std::istream& in);

// Loads `path` when it exists (an empty map otherwise).
std::map<std::string, std::string> load(const std::string& path) {
  std::map<std::string, std::string> entries;
  if (path.empty()) return entries;
  std::ifstream in(path);
  if (in) entries = read_file(path, in);
  return entries;
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
      file = path;
      choices = load(file);
    }
  }
};

Cache& cache() {
  static Cache c;
  return c;
}

// Parses a cache file; IoError naming the line on anything unexpected.
std::map<std::string, std::string> read_file(const std::string& path, std::istream& in) {
  std::map<std::string, std::string> entries;
  std::string line;
  require<IoError>(std::getline(in, line) && line == kHeader, "tuning file ", path,
                   ": not a strop tuning cache (first line must be \"", kHeader, "\")");
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const auto tab = line.find('\t');
    require<IoError>(tab != std::string::npos && tab > 0 && tab + 1 < line.size(), "tuning file ",
                     path, ", line ", number, ": expected \"key<TAB>value\"");
    entries[line.substr(0, tab)] = line.substr(tab + 1);
  }
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
  // that stopped being a tuning cache is not overwritten (IoError).
  std::map<std::string, std::string> on_disk = load(c.file);
  for (const auto& [k, v] : c.choices)
    on_disk[k] = v;
  write_file(c.file, on_disk);
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
