// The Kron-matmul engine's entry: validation, the plan, the work space, and the sequence of
// launches (operators/kron/kron_kernels.cu) or the shuffle baseline (kron_shuffle_cublas.cpp).
#include <limits>
#include <optional>

#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "runtime/tuner.hpp"
#include "strop/core/buffer.hpp"
#include "strop/expr/elementwise.hpp"
#include "strop/operators/kron_matmul.hpp"

namespace strop {
namespace {

thread_local KronAlgorithm current_algorithm = KronAlgorithm::Auto;

template <class T>
std::vector<detail::KronShape> validated_shapes(std::span<const KronFactorRef<T>> factors) {
  require<ShapeError>(!factors.empty(), "kron_matmul: needs at least one factor");
  std::vector<detail::KronShape> shapes;
  Index in = 1, out = 1;
  const Index limit = Index(1) << 40;
  for (std::size_t f = 0; f < factors.size(); ++f) {
    const KronFactorRef<T>& g = factors[f];
    require<ShapeError>(g.P >= 1 && g.Q >= 1, "kron_matmul: factor ", f, " is ", g.Q, "x", g.P,
                        "; factors need at least one row and one column");
    require<ShapeError>(g.data != nullptr || g.P == g.Q, "kron_matmul: factor ", f,
                        " has no values but is not square (", g.Q, "x", g.P,
                        "); only the identity may omit its values");
    // Checked products: a wrapped one could pass the limit (and divide by zero in the planner).
    require<ShapeError>(!__builtin_mul_overflow(in, g.P, &in) &&
                            !__builtin_mul_overflow(out, g.Q, &out) && in <= limit && out <= limit,
                        "kron_matmul: the product of the factors "
                        "exceeds 2^40 rows or columns at factor ",
                        f);
    shapes.push_back({g.P, g.Q});
  }
  // The intermediates mix inputs and outputs (after factors n-1..f: prod_{g<f} P_g times
  // prod_{g>=f} Q_g), so they may exceed both X and Y; the planner sizes buffers by them.
  for (std::size_t f = 1; f < shapes.size(); ++f) {
    Index K = 1;
    bool fits = true;
    for (std::size_t g = 0; g < shapes.size() && fits; ++g)
      fits = !__builtin_mul_overflow(K, g < f ? shapes[g].P : shapes[g].Q, &K) && K <= limit;
    require<ShapeError>(fits, "kron_matmul: the intermediate after applying factors ",
                        shapes.size() - 1, "..", f, " exceeds 2^40 rows");
  }
  return shapes;
}

template <class T, class F>
void check_views(std::span<const detail::KronShape> shapes, ConstView<T> X, MatrixView<T> Y,
                 F alpha, F beta, const void* workspace, std::size_t workspace_bytes) {
  Index in = 1, out = 1;
  for (const auto& s : shapes) {
    in *= s.P;
    out *= s.Q;
  }
  require<ShapeError>(X.rows == in && Y.rows == out && X.cols == Y.cols, "kron_matmul: the ", out,
                      "x", in, " product maps ", in, " x B to ", out, " x B, got X ", X.rows, "x",
                      X.cols, " and Y ", Y.rows, "x", Y.cols);
  require<DeviceError>(X.space == MemorySpace::Device && Y.space == MemorySpace::Device,
                       "kron_matmul: X and Y must be device views (to_device)");
  check_signal_strides("kron_matmul", X, Y);
  require<ShapeError>(!may_overlap(X, ConstView<T>(Y)), "kron_matmul: Y overlaps X");
  // Intermediates go to a caller's work space while X is still read and before Y is
  // complete: memory shared with either would corrupt the result.
  if (workspace != nullptr && workspace_bytes > 0) {
    const MatrixView<const char> ws{static_cast<const char*>(workspace),
                                    1,
                                    static_cast<Index>(workspace_bytes),
                                    1,
                                    1,
                                    MemorySpace::Device};
    require<ShapeError>(!may_overlap(ws, X) && !may_overlap(ws, ConstView<T>(Y)),
                        "kron_matmul: the work space (", workspace_bytes,
                        " bytes) overlaps X or Y");
  }
  require<NumericalError>(is_finite(alpha) && is_finite(beta),
                          "kron_matmul: alpha and beta must be finite");
}

// detail::device_convert where it exists (the 16-bit path runs only with CUDA).
template <class From, class To>
void convert(ConstView<From> X, float beta, MatrixView<To> Y, Context& ctx) {
#if STROP_HAVE_CUDA
  detail::device_convert(X, beta, Y, ctx);
#else
  (void)X, (void)beta, (void)Y, (void)ctx;
  throw DeviceError("kron_matmul: 16-bit signals need a CUDA build");
#endif
}

// prod P_f x prod Q_f: the values of a run of factors merged into one GEMM operand.
template <class T>
Index block_elements(std::span<const KronFactorRef<T>> group) {
  Index P = 1, Q = 1;
  for (const auto& g : group) {
    P *= g.P;
    Q *= g.Q;
  }
  return P * Q;
}

// `from` copied into the packed `to` (16-bit data through float: exact both ways).
template <class T>
void copy_view(ConstView<T> from, MatrixView<T> to, Context& ctx) {
  if constexpr (is_reduced_precision_v<T>) {
    TempMatrix<float> tmp(from.rows, from.cols, layout_of(to), MemorySpace::Device, ctx);
    convert(from, 0.0f, tmp.view, ctx);
    convert(ConstView<float>(tmp.view), 0.0f, to, ctx);
  } else {
    detail::axpby(T(1), from, T(0), to, false, ctx);
  }
}

// Y = Z + beta Y.
template <class T, class F>
void add_into(ConstView<T> Z, F beta, MatrixView<T> Y, Context& ctx) {
  if constexpr (is_reduced_precision_v<T>) {
    TempMatrix<float> tmp(Z.rows, Z.cols, layout_of(Y), MemorySpace::Device, ctx);
    convert(Z, 0.0f, tmp.view, ctx);
    convert(ConstView<float>(tmp.view), beta, Y, ctx);
  } else {
    detail::axpby(T(1), Z, beta, Y, false, ctx);
  }
}

// The plan's passes, intermediates ping-ponging through `buffers`. `refs` are the factors
// for our own kernels (float factors on the 16-bit path, whose own kernels are the pair and
// triple passes),
// `gemm` the factors as cuBLAS operands (for the GEMM passes).
template <class T, class F>
void run_plan(const detail::KronPlan& plan, std::span<const detail::KronShape> shapes,
              std::span<const KronFactorRef<F>> refs,
              const std::vector<detail::KronGemmFactor<T>>& gemm, ConstView<T> X, MatrixView<T> Y,
              F alpha, F beta, T* const* buffers, Context& ctx) {
  const Layout layout = layout_of(Y);
  const Index B = X.cols;
  ConstView<T> current = X;
  int in_buffer = -1;  // the buffer holding `current` (-1: X itself)
  std::optional<TempMatrix<T>> staged_x, staged_y;
  const int m = int(plan.passes.size());
  for (int i = 0; i < m; ++i) {
    const detail::KronPass pass = plan.passes[i];
    const bool last = i + 1 == m;
    const int out_buffer = in_buffer == 0 ? 1 : 0;
    MatrixView<T> next =
        last ? Y : make_view(buffers[out_buffer], plan.extents[i], B, layout, MemorySpace::Device);
    const auto group = refs.subspan(pass.lo, pass.hi - pass.lo + 1);
    // 16-bit plans hold GEMM passes and fused passes (pairs of 32 x 32 factors, triples of 16 x
    // 16) only (plan_kron); the fused passes read and write 16 bytes at a time, and their
    // launchers refuse a group they cannot run.
    const bool fused16 = is_reduced_precision_v<T> && pass.kind != detail::KronPassKind::Gemm;
    if (pass.kind == detail::KronPassKind::Gemm || fused16) {
      // cuBLAS describes packed operands only, the fused kernels aligned packed ones: other X
      // or Y go through a packed copy.
      auto usable = [&](const auto& v) {
        return fused16 ? detail::kron_pair16_aligned(v) : detail::kron_packed(v, layout);
      };
      if (!usable(current)) {
        staged_x.emplace(current.rows, B, layout, MemorySpace::Device, ctx);
        copy_view(current, staged_x->view, ctx);
        current = staged_x->view;
      }
      const bool stage_y = last && !usable(next);
      if (stage_y) {
        staged_y.emplace(next.rows, B, layout, MemorySpace::Device, ctx);
        next = staged_y->view;
      }
      const F pass_alpha = last ? alpha : F(1), pass_beta = last && !stage_y ? beta : F(0);
      if constexpr (is_reduced_precision_v<T>) {
        if (fused16 && group.size() == 3)
          detail::kron_fused_triple16(group, current, next, pass_alpha, pass_beta, last, ctx);
        else if (fused16)
          detail::kron_fused_pair16(group, current, next, pass_alpha, pass_beta, last, ctx);
      }
      if (!fused16) {
        Index P = 1, Q = 1;  // of the factor or of the merged run
        for (int f = pass.lo; f <= pass.hi; ++f) {
          P *= shapes[f].P;
          Q *= shapes[f].Q;
        }
        detail::kron_gemm_step<T, F>(gemm[pass.hi], P, Q, current.data, next.data, current.rows, B,
                                     layout, pass_alpha, pass_beta, ctx);
      }
      if (stage_y) add_into(ConstView<T>(next), beta, Y, ctx);
    } else if constexpr (!is_reduced_precision_v<T>) {
      if (pass.kind == detail::KronPassKind::Sliced)
        detail::kron_step(refs[pass.hi], current, next, alpha, beta, last, ctx);
      else
        detail::kron_fused(group, current, next, alpha, beta, last, ctx);
    }
    current = next;
    in_buffer = last ? -1 : out_buffer;
  }
}

thread_local bool measuring = false;  // inside tuned_algorithm's measurements

// Auto with tuning on: the time model's plan and the fixed algorithms measured once per
// problem (into scratch memory, so Y is untouched), the fastest kept in the tuning cache.
// T: the signals' type; F: the factors' (float for 16-bit signals, whose only other plan is
// one GEMM per factor).
template <class T, class F>
KronAlgorithm tuned_algorithm(std::span<const KronFactorRef<F>> factors,
                              std::span<const detail::KronShape> shapes, ConstView<T> X,
                              MatrixView<T> Y, Context& ctx) {
  std::string_view type_name;
  if constexpr (is_reduced_precision_v<T>) {
    type_name = reduced_precision_name_v<T>;
  } else {
    type_name = ScalarTraits<T>::name;
  }
  std::string key = detail::concat("kron|", device_name(ctx.device()), "|", type_name, "|",
                                   to_string(layout_of(Y)), "|B=", X.cols, "|");
  for (std::size_t f = 0; f < shapes.size(); ++f)
    key += detail::concat(f == 0 ? "" : ",", shapes[f].Q, "x", shapes[f].P);
  const std::vector<KronAlgorithm> candidates =
      is_reduced_precision_v<T>
          ? std::vector<KronAlgorithm>{KronAlgorithm::Auto, KronAlgorithm::Gemm}
          : std::vector<KronAlgorithm>{KronAlgorithm::Auto, KronAlgorithm::Fused,
                                       KronAlgorithm::Sliced, KronAlgorithm::Gemm};
  std::optional<TempMatrix<T>> scratch;  // made only when measuring
  measuring = true;
  try {
    const KronAlgorithm best = detail::tuned_choice_by_measurement<KronAlgorithm>(
        key, candidates, [](KronAlgorithm a) { return to_string(a); },
        [&](KronAlgorithm a) {
          if (!scratch) scratch.emplace(Y.rows, Y.cols, layout_of(Y), MemorySpace::Device, ctx);
          kron_matmul<T>(factors, X, scratch->view, F(1), F(0), ctx, nullptr, 0, a);
        },
        ctx);
    measuring = false;
    return best;
  } catch (...) {
    measuring = false;
    throw;
  }
}

// The plan a call runs: `algorithm`'s, or for Auto with tuning on the tuned choice, unless
// that needs more than the caller's work space (sized for Auto's plan by
// kron_matmul_workspace_bytes): then Auto's plan stays. Updates `algorithm`.
template <class T, class F>
detail::KronPlan plan_for_call(std::span<const KronFactorRef<F>> factors,
                               std::span<const detail::KronShape> shapes, ConstView<T> X,
                               MatrixView<T> Y, Context& ctx, const void* workspace,
                               std::size_t workspace_bytes, KronAlgorithm& algorithm) {
  const Layout layout = layout_of(Y);
  const std::size_t shared = detail::shared_memory_for_plans();
  detail::KronPlan plan =
      detail::plan_kron(shapes, X.cols, layout, algorithm, sizeof(T), is_complex_v<T>, shared);
  if (algorithm == KronAlgorithm::Auto && tuning_enabled() && !measuring) {
    const KronAlgorithm tuned = tuned_algorithm<T, F>(factors, shapes, X, Y, ctx);
    detail::KronPlan tuned_plan =
        detail::plan_kron(shapes, X.cols, layout, tuned, sizeof(T), is_complex_v<T>, shared);
    if (workspace == nullptr || tuned_plan.workspace_bytes <= workspace_bytes) {
      algorithm = tuned;
      plan = std::move(tuned_plan);
    }
  }
  return plan;
}

}  // namespace

std::string_view to_string(KronAlgorithm algorithm) {
  switch (algorithm) {
    case KronAlgorithm::Auto:
      return "auto";
    case KronAlgorithm::Fused:
      return "fused";
    case KronAlgorithm::Sliced:
      return "sliced";
    case KronAlgorithm::Shuffle:
      return "shuffle";
    case KronAlgorithm::Gemm:
      return "gemm";
  }
  return "?";
}

KronAlgorithm kron_algorithm() {
  return current_algorithm;
}
void set_kron_algorithm(KronAlgorithm algorithm) {
  current_algorithm = algorithm;
}

template <class T>
std::size_t kron_matmul_workspace_bytes(std::span<const KronFactorRef<T>> factors, Index batch,
                                        Layout layout, KronAlgorithm algorithm) {
  require<ShapeError>(batch >= 0, "kron_matmul_workspace_bytes: negative batch ", batch);
  const auto shapes = validated_shapes(factors);
  return detail::plan_kron(shapes, batch, layout, algorithm, sizeof(T), is_complex_v<T>,
                           detail::shared_memory_for_plans())
      .workspace_bytes;
}

template <class T>
void kron_matmul(std::span<const KronFactorRef<T>> factors, ConstView<T> X, MatrixView<T> Y,
                 T alpha, T beta, Context& ctx, void* workspace, std::size_t workspace_bytes,
                 KronAlgorithm algorithm) {
  const auto shapes = validated_shapes(factors);
  check_views(shapes, X, Y, alpha, beta, workspace, workspace_bytes);
  if (Y.rows == 0 || Y.cols == 0) return;

  const detail::KronPlan plan =
      plan_for_call<T, T>(factors, shapes, X, Y, ctx, workspace, workspace_bytes, algorithm);
  Buffer<char> owned;
  if (workspace == nullptr && plan.workspace_bytes > 0) {
    owned = Buffer<char>(Index(plan.workspace_bytes), MemorySpace::Device, ctx);
    workspace = owned.data();
    workspace_bytes = plan.workspace_bytes;
  }
  require<ShapeError>(workspace_bytes >= plan.workspace_bytes, "kron_matmul: work space of ",
                      workspace_bytes, " bytes, ", plan.workspace_bytes, " needed (",
                      to_string(algorithm), ", batch ", X.cols, ")");

  if (algorithm == KronAlgorithm::Shuffle)
    return detail::kron_shuffle(factors, X, Y, alpha, beta, workspace, workspace_bytes, ctx);

  detail::KronCarver carve{static_cast<char*>(workspace),
                           static_cast<char*>(workspace) + workspace_bytes};
  T* buffers[2] = {nullptr, nullptr};
  for (int i = 0; i < plan.buffers; ++i)
    buffers[i] = carve.take<T>(plan.buffer_rows * X.cols);
  std::vector<detail::KronGemmFactor<T>> gemm(factors.size());
  for (const detail::KronPass& pass : plan.passes)
    if (pass.kind == detail::KronPassKind::Gemm) {
      const auto group = factors.subspan(pass.lo, pass.hi - pass.lo + 1);
      gemm[pass.hi] = detail::kron_gemm_factor(group, carve.take<T>(block_elements(group)), ctx);
    }
  run_plan<T, T>(plan, shapes, factors, gemm, X, Y, alpha, beta, buffers, ctx);
}

template <ReducedPrecision Storage>
std::size_t kron_matmul_workspace_bytes(std::span<const KronFactorRef<float>> factors, Index batch,
                                        Layout layout, KronAlgorithm algorithm) {
  require<ShapeError>(batch >= 0, "kron_matmul_workspace_bytes: negative batch ", batch);
  const auto shapes = validated_shapes(factors);
  return detail::plan_kron(shapes, batch, layout, algorithm, sizeof(Storage), false,
                           detail::shared_memory_for_plans())
      .workspace_bytes;
}

template <ReducedPrecision Storage>
void kron_matmul(std::span<const KronFactorRef<float>> factors, ConstView<Storage> X,
                 MatrixView<Storage> Y, float alpha, float beta, Context& ctx, void* workspace,
                 std::size_t workspace_bytes, KronAlgorithm algorithm) {
  const auto shapes = validated_shapes(factors);
  check_views(shapes, X, Y, alpha, beta, workspace, workspace_bytes);
  if (Y.rows == 0 || Y.cols == 0) return;
#if STROP_HAVE_CUDA
  const detail::KronPlan plan = plan_for_call<Storage, float>(factors, shapes, X, Y, ctx, workspace,
                                                              workspace_bytes, algorithm);
  Buffer<char> owned;
  if (workspace == nullptr) {
    owned = Buffer<char>(Index(plan.workspace_bytes), MemorySpace::Device, ctx);
    workspace = owned.data();
    workspace_bytes = plan.workspace_bytes;
  }
  require<ShapeError>(workspace_bytes >= plan.workspace_bytes, "kron_matmul: work space of ",
                      workspace_bytes, " bytes, ", plan.workspace_bytes, " needed (16-bit, batch ",
                      X.cols, ")");
  detail::KronCarver carve{static_cast<char*>(workspace),
                           static_cast<char*>(workspace) + workspace_bytes};
  Storage* buffers[2] = {nullptr, nullptr};
  for (int i = 0; i < plan.buffers; ++i)
    buffers[i] = carve.take<Storage>(plan.buffer_rows * X.cols);
  // Tensor cores read both operands in 16 bits: each pass's factor (or merged block) made in
  // float (column-major, prod Q x prod P), then rounded once.
  std::vector<detail::KronGemmFactor<Storage>> gemm(factors.size());
  for (const detail::KronPass& pass : plan.passes) {
    if (pass.kind != detail::KronPassKind::Gemm) continue;  // the pair kernel reads floats
    const auto group = factors.subspan(pass.lo, pass.hi - pass.lo + 1);
    Index P = 1, Q = 1;
    for (const auto& g : group) {
      P *= g.P;
      Q *= g.Q;
    }
    float* packed = carve.take<float>(P * Q);
    Storage* rounded = carve.take<Storage>(P * Q);
    detail::kron_merge_factors(group, packed, ctx);
    detail::device_convert(
        ConstView<float>(make_view(packed, Q, P, Layout::ColMajor, MemorySpace::Device)), 0.0f,
        make_view(rounded, Q, P, Layout::ColMajor, MemorySpace::Device), ctx);
    gemm[pass.hi] = {rounded, std::max<Index>(Q, 1), true, false};
  }
  run_plan<Storage, float>(plan, shapes, factors, gemm, X, Y, alpha, beta, buffers, ctx);
#else
  (void)workspace, (void)workspace_bytes, (void)ctx, (void)algorithm;
  throw DeviceError("kron_matmul: GPU application requested but strop was built without CUDA");
#endif
}

#if !STROP_HAVE_CUDA
namespace detail {
namespace {
[[noreturn]] void no_cuda() {
  throw DeviceError("kron_matmul: GPU application requested but strop was built without CUDA");
}
}  // namespace
template <class T>
void kron_step(const KronFactorRef<T>&, ConstView<T>, MatrixView<T>, T, T, bool, Context&) {
  no_cuda();
}
template <class T>
void kron_fused(std::span<const KronFactorRef<T>>, ConstView<T>, MatrixView<T>, T, T, bool,
                Context&) {
  no_cuda();
}
template <class T>
void kron_shuffle(std::span<const KronFactorRef<T>>, ConstView<T>, MatrixView<T>, T, T, void*,
                  std::size_t, Context&) {
  no_cuda();
}
template <class T>
KronGemmFactor<T> kron_gemm_factor(std::span<const KronFactorRef<T>>, T*, Context&) {
  no_cuda();
}
template <class T, class Compute>
void kron_gemm_step(const KronGemmFactor<T>&, Index, Index, const T*, T*, Index, Index, Layout,
                    Compute, Compute, Context&) {
  no_cuda();
}
}  // namespace detail
#endif

#define STROP_INSTANTIATE(T)                                                                      \
  template std::size_t kron_matmul_workspace_bytes(std::span<const KronFactorRef<T>>, Index,      \
                                                   Layout, KronAlgorithm);                        \
  template void kron_matmul(std::span<const KronFactorRef<T>>, ConstView<T>, MatrixView<T>, T, T, \
                            Context&, void*, std::size_t, KronAlgorithm);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
#undef STROP_INSTANTIATE
#define STROP_INSTANTIATE(S)                                                                       \
  template std::size_t kron_matmul_workspace_bytes<S>(std::span<const KronFactorRef<float>>,       \
                                                      Index, Layout, KronAlgorithm);               \
  template void kron_matmul<S>(std::span<const KronFactorRef<float>>, ConstView<S>, MatrixView<S>, \
                               float, float, Context&, void*, std::size_t, KronAlgorithm);
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop
