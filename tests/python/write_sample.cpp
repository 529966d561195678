// Writes every operator of the test zoo, in every scalar type, to one HDF5 file, with the
// dense matrix strop computes for each beside it (/expected/<name>), and Strassen-Tile
// operators and a chain of them with a batch of signals and strop's result (/signals/<name>,
// /applied/<name>).
// The h5py test rebuilds each operator from the documented schema alone and compares.
#include <cstdio>
#include <tuple>

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

// Random (learned-style) encoders of tile t and rank r with random encoded weights: mixes
// the signals of a tile, no dense matrix.
template <class T>
strop::StrassenTile<T> random_strassen_tile(strop::Index t, strop::Index r, strop::Index rows,
                                            strop::Index cols, std::mt19937& rng) {
  strop::stl::Encoders enc;
  enc.tile = t;
  enc.encode_signal = random_matrix<double>(r, t * t, rng);
  enc.encode_weight = random_matrix<double>(r, t * t, rng);
  enc.decode = random_matrix<double>(r, t * t, rng);
  const strop::HostMatrix<T> w = random_matrix<T>(r * (rows / t) * (cols / t), 1, rng);
  return strop::StrassenTile<T>(enc, rows, cols, std::vector<T>(w.data(), w.data() + w.size()));
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
  // Expressions around "stl_learned", which see the whole batch: h5py applies them node by
  // node (the transpose and adjoint as the adjoint of the batch-linear map).
  const strop::StrassenTile<T>& learned = tiles[1].second;
  const auto dense = [&](Index rows, Index cols) {
    return strop::Dense<T>(random_matrix<T>(rows, cols, rng));
  };
  const std::vector<std::pair<std::string, strop::AnyOperator<T>>> expressions = {
      {"stl_scaled", T(2.5) * learned},
      {"stl_product", dense(6, 8) * learned},
      {"stl_sum", learned + dense(8, 12)},
      {"stl_transpose", learned.transpose()},
      {"stl_adjoint", learned.adjoint()},
      {"stl_vstack", strop::vstack(learned, dense(3, 12))},
      {"stl_hstack", strop::hstack(learned, dense(8, 5))},
      {"stl_block_diag", strop::block_diag(learned, dense(3, 2))}};
  for (const auto& [name, op] : expressions) {
    const std::string full = scalar + "_" + name;
    strop::io::save(path, op, full);
    const strop::HostMatrix<T> X = random_matrix<T>(op.cols(), 2 * learned.tile() + 1, rng);
    strop::HostMatrix<T> Y(op.rows(), X.cols());
    op.apply(strop::Op::NoTrans, strop::view(X), strop::view(Y));
    strop::io::save_matrix<T>(path, "/signals/" + full, X);
    strop::io::save_matrix<T>(path, "/applied/" + full, Y);
  }
  // "stl_chain": three layers with random encoders (t = 2, ranks 5, 7, 3) on 8 x 12,
  // 12 x 6 and 6 x 10, applied to a batch of 3 t signals (the chain's fused path, which
  // keeps the activations encoded between layers); h5py applies the layers one by one.
  std::vector<strop::StrassenTile<T>> layers;
  for (const auto& [rows, cols, rank] :
       {std::tuple<Index, Index, Index>{8, 12, 5}, {12, 6, 7}, {6, 10, 3}})
    layers.push_back(random_strassen_tile<T>(2, rank, rows, cols, rng));
  const strop::StrassenTileChain<T> chain(std::move(layers));
  const std::string full = scalar + "_stl_chain";
  strop::io::save(path, strop::AnyOperator<T>(chain), full);
  const strop::HostMatrix<T> X =
      random_matrix<T>(chain.cols(), 3 * chain.layers().front().tile(), rng);
  strop::HostMatrix<T> Y(chain.rows(), X.cols());
  chain.apply(strop::Op::NoTrans, strop::view(X), strop::view(Y));
  strop::io::save_matrix<T>(path, "/signals/" + full, X);
  strop::io::save_matrix<T>(path, "/applied/" + full, Y);
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
