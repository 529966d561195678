// Writes every operator of the test zoo, in every scalar type, to one HDF5 file, with the
// dense matrix strop computes for each beside it (/expected/<name>), and Strassen-Tile
// operators with a batch of signals and strop's result (/signals/<name>, /applied/<name>).
// The h5py test rebuilds each operator from the documented schema alone and compares.
#include <cstdio>

#include "operator_zoo.hpp"
#include "strop/io/hdf5.hpp"

namespace {

template <class T>
strop::HostMatrix<T> random_matrix(strop::Index rows, strop::Index cols, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  strop::HostMatrix<T> m(rows, cols);
  for (strop::Index i = 0; i < m.size(); ++i) {
    if constexpr (strop::is_complex_v<T>) {
      m.data()[i] = T(strop::RealOf<T>(normal(rng)), strop::RealOf<T>(normal(rng)));
    } else {
      m.data()[i] = T(normal(rng));
    }
  }
  return m;
}

template <class T>
void write_all(const std::string& path) {
  using strop::Index;
  std::mt19937 rng(5);
  const std::string scalar(strop::ScalarTraits<T>::name);
  for (const auto& [name, op] : strop::testing::operator_zoo<T>(rng)) {
    const std::string full = scalar + "_" + name;
    strop::io::save(path, op, full);
    strop::io::save_matrix<T>(path, "/expected/" + full, op.to_dense());
  }
  // Strassen-Tile operators, which mix the signals of a tile, also by their action on a
  // batch with a partial last tile: /signals/<name> X and /applied/<name> Y = A X.
  // "stl_learned" has random encoders (t = 4, r = 11): no dense matrix.
  strop::stl::Encoders enc;
  enc.tile = 4;
  enc.encode_signal = random_matrix<double>(11, 16, rng);
  enc.encode_weight = random_matrix<double>(11, 16, rng);
  enc.decode = random_matrix<double>(11, 16, rng);
  const strop::HostMatrix<T> w = random_matrix<T>(11 * 2 * 3, 1, rng);
  const std::vector<std::pair<std::string, strop::StrassenTile<T>>> tiles = {
      {"stl_exact",
       strop::StrassenTile<T>::encode(random_matrix<T>(8, 12, rng), strop::stl::strassen_4x4())},
      {"stl_learned",
       strop::StrassenTile<T>(enc, 8, 12, std::vector<T>(w.data(), w.data() + w.size()))}};
  for (const auto& [name, op] : tiles) {
    const std::string full = scalar + "_" + name;
    strop::io::save(path, strop::AnyOperator<T>(op), full);
    const strop::HostMatrix<T> X = random_matrix<T>(op.cols(), 2 * op.tile() + 1, rng);
    strop::HostMatrix<T> Y(op.rows(), X.cols());
    op.apply(strop::Op::NoTrans, strop::view(X), strop::view(Y));
    strop::io::save_matrix<T>(path, "/signals/" + full, X);
    strop::io::save_matrix<T>(path, "/applied/" + full, Y);
    if (op.acts_per_signal()) strop::io::save_matrix<T>(path, "/expected/" + full, op.to_dense());
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
