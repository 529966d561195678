#pragma once
// The limits of the fused GPU path, shared by its eligibility (stl_steps.hpp) and its kernel
// (stl_fused.cu; this header has no Eigen, which nvcc's -Werror does not take).
#include "strop/core/scalar.hpp"

namespace strop::detail {

// The fused GPU path (StlPath::Fused, stl_fused.cu): the colour GEMMs and the decode in one
// kernel for a few signals. Its kernel keeps a warp's sums for all signal tiles of four
// output tiles in registers (hence the signal-tile limit), a block's colours and the decoder
// in shared memory (the rank limit), and reads each weight column in runs of
// kStlFusedRunTiles input tiles. With 5-8 signal tiles it measured slower than the steps
// (session 20: 0.5-0.9x at B = 32, one block per SM), so it stops at 4.
inline constexpr Index kStlFusedMaxSignalTiles = 4;
inline constexpr Index kStlFusedMaxRank = 64;
inline constexpr Index kStlFusedRunTiles = 8;

}  // namespace strop::detail
