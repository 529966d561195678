#pragma once
// Scratch files for the file-format tests (HDF5, NumPy): one directory per test, and a file's
// bytes for checking that a failed write left a file exactly as it was.
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace strop::testing {

// A fresh directory per test, removed afterwards (its owner permissions restored first: a test
// may have made it read-only).
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("strop-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  // How many files and directories it holds.
  std::size_t entries() const {
    return std::size_t(std::distance(std::filesystem::directory_iterator(path),
                                     std::filesystem::directory_iterator{}));
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// The bytes of a file ("" where it cannot be read).
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace strop::testing
