// The GPU path of StrassenTile: encode kernel -> r colour GEMMs as one strided-batched cuBLAS
// call -> decode kernel. The encoded activations and colours go through device workspace
// (the paper's three-step form); their orientation follows the layouts of X and Y so that
// both kernels stay coalesced, and the GEMM's operand flags absorb the difference.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>

#include "operators/stl/stl_device.hpp"
#include "operators/stl/stl_kernels.hpp"
#include "runtime/cublas_calls.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/cuda_types.hpp"
#include "runtime/rounded_words.hpp"
#include "runtime/strided_gemm.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/stl_path.hpp"

namespace strop::detail {
namespace {

// Why the fused path cannot run these stages (the first stage's reason), or nullptr.
template <class Storage>
const char* fused_refusal(const std::vector<StlDeviceStage<Storage>>& stages) {
  for (const auto& stage : stages)
    if (const char* why = stl_fused_refusal(stage.steps, is_complex_v<Storage>)) return why;
  return nullptr;
}

// The first stage's encode of X into a new buffer of colours laid out as `in` says.
template <class Storage>
Buffer<Storage> encode_input(const StlDeviceStage<Storage>& first, ConstView<Storage> X,
                             const StlColourLayout& in, Context& ctx) {
  Buffer<Storage> encoded(first.steps.rank * in.pairs(), MemorySpace::Device, ctx);
  stl_encode<Storage>(first.steps.tile, first.steps.rank, first.operands.encoder,
                      first.operands.encoder_host, X, encoded.data(), in, ctx);
  return encoded;
}

// The fused path (StlPath::Fused, stl_fused.cu): the encode kernel with the signal tiles
// fastest, then per stage one kernel for the colour GEMMs and the mixing into the next
// stage's encoded signals, or the decode into Y for the last.
template <class Storage>
void run_fused(const std::vector<StlDeviceStage<Storage>>& stages, ConstView<Storage> X,
               MatrixView<Storage> Y, StlCompute<Storage> alpha, StlCompute<Storage> beta,
               Context& ctx) {
  const StlSteps& first = stages.front().steps;
  Buffer<Storage> encoded =
      encode_input(stages.front(), X, {first.signal_tiles, first.in_tiles, true}, ctx);
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const StlSteps& s = stages[k].steps;
    const StlOperands<Storage>& w = stages[k].operands;
    if (k + 1 == stages.size()) {
      stl_colours_decode<Storage>(s.rank, s.in_tiles, s.out_tiles, s.signal_tiles, encoded.data(),
                                  w.weight, w.decoder, Y, alpha, beta, ctx);
      return;
    }
    const Index next_rank = stages[k + 1].steps.rank;
    Buffer<Storage> next(next_rank * s.out_tiles * s.signal_tiles, MemorySpace::Device, ctx);
    stl_colours_mix<Storage>(s.rank, s.in_tiles, s.out_tiles, s.signal_tiles, encoded.data(),
                             w.weight, stages[k].mix_to_next, stages[k].mix_ld, next_rank,
                             next.data(), ctx);
    encoded = std::move(next);
  }
}

}  // namespace

