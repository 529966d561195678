#pragma once
// Random Strassen-Tile layers for the tests: learned-style encoders (any tile and rank, not
// the exact Strassen ones) and random encoded weights, so that a layer mixes the signals of a
// tile.
#include <Eigen/Core>
#include <vector>

#include "reference.hpp"
#include "strop/strop.hpp"

namespace strop::testing {

// Encoders of tile t and rank r with entries uniform in [-1, 1] (Eigen's Random).
inline stl::Encoders random_encoders(Index t, Index r) {
  stl::Encoders enc;
  enc.tile = t;
  enc.encode_signal = Eigen::MatrixXd::Random(r, t * t);
  enc.encode_weight = Eigen::MatrixXd::Random(r, t * t);
  enc.decode = Eigen::MatrixXd::Random(r, t * t);
  return enc;
}

// A rows x cols layer of random_encoders(t, r) and random_matrix encoded weights.
template <class T>
StrassenTile<T> random_strassen_tile(Index t, Index r, Index rows, Index cols) {
  stl::Encoders enc = random_encoders(t, r);
  const HostMatrix<T> weights = random_matrix<T>(r * (rows / t) * (cols / t), 1);
  return StrassenTile<T>(std::move(enc), rows, cols,
                         std::vector<T>(weights.data(), weights.data() + weights.size()));
}

}  // namespace strop::testing
