#pragma once
// What several benchmark programs share (a header beside them: bench/*.cpp are programs).
#include "strop/strop.hpp"

namespace strop::bench {

// Median seconds of Y = A X on `batch` random device signals in `layout` (3 warm-up runs).
template <class T, class Operator>
double time_apply_device(const Operator& A, Index batch, Layout layout, int reps, Context& ctx) {
  DeviceMatrix<T> x(A.cols(), batch, layout, ctx), y(A.rows(), batch, layout, ctx);
  fill_random_device(x.view(), 5, ctx);
  return median_device_seconds(
      ctx, [&] { apply(A, x.view(), y.view(), T(1), T(0), ctx); }, reps, 3);
}

}  // namespace strop::bench