template <class Storage>
void stl_run_device(const std::vector<StlDeviceStage<Storage>>& stages, ConstView<Storage> X,
                    MatrixView<Storage> Y, StlCompute<Storage> alpha, StlCompute<Storage> beta,
                    Context& ctx) {
  const StlPath path = stl_path();
  const char* refusal = fused_refusal(stages);
  require<DeviceError>(path != StlPath::Fused || refusal == nullptr,
                       "strassen_tile: the fused path does not take ", refusal ? refusal : "",
                       " (StlPath::Steps or Auto does)");
  if constexpr (!is_complex_v<Storage>) {
    const bool preferred = std::all_of(stages.begin(), stages.end(), [](const auto& stage) {
      return stl_fused_preferred(stage.steps);
    });
    if (refusal == nullptr && (path == StlPath::Fused || (path == StlPath::Auto && preferred)))
      return run_fused<Storage>(stages, X, Y, alpha, beta, ctx);
  }
  using Compute = StlCompute<Storage>;
  const Compute one(1), zero(0);
  const cudaDataType_t type = cuda_data_type<Storage>();
  const cublasComputeType_t compute = cublas_compute_type<Compute>();
  auto handle = static_cast<cublasHandle_t>(ctx.cublas());
  const bool x_signal_fast = X.col_stride == 1 && X.cols > 1;
  const bool y_signal_fast = Y.col_stride == 1 && Y.cols > 1;

  const StlSteps& first = stages.front().steps;
  StlColourLayout in{first.signal_tiles, first.in_tiles, x_signal_fast};
  Buffer<Storage> encoded = encode_input(stages.front(), X, in, ctx);
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const StlSteps& s = stages[k].steps;
    const StlOperands<Storage>& w = stages[k].operands;
    const bool last = k + 1 == stages.size();
    const StlColourLayout out{s.signal_tiles, s.out_tiles, last ? y_signal_fast : x_signal_fast};
    Buffer<Storage> colours(s.rank * out.pairs(), MemorySpace::Device, ctx);
    // Ŵ^(p) is w_rows x w_cols column-major: input x output tiles for A, output x input
    // for A^T and A^H.
    const Index w_rows = s.adjoint_roles() ? s.out_tiles : s.in_tiles;
    const Index w_stride = s.in_tiles * s.out_tiles;
    const int m_in = cuda_int(s.in_tiles, "strassen_tile input tiles");
    const int m_out = cuda_int(s.out_tiles, "strassen_tile output tiles");
    const int n_sig = cuda_int(s.signal_tiles, "strassen_tile signal tiles");
    const int ld_x = in.signal_fast ? n_sig : m_in;
    const int ld_w = cuda_int(w_rows, "strassen_tile weight rows");
    const int rank = cuda_int(s.rank, "strassen_tile rank");
    cublasStatus_t status;
    if (out.signal_fast) {
      // Ŷ^(p) (S x out) = X̂^(p) op_w(Ŵ^(p)).
      const cublasOperation_t op_x = in.signal_fast ? CUBLAS_OP_N : CUBLAS_OP_T;
      status =
          strided_batched_gemm(ctx, op_x, to_cublas(s.weight_op), n_sig, m_out, m_in, &one,
                               encoded.data(), type, ld_x, in.pairs(), w.weight, ld_w, w_stride,
                               &zero, colours.data(), n_sig, out.pairs(), rank, compute);
    } else {
      // Ŷ^(p)^T (out x S) = op_w(Ŵ^(p))^T X̂^(p)^T; (Ŵ^H)^T = conj(Ŵ), the conjugated copy.
      const Storage* weight =
          s.weight_op == Op::Adjoint && w.weight_conj ? w.weight_conj : w.weight;
      const cublasOperation_t op_w = s.weight_op == Op::NoTrans ? CUBLAS_OP_T : CUBLAS_OP_N;
      const cublasOperation_t op_x = in.signal_fast ? CUBLAS_OP_T : CUBLAS_OP_N;
      status = strided_batched_gemm(ctx, op_w, op_x, m_out, n_sig, m_in, &one, weight, type, ld_w,
                                    w_stride, encoded.data(), ld_x, in.pairs(), &zero,
                                    colours.data(), m_out, out.pairs(), rank, compute);
    }
    check_cublas(status, "strassen_tile colour GEMMs (strided-batched GEMM)");
    if (last) {
      stl_decode<Storage>(s.tile, s.rank, w.decoder, w.decoder_host, colours.data(), out, Y, alpha,
                          beta, ctx);
      return;
    }
    // Fused decode-encode into the next stage: next (pairs x r_next) = colours M^T.
    const Index next_rank = stages[k + 1].steps.rank;
    in = out;
    encoded = Buffer<Storage>(next_rank * in.pairs(), MemorySpace::Device, ctx);
    const int pairs = cuda_int(in.pairs(), "strassen_tile tile pairs");
    const int r_next = cuda_int(next_rank, "strassen_tile rank");
    status = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, pairs, r_next, rank, &one,
                          colours.data(), type, pairs, stages[k].mix_to_next, type,
                          cuda_int(stages[k].mix_ld, "strassen_tile mixing ld"), &zero,
                          encoded.data(), type, pairs, compute, CUBLAS_GEMM_DEFAULT);
    check_cublas(status, "strassen_tile fused decode-encode (cublasGemmEx)");
  }
}

template <class Storage>
StlOperands<Storage> stl_operands(const StrassenTile<StlCompute<Storage>>& A, const StlSteps& steps,
                                  Context& ctx) {
  using Coef = StlCoef<Storage>;
  const auto& form = A.device_form(ctx);
  const auto& host = A.encoded_weight();
  const Index count = Index(host.size());
  StlOperands<Storage> w;
  if constexpr (is_reduced_precision_v<Storage>) {
    const auto& cache = std::is_same_v<Storage, half> ? form.weight_half : form.weight_bf16;
    w.weight = reinterpret_cast<const Storage*>(
        cache.get_or_make(count, ctx, [&] { return rounded_words<Storage>(host); }));
  } else {
    w.weight = form.weight.get(host.data(), count, ctx);
    if (is_complex_v<Storage> && steps.weight_op == Op::Adjoint)
      w.weight_conj = form.weight.get(host.data(), count, ctx, true);
  }
  const Index block = A.rank() * A.tile() * A.tile();
  const Coef* coders = form.coders.get_or_make(2 * block, ctx, [&] { return form.coders_host; });
  const Coef* coders_host = form.coders_host.data();
  const Index encoder = steps.adjoint_roles() ? block : 0;  // A^T, A^H encode with D
  const Index decoder = block - encoder;
  w.encoder = coders + encoder;
  w.decoder = coders + decoder;
  w.encoder_host = coders_host + encoder;
  w.decoder_host = coders_host + decoder;
  return w;
}

template <class Storage>
void stl_apply_device(const StrassenTile<StlCompute<Storage>>& A, const StlSteps& steps,
                      ConstView<Storage> X, MatrixView<Storage> Y, StlCompute<Storage> alpha,
                      StlCompute<Storage> beta, Context& ctx) {
  const StlOperands<Storage> w = stl_operands<Storage>(A, steps, ctx);
  stl_run_device<Storage>({{steps, w, nullptr}}, X, Y, alpha, beta, ctx);
}

#define STROP_INSTANTIATE(S)                                                                   \
  template void stl_run_device<S>(const std::vector<StlDeviceStage<S>>&, ConstView<S>,         \
                                  MatrixView<S>, StlCompute<S>, StlCompute<S>, Context&);      \
  template StlOperands<S> stl_operands<S>(const StrassenTile<StlCompute<S>>&, const StlSteps&, \
                                          Context&);                                           \
  template void stl_apply_device<S>(const StrassenTile<StlCompute<S>>&, const StlSteps&,       \
                                    ConstView<S>, MatrixView<S>, StlCompute<S>, StlCompute<S>, \
                                    Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
