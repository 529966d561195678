#pragma once
// How a Strassen-Tile layer is applied on the GPU (issue #6).
//   Steps  the paper's three steps: encode kernel, the r colour GEMMs as one strided-batched
//          cuBLAS call, decode kernel (any op, layout, batch, tile and scalar type).
//   Fused  the colour GEMMs and the decode in one kernel, after the encode kernel, for a few
//          signals (at most 4 signal tiles of t = 4, so B <= 16; op(A) = A, real values,
//          r <= 64, input features a multiple of 32): the
//          weights are read once, the colours never reach global memory, and two launches
//          replace three. A DeviceError names the reason when an application is outside it.
//   Auto   Fused where it applies and measured faster on an H100 and an H200: one signal
//          tile (B <= 4), two with encoded weights of at most 2^28 values, three or four with
//          at most 2^26 (stl_fused_preferred); Steps otherwise.
// A chain of layers (StrassenTileChain) whose layers all qualify runs the fused kernel per
// layer with the fused decode-encode (mixing) in its epilogue instead of the decode; the
// steps path mixes with one cuBLAS GEMM per layer boundary.
#include <string_view>

namespace strop {

enum class StlPath { Auto, Steps, Fused };

std::string_view to_string(StlPath path);

// The path used by this thread's GPU applications of StrassenTile (default Auto).
StlPath stl_path();
void set_stl_path(StlPath path);

// Sets the path for the lifetime of the guard (benchmarks, tests).
class StlPathGuard {
 public:
  explicit StlPathGuard(StlPath path) : previous_(stl_path()) { set_stl_path(path); }
  ~StlPathGuard() { set_stl_path(previous_); }
  StlPathGuard(const StlPathGuard&) = delete;
  StlPathGuard& operator=(const StlPathGuard&) = delete;

 private:
  StlPath previous_;
};

}  // namespace strop
