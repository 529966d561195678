// Save an expression to HDF5, list the file, load it back and check it is the same
// operator, bit for bit. The file can be read from Python with h5py (docs/hdf5-format.md).
#include <cstdio>
#include <random>

#include "strop/io/hdf5.hpp"
#include "strop/strop.hpp"

using namespace strop;

int main() {
  std::mt19937 rng(4);
  const Index n = 256;
  const auto B = KSChain<float>::random(butterfly_patterns(n), rng);
  const auto L = LowRank<float>::random(n, n, 8, rng);
  const AnyOperator<float> A = 0.5f * B + L;  // butterfly plus low rank

  const std::string path = "hdf5_round_trip.h5";
  io::save(path, A, "butterfly_plus_lowrank");
  io::save(path, AnyOperator<float>(B), "butterfly",
           io::Provenance{"random", 0.0, n, n, "examples/hdf5_round_trip.cpp"});
  for (const io::StoredOperator& s : io::list_operators(path))
    std::printf("%-24s %-8s %-9s %lldx%lld\n", s.name.c_str(), s.strop_type.c_str(),
                s.scalar_type.c_str(), static_cast<long long>(s.rows),
                static_cast<long long>(s.cols));

  const AnyOperator<float> loaded = io::load<float>(path, "butterfly_plus_lowrank");
  const bool identical = (loaded.to_dense().array() == A.to_dense().array()).all();
  std::printf("loaded operator is %s\n", identical ? "identical" : "DIFFERENT");
  std::remove(path.c_str());
  return identical ? 0 : 1;
}
