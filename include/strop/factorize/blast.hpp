#pragma once
// BLAST factorization by preconditioned gradient descent (papers/NOTES.md, paper 004 §3,
// "The exact BLAST PrecGD"): normalise A by its standard deviation, start from small
// random U, V and normal diagonals, then each step updates the U factors, the V factors
// and the diagonals in turn, each with its gradient preconditioned by (Gram + eps I)^{-1},
// eps = delta * ||A - Â||_F, and a learning rate decaying linearly.
//
// Mapping to the notes' names: B_i = U_i (Blast::left_factor), C_j = V_j
// (Blast::right_factor), D[:, i, j] = s_{i,j} (Blast::diagonal): our Blast is in y = A x
// form, so no transposes are involved. Rectangular grids are allowed.
//
// Device::cuda runs the same steps with cuBLAS (strided-batched GEMMs) and cuSOLVER (batched
// Cholesky): from the same seed it follows the CPU's trajectory up to rounding.
#include <cstdint>
#include <functional>
#include <vector>

#include "strop/factorize/report.hpp"
#include "strop/operators/blast.hpp"

namespace strop {

struct BlastProgress {
  Index step = 0;             // 0-based outer iteration just finished
  double relative_error = 0;  // ||A - Â||_F / ||A||_F after it
  double learning_rate = 0;   // the rate that step used
};

struct BlastFactorizeOptions {
  Index steps = 300;           // outer iterations T
  double delta = 1.0;          // eps = delta * ||A - Â||_F (normalised A)
  double learning_rate = 1.0;  // eta_0
  double end_factor = 0.01;    // eta_t decays linearly from eta_0 to end_factor * eta_0
  std::uint64_t seed = 0;
  // Called after every outer iteration; return false to stop early.
  std::function<bool(const BlastProgress&)> progress = {};
  bool compute_error = true;
  Device device = Device::cpu;
};

template <class T>
struct BlastFactorization {
  Blast<T> blast;
  FactorReport report;
  std::vector<double> history;  // relative error after each outer iteration
};

// ShapeError when the grid does not divide A, rank < 1, steps < 0, delta or end_factor is
// negative or not finite, or learning_rate is not finite and > 0; NumericalError on NaN/Inf, when
// the iteration diverges or a preconditioner is not positive definite (delta = 0 with
// rank-deficient factors); DeviceError for Device::cuda without a CUDA build or device.
template <class T>
BlastFactorization<T> factorize_blast(const HostMatrix<T>& A, Index row_blocks, Index col_blocks,
                                      Index rank, const BlastFactorizeOptions& options = {},
                                      Context& ctx = default_context());

}  // namespace strop
