#include "io/file_seal.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "strop/core/error.hpp"

namespace strop::io::seal {

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'O', 'P', 'S', 'E', 'L'};
constexpr char kHdf5Signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
constexpr const char* kNote =
    "\nThis HDF5 file was written by strop; HDF5 data begins at byte 512. The header above "
    "holds the file length and a 64-bit FNV-1a checksum of every byte after this block.\n";

// The fields of a seal, little-endian at the start of the user block.
struct Header {
  char magic[8];
  std::uint64_t version;
  std::uint64_t length;    // of the whole file
  std::uint64_t checksum;  // of bytes [kUserBlockBytes, length)
};

// FNV-1a over 8-byte words (then the tail bytes): a few GB/s, plenty to detect corruption.
std::uint64_t checksum_of(std::ifstream& in) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  std::array<char, 1 << 16> buffer;
  while (in) {
    in.read(buffer.data(), buffer.size());
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    std::size_t i = 0;
    for (; i + 8 <= got; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, buffer.data() + i, 8);
      hash = (hash ^ word) * 0x100000001b3ull;
    }
    for (; i < got; ++i)
      hash = (hash ^ std::uint8_t(buffer[i])) * 0x100000001b3ull;
  }
  return hash;
}

struct Prefix {
  std::array<char, kUserBlockBytes + 8> bytes{};
  std::uint64_t file_length = 0;
  bool complete = false;  // the file holds at least a user block and a signature
};

Prefix read_prefix(std::ifstream& in) {
  Prefix p;
  in.seekg(0, std::ios::end);
  p.file_length = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  in.read(p.bytes.data(), p.bytes.size());
  p.complete = in.gcount() == std::streamsize(p.bytes.size());
  in.clear();
  return p;
}

bool has_hdf5_after_user_block(const Prefix& p) {
  return p.complete &&
         std::memcmp(p.bytes.data() + kUserBlockBytes, kHdf5Signature, sizeof kHdf5Signature) == 0;
}

// A user block strop may write its seal into: one it sealed before, or the blank one that
// FileInMemory reserved. Another program's user block is that program's data.
bool is_strop_user_block(const Prefix& p) {
  const auto block = p.bytes.begin();
  return std::equal(kMagic, kMagic + sizeof kMagic, block) ||
         std::all_of(block, block + kUserBlockBytes, [](char c) { return c == 0; });
}

}  // namespace

void write(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  require<IoError>(bool(in), path, ": cannot reopen to seal");
  const Prefix p = read_prefix(in);
  // Another program's file (no user block, or one it filled) stays as it is, unsealed.
  if (!has_hdf5_after_user_block(p) || !is_strop_user_block(p)) return;
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = 1;
  h.length = p.file_length;
  in.seekg(kUserBlockBytes);
  h.checksum = checksum_of(in);
  in.close();
  std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  out.write(reinterpret_cast<const char*>(&h), sizeof h);
  out.write(kNote, std::streamsize(std::strlen(kNote)));
  out.flush();
  require<IoError>(bool(out), path, ": cannot write the seal");
}

void verify(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  require<IoError>(bool(in), path, ": cannot open");
  const Prefix p = read_prefix(in);
  Header h{};
  if (p.bytes.size() < sizeof h) return;
  std::memcpy(&h, p.bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return;  // not sealed by strop
  require<IoError>(h.version == 1, path, ": unknown seal version ", h.version);
  constexpr const char* kWhy =
      ": the file is corrupted, or another program edited it after strop wrote it (strop "
      "files are sealed; edit them with strop, read them with anything)";
  require<IoError>(p.file_length >= h.length, path, ": truncated to ", p.file_length, " of ",
                   h.length, " bytes", kWhy);
  require<IoError>(p.file_length == h.length, path, ": ", p.file_length - h.length,
                   " bytes longer than written", kWhy);
  in.seekg(kUserBlockBytes);
  require<IoError>(checksum_of(in) == h.checksum, path, ": checksum mismatch", kWhy);
}

}  // namespace strop::io::seal
