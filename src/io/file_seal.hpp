#pragma once
// A whole-file checksum for the files strop writes. libhdf5 checksums its metadata but not
// everything it parses, and on some corrupted files it crashes instead of failing. So every
// file strop creates starts with a 512-byte HDF5 user block (which HDF5 and h5py skip)
// holding a seal: a magic string, the file's length and a checksum of the bytes after the
// user block. Loading verifies the seal before HDF5 parses a byte; a file another program
// wrote (no seal) is handed to HDF5 as it is, and saving into it keeps it unsealed.
#include <string>

namespace strop::io::seal {

// Size of the user block that FileInMemory reserves.
inline constexpr unsigned kUserBlockBytes = 512;

// Writes the seal of `path` if its first kUserBlockBytes are a user block strop reserved
// (blank) or sealed before. Any other file is left as it is: one without a user block, or
// one whose user block another program filled (its data, which the seal would overwrite).
void write(const std::string& path);

// IoError if `path` carries a seal that does not match its contents (corrupted, truncated,
// or edited by another program since strop wrote it).
void verify(const std::string& path);

}  // namespace strop::io::seal
