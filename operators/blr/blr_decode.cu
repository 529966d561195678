// The decode path of the BLR GEMM plans (blr_decode.hpp): one cooperative launch for all of
// a plan's stages at B <= 16 signals.
//
// A stage computes C(row, token) = sum_k W(row, k) act(k, token) for every entry of its
// batch, with W's rows contiguous (W(row, k) at row + k ld). Rows come in groups of RPT (one
// 16-byte load of 16-bit weights: 8 rows, or 4 when 16 tokens need the registers). A warp
// item is 32 consecutive row groups, one per lane (so that a warp reads 512 contiguous bytes
// per k), times a chunk of k: every lane streams its chunk with several loads in flight and
// adds its sums to fp32 accumulators with atomics (no barrier inside a stage). Stages are
// separated by grid.sync(); the last stage's accumulators go to Y (alpha, beta, rounding) in
// the warp that completes a row set last (a counter per row set). The host zeroes the
// accumulators and counters before the launch.
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "operators/blr/blr_decode_kernel.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/buffer.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

namespace cg = cooperative_groups;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;

__device__ __forceinline__ long long entry_offset(const DecodeOperand& o, long long e,
                                                  long long inner) {
  return inner ? o.offset + (e / inner) * o.outer + (e % inner) * o.stride
               : o.offset + e * o.stride;
}

// RPT consecutive weights, kept as loaded (words of 32 bits) until used, so that many
// loads can be in flight: one or two 16-byte (or one 8-byte) loads when aligned, else one
// value at a time (rows past the end read as zero).
template <class DS, int RPT>
struct WeightWords {
  static constexpr int kBytes = RPT * int(sizeof(DS));
  static_assert(kBytes == 8 || kBytes % 16 == 0, "row groups of 8 bytes or multiples of 16");
  uint32_t word[kBytes / 4];

  __device__ __forceinline__ void load(const DS* p, int rows, bool vector) {
    if (vector && rows == RPT) {
      if constexpr (kBytes == 8) {
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
        word[0] = v.x, word[1] = v.y;
      } else {
#pragma unroll
        for (int c = 0; c < kBytes / 16; ++c) {
          const uint4 v = __ldg(reinterpret_cast<const uint4*>(p) + c);
          word[4 * c] = v.x, word[4 * c + 1] = v.y, word[4 * c + 2] = v.z, word[4 * c + 3] = v.w;
        }
      }
      return;
    }
    DS v[RPT];
#pragma unroll
    for (int r = 0; r < RPT; ++r)
      v[r] = r < rows ? __ldg(p + r) : DS(0.0f);
    memcpy(word, v, kBytes);
  }
  __device__ __forceinline__ float value(int r) const {
    DS v[RPT];
    memcpy(v, word, kBytes);
    return float(load_value(v + r));
  }
};

// TOK activations act(k, 0 .. TOK) as floats (tokens past `tokens` read as zero). X is read
// through the read-only path; the fp32 workspaces, written earlier in this launch, through
// L2 (__ldcg). Contiguous fp32 tokens (`vector`) load as float4.
template <class ActT, int TOK>
__device__ __forceinline__ void load_acts(float (&x)[TOK], const ActT* p, long long token_stride,
                                          int tokens, bool vector) {
  if constexpr (std::is_same_v<ActT, float>) {
    if constexpr (TOK % 4 == 0) {
      if (vector) {
#pragma unroll
        for (int t = 0; t < TOK; t += 4) {
          const float4 v = __ldcg(reinterpret_cast<const float4*>(p + t));
          x[t] = v.x, x[t + 1] = v.y, x[t + 2] = v.z, x[t + 3] = v.w;
        }
        return;
      }
    }
#pragma unroll
    for (int t = 0; t < TOK; ++t)
      x[t] = t < tokens ? __ldcg(p + t * token_stride) : 0.0f;
  } else {
#pragma unroll
    for (int t = 0; t < TOK; ++t)
      x[t] = t < tokens ? float(load_value(p + t * token_stride)) : 0.0f;
  }
}

// Weight loads in flight per lane and loop trip: 32 words' worth with 1 or 2 tokens, fewer
// where the tokens' sums need the registers.
template <class DS, int TOK, int RPT>
constexpr int kUnroll = std::max(1, (TOK <= 2   ? 32
                                     : TOK <= 4 ? 16
                                                : 8) *
                                        4 / (RPT * int(sizeof(DS))));

