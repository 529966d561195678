// The decode path of the BLR GEMM plans (blr_decode.hpp): one cooperative launch for all of
// a plan's stages at B <= 16 signals.
//
// A stage computes C(row, token) = sum_k W(row, k) act(k, token) for every entry of its
// batch, with W's rows contiguous (W(row, k) at row + k ld). The work is cut into row groups
// of RPT consecutive rows (one 16-byte load of 16-bit weights: 8 rows, or 4 when 16 tokens
// need the registers); a block unit takes GL consecutive row groups across the lanes and
// splits k over the rest (run_unit). Stages are separated by grid.sync(); intermediates are
// fp32.
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "operators/blr/blr_decode_kernel.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
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

// RPT consecutive weights as floats: one or two 16-byte loads when aligned, else one value
// at a time (rows past the end read as zero).
template <class DS, int RPT>
__device__ __forceinline__ void load_weights(float (&w)[RPT], const DS* p, int rows, bool vector) {
  constexpr int bytes = RPT * int(sizeof(DS));
  if (vector && rows == RPT) {
    if constexpr (bytes % 16 == 0) {
      uint4 raw[bytes / 16];
#pragma unroll
      for (int c = 0; c < bytes / 16; ++c)
        raw[c] = __ldg(reinterpret_cast<const uint4*>(p) + c);
      const DS* v = reinterpret_cast<const DS*>(raw);
#pragma unroll
      for (int r = 0; r < RPT; ++r)
        w[r] = float(load_value(v + r));
    } else {
      static_assert(bytes == 8, "row groups of 8 bytes or multiples of 16");
      const uint2 raw = __ldg(reinterpret_cast<const uint2*>(p));
      const DS* v = reinterpret_cast<const DS*>(&raw);
#pragma unroll
      for (int r = 0; r < RPT; ++r)
        w[r] = float(load_value(v + r));
    }
    return;
  }
#pragma unroll
  for (int r = 0; r < RPT; ++r)
    w[r] = r < rows ? float(load_value(p + r)) : 0.0f;
}

// TOK activations act(k, 0 .. TOK) as floats (tokens past `tokens` read as zero): one
// float4 per 4 tokens where they are contiguous fp32 (`vector`), else one value at a time.
template <class ActT, int TOK>
__device__ __forceinline__ void load_acts(float (&x)[TOK], const ActT* p, long long token_stride,
                                          int tokens, bool vector) {
  if constexpr (std::is_same_v<ActT, float> && TOK % 4 == 0) {
    if (vector) {
#pragma unroll
      for (int t = 0; t < TOK; t += 4) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(p + t));
        x[t] = v.x, x[t + 1] = v.y, x[t + 2] = v.z, x[t + 3] = v.w;
      }
      return;
    }
  }
#pragma unroll
  for (int t = 0; t < TOK; ++t)
    x[t] = t < tokens ? float(load_value(p + t * token_stride)) : 0.0f;
}

// One block unit: GL consecutive row groups, one per lane position gl = lane % GL. The k
// slices are spread over the KL = 32 / GL lane rows of each warp and the 8 warps, so that
// the GL lanes of one k read GL x RPT contiguous weights (whole 32-byte sectors) and every
// thread has several loads in flight. Partial sums: shuffles over a warp's lane rows, then
// shared-memory atomics over the warps into `sums` (zero on entry, left zero on exit).
template <class DS, class ActT, int TOK, int RPT>
__device__ void run_unit(const DecodeArgs& a, const DecodeStage& s, long long unit, float* sums) {
  constexpr int N = RPT * TOK;
  // Weight loads in flight per thread and loop trip: 4, or 2 where 8 or 16 tokens' sums
  // and activations already fill the registers.
  constexpr int kUnroll = TOK >= 8 ? 2 : 4;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int GL = s.lanes_per_k;
  const int gl = lane & (GL - 1), kl = lane / GL, KL = 32 / GL;
  const long long group = unit * GL + gl;

  float acc[N];
#pragma unroll
  for (int i = 0; i < N; ++i)
    acc[i] = 0.0f;
  if (group < s.groups) {
    const long long e = group / s.groups_per_entry;
    const int row0 = int(group % s.groups_per_entry) * RPT;
    const int rows = min(RPT, s.rows - row0);
    const DS* w =
        static_cast<const DS*>(a.arrays[s.w.array]) + entry_offset(s.w, e, s.inner) + row0;
    const ActT* x =
        static_cast<const ActT*>(a.arrays[s.act.array]) + entry_offset(s.act, e, s.inner);
    const bool vector_w = s.vector_weights != 0, vector_x = s.vector_acts != 0;
    const int step = kWarps * KL;
    int k = warp * KL + kl;
    for (; k + (kUnroll - 1) * step < s.depth; k += kUnroll * step) {
      float wv[kUnroll][RPT];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        load_weights<DS, RPT>(wv[u], w + (k + u * step) * s.w_ld, rows, vector_w);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        float xv[TOK];
        load_acts<ActT, TOK>(xv, x + (k + u * step) * s.act_k, s.act_token, a.tokens, vector_x);
#pragma unroll
        for (int r = 0; r < RPT; ++r)
#pragma unroll
          for (int t = 0; t < TOK; ++t)
            acc[r * TOK + t] = fmaf(wv[u][r], xv[t], acc[r * TOK + t]);
      }
    }
    for (; k < s.depth; k += step) {
      float wv[RPT], xv[TOK];
      load_weights<DS, RPT>(wv, w + k * s.w_ld, rows, vector_w);
      load_acts<ActT, TOK>(xv, x + k * s.act_k, s.act_token, a.tokens, vector_x);
#pragma unroll
      for (int r = 0; r < RPT; ++r)
#pragma unroll
        for (int t = 0; t < TOK; ++t)
          acc[r * TOK + t] = fmaf(wv[r], xv[t], acc[r * TOK + t]);
    }
  }
  for (int o = 16; o >= GL; o /= 2)
