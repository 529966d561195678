#pragma once
// Files strop writes appear whole or not at all: the bytes go to a temporary file beside
// the target (same file system), which is renamed over the target only once complete. A
// failed write leaves an existing file untouched and removes the temporary.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace strop::io {

// The checks replace_atomically(path, ...) makes before it writes anything, for callers that
// refuse a target before long work: IoError naming `path` if it names a directory, a device,
// a pipe or anything else that is not a regular file (a rename would replace the node
// itself: /dev/full with a regular file), an existing file that is not writable (access()
// refuses, or its mode has no write bit: read-only even for root), or a directory that does
// not exist. Returns the target: `path` with symbolic links followed.
std::filesystem::path require_replaceable(const std::string& path);

// Calls `fill(target, temp)` to write the new contents of `path` into `temp`, a new empty
// file beside it, then renames `temp` over `target`. `target` is `path` with symbolic links
// followed: saving through a link replaces the file it names, not the link. The new file
// keeps an existing file's permission bits. IoError naming `path` where
// require_replaceable(path) refuses it, if the temporary cannot be created or the rename
// fails; on any exception the temporary is removed and the exception propagates.
void replace_atomically(const std::string& path,
                        const std::function<void(const std::filesystem::path& target,
                                                 const std::filesystem::path& temp)>& fill);

// `write` fills the stream; IoError naming `path` if the temporary cannot be created or
// written (disk full) or the rename fails. Exceptions from `write` propagate.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

}  // namespace strop::io