// One warp item: this lane's row group `group` (if any) over k in [k_begin, k_end); adds the
// sums to `accum` at the stage's output positions.
template <class DS, class ActT, int TOK, int RPT>
__device__ __forceinline__ void run_item(const DecodeArgs& a, const DecodeStage& s, long long group,
                                         int k_begin, int k_end, float* accum) {
  constexpr int N = RPT * TOK, U = kUnroll<DS, TOK, RPT>;
  if (group >= s.groups) return;
  const long long e = group / s.groups_per_entry;
  const int row0 = int(group % s.groups_per_entry) * RPT;
  const int rows = min(RPT, s.rows - row0);
  const DS* w = static_cast<const DS*>(a.arrays[s.w.array]) + entry_offset(s.w, e, s.inner) + row0;
  const ActT* x = static_cast<const ActT*>(a.arrays[s.act.array]) + entry_offset(s.act, e, s.inner);
  const bool vector_w = s.vector_weights != 0, vector_x = s.vector_acts != 0;
  float acc[N];
#pragma unroll
  for (int i = 0; i < N; ++i)
    acc[i] = 0.0f;
  auto multiply_add = [&](const WeightWords<DS, RPT>& wv, const float(&xv)[TOK]) {
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      const float wr = wv.value(r);
#pragma unroll
      for (int t = 0; t < TOK; ++t)
        acc[r * TOK + t] = fmaf(wr, xv[t], acc[r * TOK + t]);
    }
  };
  int k = k_begin;
  for (; k + U <= k_end; k += U) {
    WeightWords<DS, RPT> wv[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      wv[u].load(w + (k + u) * s.w_ld, rows, vector_w);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float xv[TOK];
      load_acts<ActT, TOK>(xv, x + (k + u) * s.act_k, s.act_token, a.tokens, vector_x);
      multiply_add(wv[u], xv);
    }
  }
  for (; k < k_end; ++k) {
    WeightWords<DS, RPT> wv;
    float xv[TOK];
    wv.load(w + k * s.w_ld, rows, vector_w);
    load_acts<ActT, TOK>(xv, x + k * s.act_k, s.act_token, a.tokens, vector_x);
    multiply_add(wv, xv);
  }
  float* out = accum + entry_offset(s.out, e, s.inner);
#pragma unroll
  for (int r = 0; r < RPT; ++r)
#pragma unroll
    for (int t = 0; t < TOK; ++t)
      if (r < rows && t < a.tokens)
        atomicAdd(out + (row0 + r) * s.out_row + t * s.out_token, acc[r * TOK + t]);
}

// The last stage's row set is complete: Y = alpha accum + beta Y for this lane's rows.
template <class DS, int TOK, int RPT>
__device__ __forceinline__ void write_rows(const DecodeArgs& a, const DecodeStage& s,
                                           long long group) {
  if (group >= s.groups) return;
  const long long e = group / s.groups_per_entry;
  const int row0 = int(group % s.groups_per_entry) * RPT;
  const int rows = min(RPT, s.rows - row0);
  const long long base = entry_offset(s.out, e, s.inner);
  DS* y = static_cast<DS*>(a.arrays[kDecodeY]);
  for (int t = 0; t < a.tokens; ++t)
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      if (r >= rows) continue;
      const long long at = base + (row0 + r) * s.out_row + t * s.out_token;
      const float sum = __ldcg(a.y_accum + at);
      const float v =
          a.beta == 0.0f ? a.alpha * sum : a.alpha * sum + a.beta * float(load_value(y + at));
      store_value(y + at, v);
    }
}

template <class DS, int TOK, int RPT>
__global__ void __launch_bounds__(kThreads, 2) blr_decode_kernel(const DecodeArgs a) {
  const int lane = int(threadIdx.x) % 32;
  const long long first_warp = (long long)blockIdx.x * kWarps + threadIdx.x / 32;
  const long long warps = (long long)gridDim.x * kWarps;
  for (int st = 0; st < a.count; ++st) {
    if (st > 0) cg::this_grid().sync();
    const DecodeStage& s = a.stages[st];
    const bool last = st == a.count - 1;
    float* accum = last ? a.y_accum : static_cast<float*>(a.arrays[s.out.array]);
    const bool act_storage = s.act.array == kDecodeX;
    for (long long item = first_warp; item < s.items; item += warps) {
      const long long set = item / s.chunks;
      const int chunk = int(item % s.chunks);
      const long long group = set * 32 + lane;
      const int k_begin = chunk * s.chunk_k, k_end = min(s.depth, k_begin + s.chunk_k);
      if (std::is_same_v<DS, float> || !act_storage)
        run_item<DS, float, TOK, RPT>(a, s, group, k_begin, k_end, accum);
      else
        run_item<DS, DS, TOK, RPT>(a, s, group, k_begin, k_end, accum);
      if (!last) continue;
      // The warp that adds the last chunk of a row set writes its rows (the pattern of the
      // CUDA threadFenceReduction sample: fence, count, fence, read through L2).
      __threadfence();
      int done = 0;
      if (lane == 0) done = atomicAdd(a.counters + set, 1);
      done = __shfl_sync(0xffffffffu, done, 0);
      if (done == s.chunks - 1) {
        __threadfence();
        write_rows<DS, TOK, RPT>(a, s, group);
      }
    }
  }
}

