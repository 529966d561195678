#pragma once
// Tuning by measurement (DESIGN.md section 5). Off by default: every engine picks its
// configuration by its analytic heuristic. When on, an engine that has candidates measures
// each once per problem key on the caller's device (into scratch memory: the caller's data
// is never touched) and keeps the fastest; the choices persist in a cache file when one is
// set. Keys name the GPU, the operator, the shape, the scalar type and the layout, so one
// file serves several GPUs.
//
//   strop::set_tuning_enabled(true);                  // or STROP_TUNE=1 in the environment
//   strop::set_tuning_file("strop-tuning.txt");       // or STROP_TUNING_FILE=...
//
// File format: text, one "key<TAB>value" per line after a "# strop tuning cache v1" line.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strop {

// Whether engines tune by measurement (default: the STROP_TUNE environment variable, "1").
bool tuning_enabled();
void set_tuning_enabled(bool enabled);

// Loads `path` (when it exists) into the cache and writes every new choice back to it
// (atomically: the file is whole or unchanged). An empty path keeps choices in memory only.
// IoError if the file exists but cannot be read or is not a whole tuning cache (a damaged
// line, a last line cut off before its newline); the cache is then left unchanged.
// (STROP_TUNING_FILE naming such a file is ignored, with a warning on stderr.) Writing is
// best effort: where the file cannot be written, a choice stays in memory (warning on
// stderr). Processes storing into one file merge under a lock on "PATH.lock": a store writes
// the choices this process stored and has not yet written over the file's entries and
// keeps the file's other entries (which may be newer than the copies this process loaded;
// the memory keeps its own).
void set_tuning_file(const std::string& path);
std::string tuning_file();

// The process-wide cache (thread-safe).
std::optional<std::string> tuned_choice(const std::string& key);
void store_tuned_choice(const std::string& key, const std::string& value);
std::size_t tuned_choice_count();
std::vector<std::pair<std::string, std::string>> tuned_choices();  // (key, value), a snapshot
void clear_tuned_choices();  // in memory only; the file is left as it is

}  // namespace strop
