// KSFactor on the GPU: picks an algorithm and hands the cached device values to it.
#include <algorithm>
#include <optional>

#include "operators/ks/ks_device.hpp"
#include "runtime/tuner.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/dense.hpp"
#include "strop/operators/ks_factor.hpp"

namespace strop {

#if STROP_HAVE_CUDA
// Auto with tuning on: every algorithm that applies measured once per problem (pattern,
// op, batch, layouts, dtype, GPU) into scratch memory, the fastest cached. Dense only while
// the materialised matrix is small (it is made and uploaded once per factor).
template <class T>
KSAlgorithm KSFactor<T>::tuned_algorithm(Op op, ConstView<T> X, MatrixView<T> Y,
                                         Context& ctx) const {
  const KSPattern& p = pattern();
  const std::string key = detail::ks_tuning_key(p, ScalarTraits<T>::name, op, X, Y, ctx);
  // The model's choice first: ties keep it.
  std::vector<KSAlgorithm> candidates = {ks_auto_algorithm(p, op, X, ConstView<T>(Y))};
  auto add = [&](KSAlgorithm a) {
    if (std::find(candidates.begin(), candidates.end(), a) == candidates.end())
      candidates.push_back(a);
  };
  add(KSAlgorithm::Fused);
  add(KSAlgorithm::SmallBatch);
  add(KSAlgorithm::Bmm);
  add(KSAlgorithm::StridedGemm);  // in place, or through batch-contiguous copies
  if (rows() * cols() <= (Index(1) << 24)) add(KSAlgorithm::Dense);
  std::optional<TempMatrix<T>> scratch;  // made only when measuring
  return detail::tuned_choice_by_measurement<KSAlgorithm>(
      key, candidates, [](KSAlgorithm a) { return to_string(a); },
      [&](KSAlgorithm a) {
        if (!scratch) scratch.emplace(Y.rows, Y.cols, layout_of(Y), MemorySpace::Device, ctx);
        KSAlgorithmGuard forced(a);
        apply_device(op, X, scratch->view, T(1), T(0), ctx);
      },
      ctx);
}

template <class T>
void KSFactor<T>::apply_device(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                               Context& ctx) const {
  const KSPattern& p = pattern();
  KSAlgorithm algorithm = ks_algorithm();
  if (algorithm == KSAlgorithm::Auto)
    algorithm = tuning_enabled() ? tuned_algorithm(op, X, Y, ctx)
                                 : ks_auto_algorithm(p, op, X, ConstView<T>(Y));
  const State& s = *state_;
  switch (algorithm) {
    case KSAlgorithm::Auto:
    case KSAlgorithm::Fused: {
      const T* w = s.device_values.get(s.values.data(), nnz(), ctx);
      return detail::ks_fused_apply(p, w, op, X, Y, alpha, beta, ctx);
    }
    case KSAlgorithm::StridedGemm:
    case KSAlgorithm::Bmm:
    case KSAlgorithm::SmallBatch: {
      const T* w = s.device_grouped.get_or_make(nnz(), ctx, [&] {
        // (a, b, c, d) -> (a, d, b, c): each group's b x c block contiguous, row-major.
        std::vector<T> grouped(s.values.size());
        for (Index i = 0; i < p.a; ++i)
          for (Index k = 0; k < p.b; ++k)
            for (Index l = 0; l < p.c; ++l)
              for (Index j = 0; j < p.d; ++j)
                grouped[((i * p.d + j) * p.b + k) * p.c + l] = value(i, k, l, j);
        return grouped;
      });
      if (algorithm == KSAlgorithm::SmallBatch)
        return detail::ks_small_batch_apply(p, w, op, X, Y, alpha, beta, ctx);
      return detail::ks_grouped_gemm_apply(p, w, op, X, Y, alpha, beta,
                                           algorithm == KSAlgorithm::Bmm, ctx);
    }
    case KSAlgorithm::Dense: {
      const auto materialise = [&] {
        const HostMatrix<T> dense = this->to_dense();
        return std::vector<T>(dense.data(), dense.data() + dense.size());
      };
      const T* w = s.device_dense.get_or_make(rows() * cols(), ctx, materialise);
      const T* w_conj = nullptr;
      if (is_complex_v<T> && op == Op::Adjoint && Y.row_stride != 1) {
        w_conj = s.device_dense.get_or_make(rows() * cols(), ctx, materialise, true);
      }
      return detail::dense_apply_device(w, w_conj, rows(), cols(), op, X, Y, alpha, beta, ctx);
    }
  }
}
#else
template <class T>
void KSFactor<T>::apply_device(Op, ConstView<T>, MatrixView<T>, T, T, Context&) const {
  throw DeviceError("ks_factor: GPU application requested but strop was built without CUDA");
}
#endif

#define STROP_INSTANTIATE(T)                                                                       \
  template void KSFactor<T>::apply_device(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, \
                                          Context& ctx) const;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
#undef STROP_INSTANTIATE
#if STROP_HAVE_CUDA
#define STROP_INSTANTIATE(T)                                                                   \
  template KSAlgorithm KSFactor<T>::tuned_algorithm(Op, ConstView<T>, MatrixView<T>, Context&) \
      const;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
#endif

}  // namespace strop
