// apply_reduced_precision for KS factors: half/bfloat16 signals, fp32 accumulation. The
// tensor-core and cuBLAS paths read the values rounded once to the signals' type; small
// blocks (at most 8 x 8, memory-bound) keep the float values and compute in fp32.
// With tuning on, Auto measures the algorithms and the tensor-core kernel's tiles once per
// problem and caches the fastest (algorithm and tile) under the same kind of key as the
// float path.
#include <algorithm>
#include <optional>
#include <type_traits>

#include "runtime/reduced_apply.hpp"
#include "runtime/rounded_words.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/dense.hpp"
#include "strop/operators/ks_factor.hpp"
#if STROP_HAVE_CUDA
#include "operators/ks/ks_device.hpp"
#include "operators/ks/ks_mma_tile.hpp"
#include "runtime/tuner.hpp"
#endif

namespace strop {

#if STROP_HAVE_CUDA
namespace {
// The tensor-core kernels' grid holds at most 65535 signal tiles (of at least 8 signals) along
// y: larger batches go in slices of this many (whole tiles, so 16-byte aligned).
constexpr Index kMmaMaxSignals = Index(65535) * 8;

// A 16-bit choice: the algorithm, and the tensor-core kernel's tile when it runs it.
struct ReducedChoice {
  KSAlgorithm algorithm = KSAlgorithm::Auto;
  std::optional<detail::KSMmaTile> tile;
};
std::string name_of(const ReducedChoice& c) {
  std::string name(to_string(c.algorithm));
  if (c.tile) name.append(":").append(detail::to_string(*c.tile));
  return name;
}
// The choice a cached name stands for (none if it names no 16-bit path, or a tile larger than
// the device's blocks hold: a cache file written with another limit is measured again).
std::optional<ReducedChoice> parse_choice(const std::string& name) {
  const auto colon = name.find(':');
  const std::string algorithm = name.substr(0, colon);
  for (KSAlgorithm a :
       {KSAlgorithm::Fused, KSAlgorithm::StridedGemm, KSAlgorithm::Bmm, KSAlgorithm::Dense}) {
    if (algorithm != to_string(a)) continue;
    if (colon == std::string::npos) return ReducedChoice{a, std::nullopt};
    const auto tile = detail::parse_ks_mma_tile(name.substr(colon + 1));
    if (a == KSAlgorithm::Fused && tile &&
        tile->shared_bytes() <= detail::shared_memory_for_plans())
      return ReducedChoice{a, tile};
  }
  return std::nullopt;
}

// Every 16-bit path that applies, measured once per problem (pattern, op, batch, layouts,
// dtype, GPU) into scratch memory; the model's choice first, so that ties keep it.
template <class Storage>
ReducedChoice tuned_reduced_choice(const KSFactor<float>& factor, Op op, ConstView<Storage> X,
                                   MatrixView<Storage> Y, Context& ctx) {
  const KSPattern& p = factor.pattern();
  const std::string key =
      detail::ks_tuning_key(p, reduced_precision_name_v<Storage>, op, X, Y, ctx);
  // A cached choice is taken as it is: the candidates are only made for a measurement
  // (their names cost more host time than a small product takes on the device).
  if (const auto cached = tuned_choice(key))
    if (const auto choice = parse_choice(*cached)) return *choice;
  std::vector<ReducedChoice> candidates;
  const auto add = [&](ReducedChoice c) {
    if (std::none_of(candidates.begin(), candidates.end(),
                     [&](const ReducedChoice& o) { return name_of(o) == name_of(c); }))
      candidates.push_back(c);
  };
  const auto add_fused = [&] {
    if (detail::ks_small_blocks(p)) return add({KSAlgorithm::Fused, std::nullopt});
    const bool batch_contiguous = X.col_stride == 1 || X.cols == 1;
    for (const detail::KSMmaTile& t :
         detail::ks_mma_tile_candidates(op == Op::NoTrans ? p.b : p.c, p.d, X.cols,
                                        batch_contiguous, detail::shared_memory_for_plans()))
      add({KSAlgorithm::Fused, t});
  };
  // Fused stands for its tiles (the heuristic's first): never a second, tile-less entry.
  const KSAlgorithm model = ks_auto_algorithm(p, op, X, ConstView<Storage>(Y));
  if (model != KSAlgorithm::Fused) add({model, std::nullopt});
  add_fused();
  add({KSAlgorithm::StridedGemm, std::nullopt});  // in place, or through copies
  add({KSAlgorithm::Bmm, std::nullopt});
  if (factor.rows() * factor.cols() <= (Index(1) << 25)) add({KSAlgorithm::Dense, std::nullopt});
  std::optional<TempMatrix<Storage>> scratch;  // made only when measuring
  return detail::tuned_choice_by_measurement<ReducedChoice>(
      key, candidates, name_of,
      [&](ReducedChoice c) {
        if (!scratch) scratch.emplace(Y.rows, Y.cols, layout_of(Y), MemorySpace::Device, ctx);
        KSAlgorithmGuard forced(c.algorithm);
        detail::KSMmaTileGuard tile(c.tile);
        factor.apply_reduced_device(op, X, scratch->view, 1.0f, 0.0f, ctx);
      },
      ctx);
}
}  // namespace
#endif

template <class T>
template <class Storage>
void KSFactor<T>::apply_reduced_device(Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                                       float alpha, float beta, Context& ctx) const {
  static_assert(std::is_same_v<T, float>, "16-bit signals go through float factors");
#if STROP_HAVE_CUDA
  const KSPattern& p = pattern();
  KSAlgorithm algorithm = ks_algorithm();
  std::optional<detail::KSMmaTile> tile = detail::forced_ks_mma_tile();
  // The 16-bit cost model (ks_chooser.cpp, never SmallBatch), or the measured choice.
  if (algorithm == KSAlgorithm::Auto && tuning_enabled()) {
    const ReducedChoice choice = tuned_reduced_choice(*this, op, X, Y, ctx);
    algorithm = choice.algorithm;
    tile = choice.tile;
  } else if (algorithm == KSAlgorithm::Auto) {
    algorithm = ks_auto_algorithm(p, op, X, ConstView<Storage>(Y));
  }
  auto& caches = state_->device_words[std::is_same_v<Storage, half> ? 0 : 1];
  const auto rounded = [&](int which, Index count, const auto& make_floats) {
    const std::uint16_t* words = caches[which].get_or_make(
        count, ctx, [&] { return detail::rounded_words<Storage>(make_floats()); });
    return reinterpret_cast<const Storage*>(words);
  };
  // One row-major block per group g = i d + j: b x c (grouped), or c x b (for K^T).
  const auto grouped = [&](bool transposed) {
    return rounded(transposed ? 1 : 0, nnz(), [&] {
      std::vector<float> out(static_cast<std::size_t>(nnz()));
      for (Index i = 0; i < p.a; ++i)
        for (Index k = 0; k < p.b; ++k)
          for (Index l = 0; l < p.c; ++l)
            for (Index j = 0; j < p.d; ++j) {
              const Index g = i * p.d + j;
              out[transposed ? (g * p.c + l) * p.b + k : (g * p.b + k) * p.c + l] =
                  value(i, k, l, j);
            }
      return out;
    });
  };
  switch (algorithm) {
    case KSAlgorithm::Auto:
    case KSAlgorithm::Fused:
      if (detail::ks_small_blocks(p)) {  // memory-bound: fp32 arithmetic costs nothing there
        const float* w = state_->device_values.get(values().data(), nnz(), ctx);
        return detail::ks_small_blocks_apply(p, w, op, X, Y, alpha, beta, ctx);
      }
      {
        const Storage* w = grouped(op != Op::NoTrans);
        if (X.cols <= kMmaMaxSignals)
          return detail::ks_mma_apply(p, w, op, X, Y, alpha, beta, tile, ctx);
        for (Index first = 0; first < X.cols; first += kMmaMaxSignals) {
          const Index count = std::min(kMmaMaxSignals, X.cols - first);
          detail::ks_mma_apply(p, w, op, X.col_block(first, count), Y.col_block(first, count),
                               alpha, beta, tile, ctx);
        }
        return;
      }
    case KSAlgorithm::StridedGemm:
    case KSAlgorithm::Bmm:
      return detail::ks_grouped_gemm_apply(p, grouped(false), op, X, Y, alpha, beta,
                                           algorithm == KSAlgorithm::Bmm, ctx);
    case KSAlgorithm::Dense: {
      const Storage* w = rounded(2, rows() * cols(), [&] {
        const HostMatrix<float> dense = this->to_dense();
        return std::vector<float>(dense.data(), dense.data() + dense.size());
      });
      return detail::dense_apply_device(w, w, rows(), cols(), op, X, Y, alpha, beta, ctx);
    }
    case KSAlgorithm::SmallBatch:
      break;
  }
  throw DeviceError(
      "ks_factor: the small-batch kernel has no half/bfloat16 version; use Auto, Fused, "
      "StridedGemm, Bmm or Dense for 16-bit signals");
#else
  (void)op, (void)X, (void)Y, (void)alpha, (void)beta, (void)ctx;
  throw DeviceError("ks_factor: strop was built without CUDA; apply it to host data");
#endif
}

template <ReducedPrecision Storage>
void apply_reduced_precision(const KSFactor<float>& factor, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  detail::DeviceScope device_scope(X.space == MemorySpace::Device);
  if (detail::reduced_done_without_device(factor, op, X, Y, alpha, beta, ctx)) return;
  factor.apply_reduced_device(op, X, Y, alpha, beta, ctx);
}

#define STROP_INSTANTIATE(S)                                                                  \
  template void KSFactor<float>::apply_reduced_device(Op, ConstView<S>, MatrixView<S>, float, \
                                                      float, Context&) const;                 \
  template void apply_reduced_precision<S>(const KSFactor<float>&, Op, ConstView<S>,          \
                                           MatrixView<S>, float, float, Context&);
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)
#undef STROP_INSTANTIATE

}  // namespace strop
