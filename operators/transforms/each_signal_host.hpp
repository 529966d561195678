#pragma once
// Internal: the loop the host transforms share. Each signal (column of X) is copied into a
// per-thread buffer of n values (cache-resident), transformed in place, and written to Y as
// alpha * result + beta * Y (Y not read when beta = 0); signals are spread over the OpenMP
// threads when the batch is large enough to pay for them.
#include <vector>

#include "strop/core/view.hpp"

namespace strop::detail {

// make_scratch() runs once per thread; transform(buffer, scratch) once per signal.
template <class T, class MakeScratch, class Transform>
void transform_each_signal(ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                           MakeScratch make_scratch, Transform transform) {
  const Index n = X.rows;
  // A parallel region costs a few microseconds: worth it from about a dozen signals of 256.
  [[maybe_unused]] const bool parallel = X.cols > 1 && double(n) * double(X.cols) >= 4096;
#ifdef _OPENMP
#pragma omp parallel if (parallel)
#endif
  {
    std::vector<T> v(static_cast<std::size_t>(n));
    auto scratch = make_scratch();
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (Index c = 0; c < X.cols; ++c) {
      for (Index i = 0; i < n; ++i)
        v[std::size_t(i)] = *X.ptr(i, c);
      transform(v, scratch);
      for (Index i = 0; i < n; ++i) {
        T& y = *Y.ptr(i, c);
        y = beta == T(0) ? alpha * v[std::size_t(i)] : alpha * v[std::size_t(i)] + beta * y;
      }
    }
  }
}

}  // namespace strop::detail
