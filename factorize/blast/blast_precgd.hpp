#pragma once
// BLAST preconditioned gradient descent: the state and the iteration (internal header).
// Notation of papers/NOTES.md: B_i (p x r) stacked in B (M x r), C_j (r x q) side by side in
// C (r x N), d_ij = D[:, i, j] at d[(i * cb + j) * r].
#include <functional>
#include <vector>

#include "strop/core/context.hpp"
#include "strop/core/device_matrix.hpp"
#include "strop/factorize/blast.hpp"

namespace strop::detail {

template <class T>
struct BlastState {
  Index rb = 1, cb = 1, rank = 0;
  HostMatrix<T> B;
  HostMatrix<T> C;
  std::vector<T> d;
};

// Called after each outer iteration with (step, relative_error, lr); false stops.
using BlastStepCallback = std::function<bool(Index, double, double)>;

// Runs options.steps outer iterations on the normalised target An from `state` (updated in
// place) on options.device: the same steps on either device (blast_precgd.cpp), only the
// linear algebra differs (blast_kernels.hpp).
template <class T>
void blast_iterate(const HostMatrix<T>& An, BlastState<T>& state,
                   const BlastFactorizeOptions& options, const BlastStepCallback& after_step,
                   Context& ctx);

// eta_t of PyTorch's LinearLR(start 1, end end_factor, total_iters = steps).
inline double blast_learning_rate(const BlastFactorizeOptions& o, Index step) {
  const double progress = o.steps > 0 ? double(std::min(step, o.steps)) / double(o.steps) : 0.0;
  return o.learning_rate * (1.0 + (o.end_factor - 1.0) * progress);
}

}  // namespace strop::detail
