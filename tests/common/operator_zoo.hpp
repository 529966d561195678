#pragma once
// One small instance of every expression node the library has, for tests that must cover
// them all (HDF5 round trips, the h5py reader, ...).
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "strop/strop.hpp"

namespace strop::testing {

// Standard normal entries (real and imaginary parts for complex T) drawn from `rng`.
template <class T>
HostMatrix<T> gaussian_matrix(std::mt19937& rng, Index rows, Index cols) {
  std::normal_distribution<double> normal;
  HostMatrix<T> m(rows, cols);
  for (Index i = 0; i < m.size(); ++i) {
    if constexpr (is_complex_v<T>) {
      m.data()[i] = T(RealOf<T>(normal(rng)), RealOf<T>(normal(rng)));
    } else {
      m.data()[i] = T(normal(rng));
    }
  }
  return m;
}

template <class T>
std::vector<std::pair<std::string, AnyOperator<T>>> operator_zoo(std::mt19937& rng) {
  using Any = AnyOperator<T>;
  auto matrix = [&](Index rows, Index cols) { return gaussian_matrix<T>(rng, rows, cols); };
  const Any dense = Dense<T>(matrix(6, 8));
  const Any identity = Identity<T>(8);
  const Any diagonal = Diagonal<T>(matrix(8, 1).col(0));
  const Any permutation = Permutation<T>::bit_reversal(8);
  const Any ks_factor = KSFactor<T>::random(KSPattern{2, 3, 2, 2}, rng);
  const Any ks_chain = KSChain<T>::random(butterfly_patterns(8), rng);
  const Any lowrank = LowRank<T>::random(6, 8, 2, rng);
  const Any monarch = Monarch<T>::random(8, 8, 2, 4, 2, rng);
  const Any blast = Blast<T>::random(8, 12, 2, 3, 2, rng);
  // Exact encoders, so that it acts on each signal separately and has a dense matrix.
  const Any strassen_tile = StrassenTile<T>::encode(matrix(6, 8), stl::strassen_2x2());
  T s(0.5);  // a complex factor for complex types, to test the {r, i} attribute
  if constexpr (is_complex_v<T>) s = T(0.5, -1.25);
  const Any product = Product<Any, Any>(dense, ks_chain);
  const Any sum = Sum<Any, Any>(monarch, Product<Any, Any>(diagonal, permutation));
  const Any scaled = Scaled<Any>(s, lowrank);
  const Any transpose = Transposed<Any, false>(ks_factor);
  const Any adjoint = Transposed<Any, true>(blast);
  const Any kron_op = Kron<T>({Dense<T>(matrix(2, 3)), ks_chain, Identity<T>(2)});
  const Any block_diag_op = BlockDiag<T>({identity, lowrank});
  const Any vstack_op = VStack<T>({dense, ks_chain});
  const Any hstack_op = HStack<T>({dense, lowrank});
  // 2 (V K^T B^H) + D H^T (P + S): every node kind in one 14 x 8 graph.
  const Any everything = Sum<Any, Any>(
      Scaled<Any>(T(2), Product<Any, Any>(Product<Any, Any>(vstack_op, transpose), adjoint)),
      Product<Any, Any>(Product<Any, Any>(block_diag_op, Transposed<Any, false>(hstack_op)),
                        Sum<Any, Any>(product, strassen_tile)));
  return {{"dense", dense},
          {"identity", identity},
          {"diagonal", diagonal},
          {"permutation", permutation},
          {"ks_factor", ks_factor},
          {"ks_chain", ks_chain},
          {"lowrank", lowrank},
          {"monarch", monarch},
          {"blast", blast},
          {"strassen_tile", strassen_tile},
          {"product", product},
          {"sum", sum},
          {"scaled", scaled},
          {"transpose", transpose},
          {"adjoint", adjoint},
          {"kron", kron_op},
          {"block_diag", block_diag_op},
          {"vstack", vstack_op},
          {"hstack", hstack_op},
          {"everything", everything}};
}

}  // namespace strop::testing