template <class DS, int TOK, int RPT>
void launch(DecodeArgs& a, Context& ctx) {
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto kernel = blr_decode_kernel<DS, TOK, RPT>;
  // Co-resident blocks only (grid.sync): the occupancy of this instance, queried once.
  static const int per_sm = [&] {
    int blocks = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, 0),
               "blr decode: occupancy");
    return std::max(blocks, 1);
  }();
  const long long resident = (long long)per_sm * multiprocessors();
  long long most_items = 1;
  for (int st = 0; st < a.count; ++st) {
    DecodeStage& s = a.stages[st];
    s.groups_per_entry = (s.rows + RPT - 1) / RPT;
    s.groups = s.entries * s.groups_per_entry;
    // Whole vector loads: every row group's first weight aligned in every entry and k.
    const long long align = std::min<long long>(16, RPT * sizeof(DS)) / sizeof(DS);
    s.vector_weights = s.rows % RPT == 0 && s.w.offset % align == 0 && s.w.stride % align == 0 &&
                       s.w.outer % align == 0 && s.w_ld % align == 0;
    // float4 activations: fp32 (a workspace, or float signals), tokens contiguous, aligned.
    const bool act_float = std::is_same_v<DS, float> || s.act.array != kDecodeX;
    s.vector_acts = act_float && TOK % 4 == 0 && a.tokens == TOK && s.act_token == 1 &&
                    s.act_k % 4 == 0 && s.act.offset % 4 == 0 && s.act.stride % 4 == 0 &&
                    s.act.outer % 4 == 0;
    // Chunks of k: the stage's k work spread over all resident warps (one item each, in
    // whole trips of the unrolled loop), so that no warp walks a long chain of dependent
    // loop trips while others idle.
    constexpr int U = kUnroll<DS, TOK, RPT>;
    const long long sets = (s.groups + 31) / 32;
    const long long warps = resident * kWarps;
    long long chunk = (sets * s.depth + warps - 1) / warps;
    chunk = std::min<long long>(s.depth, (chunk + U - 1) / U * U);
    s.chunk_k = int(chunk);
    s.chunks = int((s.depth + chunk - 1) / chunk);
    s.items = sets * s.chunks;
    most_items = std::max(most_items, s.items);
  }
  const int blocks = int(std::min<long long>((most_items + kWarps - 1) / kWarps, resident));

  // The accumulators (Z1, Z2, Y's) and the last stage's row-set counters, zeroed.
  const long long sets = (a.stages[a.count - 1].groups + 31) / 32;
  const long long floats = a.z1_size + a.z2_size + a.y_extent + sets;
  Buffer<float> accumulators(floats, MemorySpace::Device, ctx);
  check_cuda(cudaMemsetAsync(accumulators.data(), 0, sizeof(float) * floats, stream),
             "blr decode: zeroing the accumulators");
  float* next = accumulators.data();
  a.arrays[kDecodeZ1] = next;
  a.arrays[kDecodeZ2] = next += a.z1_size;
  a.y_accum = next += a.z2_size;
  a.counters = reinterpret_cast<int*>(next + a.y_extent);
  void* params[] = {&a};
  check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                         dim3(kThreads), params, 0, stream),
             "blr decode kernel (cooperative launch)");
}

// RPT: 8 rows per group (one 16-byte load of 16-bit weights), 4 with 16 tokens (registers).
template <class DS>
void launch_for_tokens(DecodeArgs& a, Context& ctx) {
  if (a.tokens <= 1) return launch<DS, 1, 8>(a, ctx);
  if (a.tokens <= 2) return launch<DS, 2, 8>(a, ctx);
  if (a.tokens <= 4) return launch<DS, 4, 8>(a, ctx);
  if (a.tokens <= 8) return launch<DS, 8, 8>(a, ctx);
  return launch<DS, 16, 4>(a, ctx);
}

}  // namespace

template <class Storage>
void launch_blr_decode(DecodeArgs& a, Context& ctx) {
  launch_for_tokens<DeviceScalar<Storage>>(a, ctx);
}
template void launch_blr_decode<float>(DecodeArgs&, Context&);
template void launch_blr_decode<half>(DecodeArgs&, Context&);
template void launch_blr_decode<bfloat16>(DecodeArgs&, Context&);

}  // namespace strop::detail
