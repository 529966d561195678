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

#include "operators/stl/stl_fused_limits.hpp"
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

// Why the fused path cannot run these steps, or nullptr when it can.
inline const char* stl_fused_refusal(const StlSteps& s, bool complex_values) {
  if (complex_values) return "complex values (the steps handle them)";
  if (s.tile != 4) return "a tile size other than t = 4";
  if (s.weight_op != Op::NoTrans) return "op(A) = A^T or A^H (the kernel reads A's weight columns)";
  if (s.signal_tiles > kStlFusedMaxSignalTiles) return "more than 4 signal tiles (B > 16)";
  if (s.rank > kStlFusedMaxRank) return "a rank above 64";
  if (s.in_tiles % kStlFusedRunTiles != 0) return "input features not a multiple of 32";
  return nullptr;
}

// Auto's choice among the applications the fused path takes, from stl_bench's -small.csv on
// an H100 and an H200 (session 20). With one signal tile (B <= 4) the fused kernel won
// everywhere (1.1-2x). With more it wins while the encoded weights are small (launches
// dominate) and loses up to 15 % on the H200 once they are large, where cuBLAS streams them
// faster: this rule stays within 11 % (single layers) and 10 % (chains) of the faster path on
// both GPUs in the worst case, 0.6 % on average.
inline bool stl_fused_preferred(const StlSteps& s) {
  if (s.signal_tiles <= 1) return true;
  const Index weights = s.rank * s.in_tiles * s.out_tiles;  // values of Ŵ, r (N/t)(M/t)
  return weights <= (s.signal_tiles == 2 ? Index(1) << 28 : Index(1) << 26);
}

// Between two stages of a chain, the decode of one and the encode of the next fuse into one
// r_next x r mixing of each pair's colours (the paper's fused decode-encode, E_X D^T):
// x̂_next = encoder_next (decoder^T ŷ).
inline Eigen::MatrixXd stl_mixing(const StlSteps& from, const StlSteps& to) {
  return *to.encoder * from.decoder->transpose();
}

}  // namespace strop::detail
