#pragma once
// Internal: the skinny path's launch interface (blr_skinny.cu), kept free of the operator
// headers so that the .cu does not see Eigen. blr_skinny_cuda.cpp fills it from a plan.
#include "strop/core/context.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// The most signals (tokens) a skinny stage takes.
inline constexpr int kSkinnyMaxTokens = 16;
// A launch's column tiles (of kSkinnyMinTile columns or more) and entries: at most
// kSkinnyMaxGrid each (a grid's y and z extents).
inline constexpr long long kSkinnyMaxGrid = 65535;
inline constexpr long long kSkinnyMinTile = 128;

// Element (x, y) of entry e at data + e entry + x row + y col (values of the storage type).
struct SkinnyOperand {
  const void* data = nullptr;
  long long entry = 0, row = 0, col = 0;
};

// One stage of a plan for a few tokens: for every entry e < entries,
//   C_e(i, j) = alpha sum_{p < depth} S_e(i, p) W_e(p, j) + beta C_e(i, j),
// i < tokens, j < columns, with W's rows contiguous (w.col is 1) so that a warp reads them
// in wide coalesced loads. `c.data` is written (the plan's intermediate or Y).
// With coupling_depth > 0 the stage computes its activations itself from the small product
// that would have written them (BLAST's coupling stage, folded):
//   S_e(i, p) = sum_{q < coupling_depth} G_p(q, e) Z_p(i, q),
// G = `coupling` (the couplings of rank index p) and Z = `coupled` (what they mix); `s` is
// then unused.
struct SkinnyStage {
  SkinnyOperand s, w, c, coupling, coupled;
  long long entries = 0, columns = 0, depth = 0;
  int tokens = 0, coupling_depth = 0;
  float alpha = 1, beta = 0;
};

// Launches one stage for Storage (float, half, bfloat16) values, fp32 accumulation, the result
// rounded once. Each launch lets the next kernel of the stream start early (programmatic
// dependent launch) and is itself launched so: it reads its weights before it waits for the
// previous kernel, so one stage's weight reads overlap the previous stage.
template <class Storage>
void launch_blr_skinny(const SkinnyStage& stage, Context& ctx);

}  // namespace strop::detail
