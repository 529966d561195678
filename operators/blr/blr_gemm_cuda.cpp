// The GEMM plans of blr_gemm_plan.hpp on the GPU: one cuBLAS strided batched GEMM per stage
// (or our small-inner kernel for BLAST's streamed coupling). Half and bfloat16 signals run on
// tensor cores with fp32 accumulation (values and intermediates rounded to 16 bits); float stays on
// FP32 (no TF32), the arithmetic of the CPU path.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <variant>
#include <vector>

#include "operators/blr/blr_decode.hpp"
#include "operators/blr/blr_fused.hpp"
#include "operators/blr/blr_gemm_device.hpp"
#include "operators/blr/blr_gemm_plan.hpp"
#include "operators/blr/blr_plan_kernels.hpp"
#include "operators/blr/blr_skinny.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/cuda_types.hpp"
#include "runtime/rounded_words.hpp"
#include "runtime/strided_gemm.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/blast.hpp"
#include "strop/operators/lowrank.hpp"
#include "strop/operators/monarch.hpp"

namespace strop::detail {
namespace {

cublasOperation_t cublas_op(bool trans) {
  return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// The device copy of the plan array in `slot` (0 left, 1 right, 2 extra) as Storage.
template <class Storage, class T>
const void* device_values(const BlrPlanWeights<T>& w, int slot, Index count,
                          const std::function<std::vector<T>()>& make, Context& ctx) {
  if constexpr (is_reduced_precision_v<Storage>) {
    const auto& cache = std::is_same_v<Storage, half> ? w.half[slot] : w.bf16[slot];
    return cache.get_or_make(count, ctx, [&] { return rounded_words<Storage>(make()); });
  } else {
    static_assert(std::is_same_v<Storage, T>, "native plans run on signals of the operator's type");
    return w.native[slot].get_or_make(count, ctx, make);
  }
}

// Each operator's plan for `path` and the values of its plan arrays (slot 0 Left, 1 Right,
// 2 Extra, 3 Unfused: Monarch's R in the public code's layout; BLAST's couplings in the
// operator's own layout, which the decode kernel reads when it folds the coupling stage;
// 4 LeftByRank, 5 RightByRank: Monarch's only; 6 FoldFirst, 7 FoldLast: BLAST's only).
// LowRank is a Monarch of one block: L_00 = left, R_00 = right, and every re-laid copy of R
// (L) is R (L).
template <class T>
BlrGemmPlan plan_of(const Blast<T>& A, Op op, const PlanSignals& s, PlanPath path) {
  require<DeviceError>(path != PlanPath::GemmFolded || op == Op::NoTrans,
                       "blast: the folded plan applies A, not A^T");
  if (path == PlanPath::GemmFolded || (path == PlanPath::Auto && blast_folds(A.grid(), op, s)))
    return blast_folded_plan(A.grid(), s, blast_cheaper_fold(A.grid()));
  return blast_gemm_plan(A.grid(), op, s);
}
template <class T>
BlrGemmPlan plan_of(const Monarch<T>& A, Op op, const PlanSignals& s, PlanPath path) {
  require<DeviceError>(path != PlanPath::GemmFolded, "monarch: no folded plan (BLAST only)");
  return monarch_gemm_plan(A.grid(), op, s);
}
template <class T>
BlrGemmPlan plan_of(const LowRank<T>& A, Op op, const PlanSignals& s, PlanPath path) {
  require<DeviceError>(path != PlanPath::GemmFolded, "lowrank: no folded plan (BLAST only)");
  return monarch_gemm_plan(BlockGrid{A.rows(), A.cols(), 1, 1, A.rank()}, op, s);
}
template <class T>
std::vector<T> plan_values(const Blast<T>& A, int slot) {
  if (slot == 7) return blast_fold_last(A);
  if (slot == 6) return blast_fold_first(A);
  if (slot >= 4) return {};
  if (slot == 3) return A.diagonal_values();
  if (slot == 2) return blast_coupling_by_rank(A);
  return slot == 0 ? A.left_values() : A.right_values();
}
template <class T>
std::vector<T> plan_values(const Monarch<T>& A, int slot) {
  if (slot >= 6) return {};
  if (slot == 5) return monarch_right_by_rank(A);
  if (slot == 4) return monarch_left_by_rank(A);
  if (slot == 3) return monarch_right_unfused(A);
  if (slot == 2) return monarch_right_by_column(A);
  return slot == 0 ? A.left_values() : A.right_values();
}
template <class T>
std::vector<T> plan_values(const LowRank<T>& A, int slot) {
  if (slot == 3 || slot >= 6) return {};
  const HostMatrix<T>& m = slot == 0 || slot == 4 ? A.left() : A.right();
  return std::vector<T>(m.data(), m.data() + m.size());
}
template <class T>
Index plan_value_count(const Blast<T>& A, int slot) {
  const BlockGrid& g = A.grid();
  if (slot == 7) return g.rows * g.rank * g.col_blocks;
  if (slot == 6) return g.row_blocks * g.rank * g.cols;
  if (slot >= 4) return 0;
  if (slot == 2 || slot == 3) return Index(A.diagonal_values().size());
  return Index(slot == 0 ? A.left_values().size() : A.right_values().size());
}
template <class T>
Index plan_value_count(const Monarch<T>& A, int slot) {
  if (slot >= 6) return 0;
  return Index(slot == 0 || slot == 4 ? A.left_values().size() : A.right_values().size());
}
template <class T>
Index plan_value_count(const LowRank<T>& A, int slot) {
  if (slot == 3 || slot >= 6) return 0;
  return Index(slot == 0 || slot == 4 ? A.left().size() : A.right().size());
}

// A plan's signals: the layout whose unit stride both views share, leading dimensions at
// least what cuBLAS requires (a one-column or one-row view may report any stride).
template <class Storage>
PlanSignals plan_signals(ConstView<Storage> X, MatrixView<Storage> Y) {
  PlanSignals s;
  const bool column_major = X.row_stride == 1 && Y.row_stride == 1;
  s.layout = column_major ? Layout::ColMajor : Layout::RowMajor;
  s.batch = X.cols;
  s.value_bytes = int(sizeof(Storage));
  s.x_ld = column_major ? std::max(X.col_stride, X.rows) : std::max(X.row_stride, X.cols);
  s.y_ld = column_major ? std::max(Y.col_stride, Y.rows) : std::max(Y.row_stride, Y.cols);
  s.x_ld = std::max<Index>(s.x_ld, 1);
  s.y_ld = std::max<Index>(s.y_ld, 1);
  return s;
}

bool plan_uses(const BlrGemmPlan& plan, PlanArray a) {
  for (const PlanStep& step : plan.steps) {
    if (const auto* g = std::get_if<PlanGemm>(&step)) {
      if (g->a.array == a || g->b.array == a || g->c.array == a) return true;
    } else {
      const auto& c = std::get<PlanPermute>(step);
      if (c.src == a || c.dst == a) return true;
    }
  }
  return false;
}

static_assert(kStreamedCouplingBlocks16 <= kSmallInnerMax, "streamed products fit the kernel");

template <class Storage>
void run_gemm(const PlanGemm& g, const std::array<char*, kPlanArrays>& base,
              PlanScale<Storage> alpha, PlanScale<Storage> beta, Context& ctx) {
  using Scale = PlanScale<Storage>;
  constexpr Index kElement = Index(sizeof(Storage));
  const Scale one = 1, zero = 0;
  const bool to_y = g.c.array == PlanArray::Y;
  const Scale* a_scale = to_y ? &alpha : &one;
  const Scale* b_scale = to_y ? &beta : &zero;
  auto start = [&](const PlanOperand& p) {
    return base[static_cast<int>(p.array)] + p.offset * kElement;
  };
  if (g.streamed) {
    require<DeviceError>(!g.trans_a, "blr plan: a streamed product needs A as is");
    SmallInnerGemm s{};
    s.a = start(g.a), s.b = start(g.b), s.c = start(g.c);
    s.m = g.m, s.n = g.n, s.k = g.k;
    s.lda = g.a.ld, s.ldb = g.b.ld, s.ldc = g.c.ld;
    s.stride_a = g.a.stride, s.stride_b = g.b.stride, s.stride_c = g.c.stride;
    s.batch = g.batch, s.trans_b = g.trans_b, s.tensor_cores = true;
    s.alpha = double(*a_scale), s.beta = double(*b_scale);
    small_inner_gemm<Storage>(s, ctx);
    return;
  }
  const int m = cuda_int(g.m, "blr plan: m"), n = cuda_int(g.n, "blr plan: n"),
            k = cuda_int(g.k, "blr plan: k"), batch = cuda_int(g.batch, "blr plan: batch");
  const int lda = cuda_int(g.a.ld, "blr plan: lda"), ldb = cuda_int(g.b.ld, "blr plan: ldb"),
            ldc = cuda_int(g.c.ld, "blr plan: ldc");
  const cublasStatus_t status = strided_batched_gemm(
      ctx, cublas_op(g.trans_a), cublas_op(g.trans_b), m, n, k, a_scale, start(g.a),
      cuda_data_type<Storage>(), lda, g.a.stride, start(g.b), ldb, g.b.stride, b_scale, start(g.c),
      ldc, g.c.stride, batch, cublas_compute_type<Storage>());
  check_cublas(status, "blr plan (strided-batched GEMM)");
}

// Runs the plan: its steps with cuBLAS, or all of them in the decode kernel (blr_decode.hpp)
// or the fused kernel (blr_fused.hpp) where `path` allows and they apply; the operator's value
// arrays the plan reads are uploaded (rounded for 16-bit signals) on first use and cached.
template <class Storage, class Operator>
void run_plan(const BlrGemmPlan& plan, const Operator& A, ConstView<Storage> X,
              MatrixView<Storage> Y, PlanScale<Storage> alpha, PlanScale<Storage> beta,
              Context& ctx, PlanPath path = PlanPath::Gemm) {
  using T = typename Operator::Scalar;
  const BlrPlanWeights<T>& w = A.plan_weights();
  std::array<char*, kPlanArrays> base{};
  auto set = [&](PlanArray a, const void* p) {
    base[static_cast<int>(a)] = static_cast<char*>(const_cast<void*>(p));
  };
  set(PlanArray::X, X.data);
  set(PlanArray::Y, Y.data);
  // BLAST's decode also reads its couplings in the operator's layout (slot 3, b^2 r values).
  // Every BLAST plan uploads them, so that any first call (which a capture cannot hold: the
  // upload is a synchronous copy) leaves a later decode under capture nothing to upload.
  constexpr bool kBlast = std::is_same_v<Operator, Blast<T>>;
  const PlanArray slots[BlrPlanWeights<T>::kArrays] = {
      PlanArray::Left,       PlanArray::Right,       PlanArray::Extra,     PlanArray::Unfused,
      PlanArray::LeftByRank, PlanArray::RightByRank, PlanArray::FoldFirst, PlanArray::FoldLast};
  std::size_t weight_bytes = 0;
  for (int slot = 0; slot < BlrPlanWeights<T>::kArrays; ++slot)
    if (plan_uses(plan, slots[slot]) || (kBlast && slot == 3)) {
      set(slots[slot],
          device_values<Storage, T>(
              w, slot, plan_value_count(A, slot), [&] { return plan_values(A, slot); }, ctx));
      weight_bytes += sizeof(Storage) * std::size_t(plan_value_count(A, slot));
    }

  // The decode kernel accumulates in fp32: not for double signals. Auto takes it for the host
  // time it saves, which a CUDA graph saves anyway: while the stream is captured, cuBLAS's
  // calls replay faster (bench/NOTES-blr.md, sessions 17 and 19), except at 2 signals on large
  // layers (decode_replays_faster).
  const bool capturing = ctx.capturing();
  const bool one_launch = path == PlanPath::Auto && !capturing;
  const bool graph_decode =
      path == PlanPath::Auto && capturing && decode_replays_faster(X.cols, weight_bytes);
  const bool decode =
      (path == PlanPath::Decode || (one_launch && X.cols <= kDecodeAutoBatch) || graph_decode) &&
      !std::is_same_v<Storage, double> && blr_decode_takes(plan, X.cols);
  require<DeviceError>(decode || path != PlanPath::Decode, Operator::type_name,
                       ": the decode path needs at most ", kDecodeMaxBatch,
                       " float, half or bfloat16 signals and A (not A^T)");
  if (decode) {
    if constexpr (!std::is_same_v<Storage, double>) {
      const Index y_extent = Y.ptr(Y.rows - 1, Y.cols - 1) - Y.data + 1;
      // The decode kernel takes A's plans only (not A^T): block row k is the output block.
      std::optional<DecodeCouplingSource> coupling;
      if constexpr (kBlast)
        coupling = DecodeCouplingSource{PlanArray::Unfused, A.grid().col_blocks * A.grid().rank,
                                        A.grid().rank};
      blr_decode_run<Storage>(plan, base, X.cols, y_extent, float(alpha), float(beta), ctx,
                              coupling ? &*coupling : nullptr);
    }
    return;
  }
  if constexpr (is_reduced_precision_v<Storage>) {
    if (path == PlanPath::Fused) {  // (blr_fused_run checks that the kernel takes the plan)
      blr_fused_run<Storage>(plan, base, float(alpha), float(beta), ctx);
      return;
    }
  }
  require<DeviceError>(path != PlanPath::Fused, Operator::type_name,
                       ": the fused path needs half or bfloat16 signals");
  // Auto takes the skinny path where cuBLAS's kernels for a few tokens are slow (skinny_auto).
  constexpr bool kLowRank = std::is_same_v<Operator, LowRank<T>>;
  const bool skinny_wanted =
      path == PlanPath::Skinny || (path == PlanPath::Auto && is_reduced_precision_v<Storage> &&
                                   !kLowRank && skinny_auto(X.cols));
  const bool skinny =
      skinny_wanted && !std::is_same_v<Storage, double> && blr_skinny_takes(plan, X.cols);
  require<DeviceError>(skinny || path != PlanPath::Skinny, Operator::type_name,
                       ": the skinny path needs at most ", kSkinnyMaxTokens,
                       " float, half or bfloat16 signals and A (not A^T)");
  // Z1 and Z2 in one stream-ordered allocation (each costs the host a few microseconds), Z2
  // from a 16-byte boundary.
  const Index z1_padded =
      (plan.z1_size * Index(sizeof(Storage)) + 15) / 16 * 16 / Index(sizeof(Storage));
  Buffer<Storage> z(z1_padded + plan.z2_size, MemorySpace::Device, ctx);
  set(PlanArray::Z1, z.data());
  set(PlanArray::Z2, z.data() + z1_padded);
  if (skinny) {
    if constexpr (!std::is_same_v<Storage, double>)
      blr_skinny_run<Storage>(plan, base, X.cols, float(alpha), float(beta), ctx);
    return;
  }
  for (const PlanStep& step : plan.steps) {
    if (const auto* g = std::get_if<PlanGemm>(&step)) {
      run_gemm<Storage>(*g, base, alpha, beta, ctx);
      continue;
    }
    const auto& p = std::get<PlanPermute>(step);
    StridedCopy c{};
    c.src = base[static_cast<int>(p.src)];
    c.dst = base[static_cast<int>(p.dst)];
    for (int d = 0; d < 4; ++d) {
      c.dims[d] = p.dims[std::size_t(d)];
      c.src_strides[d] = p.src_strides[std::size_t(d)];
      c.dst_strides[d] = p.dst_strides[std::size_t(d)];
    }
    c.scaled = p.dst == PlanArray::Y;
    c.alpha = alpha, c.beta = beta;
    strided_copy<Storage>(c, ctx);
  }
}

}  // namespace

template <class Storage>
bool blr_plan_takes(ConstView<Storage> X, MatrixView<Storage> Y) {
  if (X.space != MemorySpace::Device || Y.space != MemorySpace::Device) return false;
  return (X.row_stride == 1 && Y.row_stride == 1) || (X.col_stride == 1 && Y.col_stride == 1);
}

namespace {

// dst = src (same shape, any strides), one strided-copy kernel.
template <class Storage>
void copy_values(ConstView<Storage> src, MatrixView<Storage> dst, Context& ctx) {
  StridedCopy c{src.data,
                dst.data,
                {1, 1, src.rows, src.cols},
                {0, 0, src.row_stride, src.col_stride},
                {0, 0, dst.row_stride, dst.col_stride},
                false,
                1.0,
                0.0};
  strided_copy<Storage>(c, ctx);
}

// The cuBLAS plan on kPaddedSignals signals: X copied into the first columns of a padded copy
// in the plan's layout (the other columns hold whatever the allocation held: every column of
// a plan is computed on its own, so they only produce columns that are dropped), Y likewise
// when beta reads it, and the result's first columns copied back.
template <class Storage, class Operator>
void run_padded(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                PlanScale<Storage> alpha, PlanScale<Storage> beta, Context& ctx) {
  const Index n = kPaddedSignals;
  const Layout layout = plan_signals(X, Y).layout;
  Buffer<Storage> xp(X.rows * n, MemorySpace::Device, ctx),
      yp(Y.rows * n, MemorySpace::Device, ctx);
  const MatrixView<Storage> x = make_view(xp.data(), X.rows, n, layout, MemorySpace::Device);
  const MatrixView<Storage> y = make_view(yp.data(), Y.rows, n, layout, MemorySpace::Device);
  copy_values<Storage>(X, x.col_block(0, X.cols), ctx);
  if (beta != PlanScale<Storage>(0)) copy_values<Storage>(Y, y.col_block(0, Y.cols), ctx);
  run_plan(plan_of(A, op, plan_signals<Storage>(x, y), PlanPath::Gemm), A, ConstView<Storage>(x), y,
           alpha, beta, ctx, PlanPath::Gemm);
  copy_values<Storage>(y.col_block(0, Y.cols), Y, ctx);
}

}  // namespace

template <class Storage, class Operator>
void blr_plan_apply_device(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                           PlanScale<Storage> alpha, PlanScale<Storage> beta, Context& ctx,
                           PlanPath path) {
  require<DeviceError>(blr_plan_takes(X, Y), Operator::type_name,
                       " (GEMM plan): X and Y must be device views with a unit stride on the same"
                       " side");
  require<DeviceError>(path != PlanPath::GemmPadded || X.cols < kPaddedSignals, Operator::type_name,
                       ": the padded cuBLAS path takes fewer than ", kPaddedSignals, " signals");
  if (Y.rows == 0 || Y.cols == 0) return;
  const bool padded =
      path == PlanPath::GemmPadded || (path == PlanPath::Auto && is_reduced_precision_v<Storage> &&
                                       ctx.capturing() && pad_while_capturing(X.cols));
  if (padded) return run_padded(A, op, X, Y, alpha, beta, ctx);
  run_plan(plan_of(A, op, plan_signals(X, Y), path), A, X, Y, alpha, beta, ctx, path);
}

template <class Storage, class Operator>
void blr_unfused_apply_device(const Operator& A, ConstView<Storage> X, MatrixView<Storage> Y,
                              PlanScale<Storage> alpha, PlanScale<Storage> beta, Context& ctx) {
  require<DeviceError>(X.space == MemorySpace::Device && Y.space == MemorySpace::Device &&
                           X.row_stride == 1 && Y.row_stride == 1,
                       Operator::type_name,
                       " (unfused baseline): X and Y must be signal-contiguous device views");
  if (Y.rows == 0 || Y.cols == 0) return;
  const PlanSignals s = plan_signals(X, Y);
  if constexpr (std::is_same_v<Operator, Blast<typename Operator::Scalar>>) {
    run_plan(blast_unfused_plan(A.grid(), s), A, X, Y, alpha, beta, ctx);
  } else {
    run_plan(monarch_unfused_plan(A.grid(), s), A, X, Y, alpha, beta, ctx);
  }
}

#define STROP_INSTANTIATE_PLAN(S, T)                                                            \
  template void blr_plan_apply_device<S, Blast<T>>(const Blast<T>&, Op, ConstView<S>,           \
                                                   MatrixView<S>, PlanScale<S>, PlanScale<S>,   \
                                                   Context&, PlanPath);                         \
  template void blr_plan_apply_device<S, LowRank<T>>(const LowRank<T>&, Op, ConstView<S>,       \
                                                     MatrixView<S>, PlanScale<S>, PlanScale<S>, \
                                                     Context&, PlanPath);                       \
  template void blr_plan_apply_device<S, Monarch<T>>(const Monarch<T>&, Op, ConstView<S>,       \
                                                     MatrixView<S>, PlanScale<S>, PlanScale<S>, \
                                                     Context&, PlanPath);                       \
  template void blr_unfused_apply_device<S, Blast<T>>(                                          \
      const Blast<T>&, ConstView<S>, MatrixView<S>, PlanScale<S>, PlanScale<S>, Context&);      \
  template void blr_unfused_apply_device<S, Monarch<T>>(                                        \
      const Monarch<T>&, ConstView<S>, MatrixView<S>, PlanScale<S>, PlanScale<S>, Context&);    \
  template bool blr_plan_takes<S>(ConstView<S>, MatrixView<S>);
STROP_INSTANTIATE_PLAN(float, float)
STROP_INSTANTIATE_PLAN(double, double)
STROP_INSTANTIATE_PLAN(half, float)
STROP_INSTANTIATE_PLAN(bfloat16, float)

}  // namespace strop::detail
