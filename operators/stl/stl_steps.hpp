#pragma once
// One application of a Strassen-Tile operator, op(A) X, as the paper's three steps
// (internal header shared by the CPU path and the GPU path):
//   1. encode: every t x t tile of the input (t signals x t input features) becomes r
//      colours, X̂^(p) (signal tiles x input tiles);
//   2. colour GEMMs: Ŷ^(p) = X̂^(p) op_w(Ŵ^(p)), op_w = identity for A, transpose for A^T,
//      conjugate transpose for A^H (Ŵ^(p) is input tiles x output tiles for A);
//   3. decode: every (signal tile, output tile) pair's r colours become a t x t tile.
// A applies (encode E_X, decode D); its adjoint applies (encode D, decode E_X), so one
// implementation serves all three ops.
#include <Eigen/Core>

#include "strop/core/op.hpp"
#include "strop/core/scalar.hpp"
#include "strop/operators/stl_encoders.hpp"

namespace strop::detail {

struct StlSteps {
  Index tile = 0;
  Index rank = 0;
  Index signal_tiles = 0;  // ceil(B / t): a final partial tile is padded with zero signals
  Index in_tiles = 0;      // feature tiles of the input
  Index out_tiles = 0;     // feature tiles of the output
  Op weight_op = Op::NoTrans;
  const Eigen::MatrixXd* encoder = nullptr;  // r x t^2, input tile entry i + t * feature
  const Eigen::MatrixXd* decoder = nullptr;  // r x t^2, output tile entry i + t * feature
  // True when the encoder/decoder roles are swapped (A^T, A^H).
  bool adjoint_roles() const { return weight_op != Op::NoTrans; }
};

inline StlSteps stl_steps(const stl::Encoders& enc, Index rows, Index cols, Op op, Index batch) {
  StlSteps s;
  s.tile = enc.tile;
  s.rank = enc.rank();
  s.signal_tiles = (batch + s.tile - 1) / s.tile;
  const bool forward = op == Op::NoTrans;
  s.in_tiles = (forward ? cols : rows) / s.tile;
  s.out_tiles = (forward ? rows : cols) / s.tile;
  s.weight_op = op;
  s.encoder = forward ? &enc.encode_signal : &enc.decode;
  s.decoder = forward ? &enc.decode : &enc.encode_signal;
  return s;
}

// Between two stages of a chain, the decode of one and the encode of the next fuse into one
// r_next x r mixing of each pair's colours (the paper's fused decode-encode, E_X D^T):
// x̂_next = encoder_next (decoder^T ŷ).
inline Eigen::MatrixXd stl_mixing(const StlSteps& from, const StlSteps& to) {
  return *to.encoder * from.decoder->transpose();
}

}  // namespace strop::detail