#pragma unroll
    for (int i = 0; i < N; ++i)
      acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], o);
  if (kl == 0 && group < s.groups) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      atomicAdd(sums + gl * N + i, acc[i]);
  }
  __syncthreads();

  // Write the unit's rows (consecutive threads: consecutive rows of a token) and clear
  // `sums` for the next unit.
  const bool to_y = s.out.array == kDecodeY;
  for (int i = int(threadIdx.x); i < GL * N; i += kThreads) {
    const int g = i / N, rem = i % N, t = rem / RPT, r = rem % RPT;
    const int at_sum = g * N + r * TOK + t;
    const float sum = sums[at_sum];
    sums[at_sum] = 0.0f;
    const long long grp = unit * GL + g;
    if (grp >= s.groups || t >= a.tokens) continue;
    const long long e = grp / s.groups_per_entry;
    const int row = int(grp % s.groups_per_entry) * RPT + r;
    if (row >= s.rows) continue;
    const long long at = entry_offset(s.out, e, s.inner) + row * s.out_row + t * s.out_token;
    if (to_y) {
      DS* y = static_cast<DS*>(a.arrays[s.out.array]) + at;
      const float v =
          a.beta == 0.0f ? a.alpha * sum : a.alpha * sum + a.beta * float(load_value(y));
      store_value(y, v);
    } else {
      static_cast<float*>(a.arrays[s.out.array])[at] = sum;
    }
  }
  __syncthreads();
}

constexpr int kMaxSums = 32 * 64;  // GL <= 32 row groups x N <= 64 sums

template <class DS, int TOK, int RPT>
__global__ void __launch_bounds__(kThreads, 2) blr_decode_kernel(const DecodeArgs a) {
  static_assert(RPT * TOK <= 64);
  __shared__ float sums[kMaxSums];
  for (int i = int(threadIdx.x); i < kMaxSums; i += kThreads)
    sums[i] = 0.0f;
  __syncthreads();
  for (int st = 0; st < a.count; ++st) {
    if (st > 0) cg::this_grid().sync();
    const DecodeStage& s = a.stages[st];
    const bool act_storage = s.act.array == kDecodeX;
    for (long long unit = blockIdx.x; unit < s.units; unit += gridDim.x) {
      if (std::is_same_v<DS, float> || !act_storage)
        run_unit<DS, float, TOK, RPT>(a, s, unit, sums);
      else
        run_unit<DS, DS, TOK, RPT>(a, s, unit, sums);
    }
  }
}

long long pow2_floor(long long v) {
  long long p = 1;
  while (2 * p <= v)
    p *= 2;
  return p;
}

template <class DS, int TOK, int RPT>
void launch(DecodeArgs& a, cudaStream_t stream) {
  auto kernel = blr_decode_kernel<DS, TOK, RPT>;
  // Co-resident blocks only (grid.sync): the occupancy of this instance, queried once.
  static const int per_sm = [&] {
    int blocks = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, 0),
               "blr decode: occupancy");
    return std::max(blocks, 1);
  }();
  const int resident = per_sm * multiprocessors();
  long long most_units = 1;
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
    // GL row groups per unit: at least a 32-byte sector of weights per k, at most 32; as
    // many units as resident blocks where there are enough groups; and no more k slices
    // (8 warps x 32 / GL) than k.
    const long long sector = std::max<long long>(1, 32 / (RPT * sizeof(DS)));
    long long lanes =
        std::clamp<long long>(pow2_floor(std::max<long long>(s.groups / resident, 1)), sector, 32);
    while (lanes < 32 && kWarps * (32 / lanes) > s.depth)
      lanes *= 2;
    s.lanes_per_k = int(lanes);
    s.units = (s.groups + lanes - 1) / lanes;
    most_units = std::max(most_units, s.units);
  }
  const int blocks = int(std::min<long long>(most_units, resident));
  void* params[] = {&a};
  check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                         dim3(kThreads), params, 0, stream),
             "blr decode kernel (cooperative launch)");
}

// RPT: 8 rows per group (one 16-byte load of 16-bit weights), 4 with 16 tokens (registers).
template <class DS>
void launch_for_tokens(DecodeArgs& a, cudaStream_t stream) {
  if (a.tokens <= 1) return launch<DS, 1, 8>(a, stream);
  if (a.tokens <= 2) return launch<DS, 2, 8>(a, stream);
  if (a.tokens <= 4) return launch<DS, 4, 8>(a, stream);
  if (a.tokens <= 8) return launch<DS, 8, 8>(a, stream);
  return launch<DS, 16, 4>(a, stream);
}

}  // namespace

template <class Storage>
void launch_blr_decode(DecodeArgs& a, Context& ctx) {
  launch_for_tokens<DeviceScalar<Storage>>(a, static_cast<cudaStream_t>(ctx.stream()));
}
template void launch_blr_decode<float>(DecodeArgs&, Context&);
template void launch_blr_decode<half>(DecodeArgs&, Context&);
template void launch_blr_decode<bfloat16>(DecodeArgs&, Context&);

}  // namespace strop::detail
