// The decode path of the BLR GEMM plans (blr_decode.hpp): one cooperative launch for all of
// a plan's stages at B <= 16 signals.
//
// A stage computes C(row, token) = sum_k W(row, k) act(k, token) for every entry of its
// batch, with W's rows contiguous (W(row, k) at row + k ld). The work is cut into row groups
// of RPT consecutive rows (one 16-byte load of 16-bit weights: 8 rows, or 4 when 16 tokens
// need the registers); a block unit is G row groups, and its 8 warps split k 8 / G ways on
// top of the 32 lanes, so that every thread has several independent weight loads in flight.
// Each lane keeps RPT x TOK sums; a shuffle reduce-scatter leaves each lane a few of the
// warp's totals, the warps of a group add theirs through shared memory, and the block writes
// the rows. Stages are separated by grid.sync(); intermediates are fp32.
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
constexpr int kUnroll = 4;  // weight loads in flight per thread and loop trip

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

template <class ActT, int TOK>
__device__ __forceinline__ void load_acts(float (&x)[TOK], const ActT* p, long long token_stride,
                                          int tokens) {
#pragma unroll
  for (int t = 0; t < TOK; ++t)
    x[t] = t < tokens ? float(load_value(p + t * token_stride)) : 0.0f;
}

// Halving reduce-scatter over the 32 lanes of the first C of N values: at the step of lane
// bit O, lanes with that bit keep the upper half. Afterwards a lane holds, in v[0 ..
// max(1, N / 32)), the warp's totals of the values lane / (32 / N) (N < 32) or
// j + (N / 32) lane (N >= 32).
template <int N, int C, int O>
__device__ __forceinline__ void reduce_scatter(float (&v)[N], int lane) {
  if constexpr (O >= 1) {
    if constexpr (C >= 2) {
      const bool upper = lane & O;
#pragma unroll
      for (int i = 0; i < C / 2; ++i) {
        const float send = upper ? v[i] : v[i + C / 2];
        const float keep = upper ? v[i + C / 2] : v[i];
        v[i] = keep + __shfl_xor_sync(0xffffffffu, send, O);
      }
      reduce_scatter<N, C / 2, O / 2>(v, lane);
    } else {
      v[0] += __shfl_xor_sync(0xffffffffu, v[0], O);
      reduce_scatter<N, 1, O / 2>(v, lane);
    }
  }
}

template <class DS, class ActT, int TOK, int RPT>
__device__ void run_unit(const DecodeArgs& a, const DecodeStage& s, long long unit,
                         float (&partial)[kWarps][RPT * TOK]) {
  constexpr int N = RPT * TOK;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int G = s.groups_per_unit, splits = kWarps / G;
  const int g = warp % G, split = warp / G;
  const long long group = unit * G + g;

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
    const bool vector = s.vector_weights != 0;
    const int step = splits * 32;
    int k = split * 32 + lane;
    for (; k + (kUnroll - 1) * step < s.depth; k += kUnroll * step) {
      float wv[kUnroll][RPT];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        load_weights<DS, RPT>(wv[u], w + (k + u * step) * s.w_ld, rows, vector);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        float xv[TOK];
        load_acts<ActT, TOK>(xv, x + (k + u * step) * s.act_k, s.act_token, a.tokens);
#pragma unroll
        for (int r = 0; r < RPT; ++r)
#pragma unroll
          for (int t = 0; t < TOK; ++t)
            acc[r * TOK + t] = fmaf(wv[u][r], xv[t], acc[r * TOK + t]);
      }
    }
    for (; k < s.depth; k += step) {
      float wv[RPT], xv[TOK];
      load_weights<DS, RPT>(wv, w + k * s.w_ld, rows, vector);
      load_acts<ActT, TOK>(xv, x + k * s.act_k, s.act_token, a.tokens);
#pragma unroll
      for (int r = 0; r < RPT; ++r)
#pragma unroll
        for (int t = 0; t < TOK; ++t)
          acc[r * TOK + t] = fmaf(wv[r], xv[t], acc[r * TOK + t]);
    }
  }

  reduce_scatter<N, N, 16>(acc, lane);
  constexpr int per = N >= 32 ? N / 32 : 1;          // totals a lane holds
  constexpr int group_lanes = N >= 32 ? 1 : 32 / N;  // lanes holding the same total
  if (lane % group_lanes == 0) {
#pragma unroll
    for (int j = 0; j < per; ++j)
      partial[warp][j + per * (lane / group_lanes)] = acc[j];
  }
  __syncthreads();

  // The block's G row groups: add the splits' totals and write, tokens slowest so that
  // consecutive threads write consecutive rows.
  const bool to_y = s.out.array == kDecodeY;
  for (int i = int(threadIdx.x); i < G * N; i += kThreads) {
    const int gi = i / N, rem = i % N, t = rem / RPT, r = rem % RPT;
    const long long grp = unit * G + gi;
    if (grp >= s.groups || t >= a.tokens) continue;
    const long long e = grp / s.groups_per_entry;
    const int row = int(grp % s.groups_per_entry) * RPT + r;
    if (row >= s.rows) continue;
    float sum = 0.0f;
    for (int sp = 0; sp < splits; ++sp)
      sum += partial[sp * G + gi][r * TOK + t];
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
  __syncthreads();  // `partial` is reused by the next unit
}

template <class DS, int TOK, int RPT>
__global__ void __launch_bounds__(kThreads) blr_decode_kernel(const DecodeArgs a) {
  __shared__ float partial[kWarps][RPT * TOK];
  for (int st = 0; st < a.count; ++st) {
    if (st > 0) cg::this_grid().sync();
    const DecodeStage& s = a.stages[st];
    const bool act_storage = s.act.array == kDecodeX;
    for (long long unit = blockIdx.x; unit < s.units; unit += gridDim.x) {
      if (std::is_same_v<DS, float> || !act_storage)
        run_unit<DS, float, TOK, RPT>(a, s, unit, partial);
      else
        run_unit<DS, DS, TOK, RPT>(a, s, unit, partial);
    }
  }
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
    // Whole vector loads: every row group's first weight aligned in every entry and k.
    const long long align = std::min<long long>(16, RPT * sizeof(DS)) / sizeof(DS);
    s.vector_weights = s.rows % RPT == 0 && s.w.offset % align == 0 && s.w.stride % align == 0 &&
                       s.w.outer % align == 0 && s.w_ld % align == 0;
    s.groups = s.entries * s.groups_per_entry;
    // G row groups per unit: enough k per thread (>= kUnroll trips of 8 / G warps x 32
    // lanes) for loads in flight, then fewer when the units would not fill the GPU.
    int G = 1;
    while (G < kWarps && (kWarps / G) * 32 * kUnroll > s.depth)
      G *= 2;
    while (G > 1 && (s.groups + G - 1) / G < resident)
      G /= 2;
    s.groups_per_unit = G;
    s.units = (s.groups + G - 1) / G;
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
