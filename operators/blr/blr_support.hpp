#pragma once
// Pieces shared by the block low-rank leaves (LowRank, Monarch, Blast) on the host.
#include <Eigen/Core>
#include <cmath>
#include <random>
#include <vector>

#include "runtime/host_gemm.hpp"
#include "strop/core/op.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// body(i) for i in [0, count). The blocks are independent and usually small, so threads
// go to the block loop (Eigen does not start its own threads inside a parallel region);
// below `min_parallel_work` multiply-adds in all, waking threads costs more than it saves.
inline constexpr double min_parallel_work = 1 << 15;
template <class Body>
void parallel_for(Index count, double work, const Body& body) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count > 1 && work >= min_parallel_work)
#else
  (void)work;
#endif
  for (Index i = 0; i < count; ++i)
    body(i);
}

// `count` i.i.d. normal values of standard deviation `scale` (complex: circular normal).
template <class T>
std::vector<T> random_normal(Index count, double scale, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  std::vector<T> values(static_cast<std::size_t>(count));
  for (T& v : values) {
    if constexpr (is_complex_v<T>) {
      const double s = scale / std::sqrt(2.0);
      const double re = normal(rng);
      v = T(RealOf<T>(s * re), RealOf<T>(s * normal(rng)));
    } else {
      v = T(scale * normal(rng));
    }
  }
  return values;
}

}  // namespace strop::detail
