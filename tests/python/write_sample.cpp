// Writes every operator of the test zoo, in every scalar type, to one HDF5 file, with the
// dense matrix strop computes for each beside it (/expected/<name>). The h5py test
// rebuilds each operator from the documented schema alone and compares.
#include <cstdio>

#include "operator_zoo.hpp"
#include "strop/io/hdf5.hpp"

namespace {
template <class T>
void write_all(const std::string& path) {
  std::mt19937 rng(5);
  for (const auto& [name, op] : strop::testing::operator_zoo<T>(rng)) {
    const std::string full = std::string(strop::ScalarTraits<T>::name) + "_" + name;
    strop::io::save(path, op, full);
    strop::io::save_matrix<T>(path, "/expected/" + full, op.to_dense());
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.h5\n", argv[0]);
    return 2;
  }
  try {
    std::remove(argv[1]);
    write_all<float>(argv[1]);
    write_all<double>(argv[1]);
    write_all<std::complex<float>>(argv[1]);
    write_all<std::complex<double>>(argv[1]);
  } catch (const strop::Error& e) {
    std::fprintf(stderr, "write_sample: %s\n", e.what());
    return 1;
  }
  return 0;
}
