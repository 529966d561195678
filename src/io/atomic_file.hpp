#pragma once
// Files strop writes appear whole or not at all: the bytes go to a temporary file beside
// the target (same file system), which is renamed over the target only once complete. A
// failed write leaves an existing file untouched and removes the temporary.
#include <functional>
#include <ostream>
#include <string>

namespace strop::io {

// `write` fills the stream; IoError naming `path` if the temporary cannot be created or
// written (disk full) or the rename fails. Exceptions from `write` propagate.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

}  // namespace strop::io
