#pragma once
// How a Strassen-Tile layer is applied on the GPU (issue #6).
//   Steps  the paper's three steps: encode kernel, the r colour GEMMs as one strided-batched
//          cuBLAS call, decode kernel (any op, layout, batch, tile and scalar type).
//   Fused  the colour GEMMs and the decode in one kernel, after the encode kernel, for a few
//          signals (at most 4 signal tiles of t = 4, so B <= 16; op(A) = A, real values,
//          r <= 64, input features a multiple of 32): the
//          weights are read once, the colours never reach global memory, and two launches
//          replace three. A DeviceError names the reason when an application is outside it.
//   Auto   Fused wherever it applies (measured faster there on the H100, 1.0-1.95x, session
//          20), Steps otherwise.
// A chain of layers (StrassenTileChain) always runs the steps with its encoded activations.
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
