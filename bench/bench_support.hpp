#pragma once
// What several benchmark programs share (a header beside them: bench/*.cpp are programs).
#include "strop/strop.hpp"

namespace strop::bench {

// Median seconds of call(X, Y) on `batch` random device signals of `in` values in `layout`
// (X) into signals of `out` values (Y), of storage type T (3 warm-up runs).
template <class T, class Call>
double time_device_call(Index in, Index out, Index batch, Layout layout, int reps, Context& ctx,
                        Call call) {
  DeviceMatrix<T> x(in, batch, layout, ctx), y(out, batch, layout, ctx);
  fill_random_device(x.view(), 5, ctx);
  return median_device_seconds(
      ctx, [&] { call(ConstView<T>(x.view()), y.view()); }, reps, 3);
}

// Median seconds of Y = A X on `batch` random device signals in `layout` (3 warm-up runs).
template <class T, class Operator>
double time_apply_device(const Operator& A, Index batch, Layout layout, int reps, Context& ctx) {
  return time_device_call<T>(
      A.cols(), A.rows(), batch, layout, reps, ctx,
      [&](ConstView<T> x, MatrixView<T> y) { apply(A, x, y, T(1), T(0), ctx); });
}

}  // namespace strop::bench
