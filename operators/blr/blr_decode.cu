// The decode path of the BLR GEMM plans (blr_decode.hpp): one cooperative launch for all of
// a plan's stages at B <= 8 signals.
//
// A stage computes C(row, token) = sum_k W(row, k) act(k, token) for every entry of its
// batch, with W's rows contiguous (W(row, k) at row + k ld). Rows come in groups of RPT (one
// 16-byte load of 16-bit weights: 8 rows, or 4 when 8 tokens need the registers). A block
// item is 32 consecutive row groups, one per lane (so that a warp reads 512 contiguous bytes
// per k), times a chunk of k that the 8 warps share in turns of several loads in flight.
// The warps' sums meet in shared memory; a chunk that is all of k is stored, others are
// added to fp32 accumulators with atomics. Stages are separated by grid.sync(), except that
// BLAST's coupling stage, where it is cheap enough, is folded into the last stage's
// activations (fold_coupling, couple_into). The last stage's accumulators go to Y (alpha,
// beta, rounding) in the block that completes a row set last (a counter per row set). The
// accumulators stay in a per-layout workspace of the context that every call leaves zeroed
// (blr_decode_kernel.hpp): no allocation or memset per call.
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "operators/blr/blr_batch_entry.cuh"
#include "operators/blr/blr_decode_kernel.hpp"
#include "operators/blr/blr_gemm_device.hpp"
#include "operators/blr/weight_words.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/buffer.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

namespace cg = cooperative_groups;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;

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

// Where a lane's activations act(k, token) come from.
// Global: X (read-only path) or a fp32 workspace written earlier in this launch (L2).
template <class ActT, int TOK>
struct GlobalActs {
  const ActT* x;
  long long k_step, token_step;
  bool vector;
  // Entry e of stage s's activations; `shift`: values from the array to the copy this call
  // works in (Z1, Z2; 0 for X).
  __device__ __forceinline__ static GlobalActs of(const DecodeArgs& a, const DecodeStage& s, int e,
                                                  long long shift) {
    return {static_cast<const ActT*>(a.arrays[s.act.array]) + shift + entry_offset(s.act, e),
            s.act_k, s.act_token, s.vector_acts != 0};
  }
  __device__ __forceinline__ void load(float (&v)[TOK], int k, int tokens) const {
    load_acts<ActT, TOK>(v, x + k * k_step, token_step, tokens, vector);
  }
};
// Shared: values the block computed for its item (the folded coupling), [k - k_begin][TOK],
// zero for tokens past the last.
template <int TOK>
struct SharedActs {
  const float* x;
  int k_begin;
  __device__ __forceinline__ void load(float (&v)[TOK], int k, int) const {
    const float* p = x + (k - k_begin) * TOK;
    if constexpr (TOK % 4 == 0) {
#pragma unroll
      for (int t = 0; t < TOK; t += 4) {
        const float4 q = *reinterpret_cast<const float4*>(p + t);
        v[t] = q.x, v[t + 1] = q.y, v[t + 2] = q.z, v[t + 3] = q.w;
      }
    } else {
#pragma unroll
      for (int t = 0; t < TOK; ++t)
        v[t] = p[t];
    }
  }
};

// Weight loads in flight per lane and loop trip: 32 words' worth with 1 or 2 tokens, fewer
// where the tokens' sums need the registers.
template <class DS, int TOK, int RPT>
constexpr int kUnroll = std::max(1, (TOK <= 2   ? 32
                                     : TOK <= 4 ? 16
                                                : 8) *
                                        4 / (RPT * int(sizeof(DS))));

// This lane's sums for row group `group` over its share of k in [k_begin, k_end): the block's
// 8 warps take turns of U consecutive k (U loads in flight per lane and turn). Aligned full
// row groups take a loop without branches around the loads.
// `acts_of(e)`: the activations of entry e (GlobalActs or SharedActs).
template <class DS, int TOK, int RPT, class ActsOf>
__device__ __forceinline__ void lane_sums(float (&acc)[RPT * TOK], const DecodeArgs& a,
                                          const DecodeStage& s, long long group, int k_begin,
                                          int k_end, const ActsOf& acts_of) {
  constexpr int U = kUnroll<DS, TOK, RPT>;
#pragma unroll
  for (int i = 0; i < RPT * TOK; ++i)
    acc[i] = 0.0f;
  if (group >= s.groups) return;
  // 32-bit division (the launch checks that the numbers fit).
  const int per_entry = int(s.groups_per_entry), e = int(group) / per_entry;
  const int row0 = (int(group) - e * per_entry) * RPT;
  const int rows = min(RPT, s.rows - row0);
  const DS* w = static_cast<const DS*>(a.arrays[s.w.array]) + entry_offset(s.w, e) + row0;
  const auto acts = acts_of(e);
  const bool vector_w = s.vector_weights != 0 && rows == RPT;
  auto multiply_add = [&](const WeightWords<DS, RPT>& wv, int k) {
    float xv[TOK];
    acts.load(xv, k, a.tokens);
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      const float wr = wv.value(r);
#pragma unroll
      for (int t = 0; t < TOK; ++t)
        acc[r * TOK + t] = fmaf(wr, xv[t], acc[r * TOK + t]);
    }
  };
  const int warp = int(threadIdx.x) / 32;
  int k = k_begin + warp * U;
  if (vector_w) {
    for (; k + U <= k_end; k += kWarps * U) {
      WeightWords<DS, RPT> wv[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        wv[u].load_vector(w + (k + u) * s.w_ld);
#pragma unroll
      for (int u = 0; u < U; ++u)
        multiply_add(wv[u], k + u);
    }
  }
  // The rest (and everything of ragged or unaligned groups) one k at a time.
  for (; k < k_end; k += kWarps * U)
    for (int kk = k; kk < min(k + U, k_end); ++kk) {
      WeightWords<DS, RPT> wv;
      wv.load(w + kk * s.w_ld, rows, vector_w);
      multiply_add(wv, kk);
    }
}

// Calls f(l, r, t, at) for every value of row set `set` in the stage's output: row r of the
// set's row group l, token t, at offset `at`; spread over the block's threads, consecutive
// threads on consecutive rows.
template <int TOK, int RPT, class F>
__device__ __forceinline__ void for_each_output(const DecodeArgs& a, const DecodeStage& s,
                                                long long set, F f) {
  for (int i = int(threadIdx.x); i < 32 * RPT * TOK; i += kThreads) {
    const int t = i / (32 * RPT), rem = i % (32 * RPT), l = rem / RPT, r = rem % RPT;
    const int group = int(set) * 32 + l;
    if (group >= s.groups || t >= a.tokens) continue;
    const int per_entry = int(s.groups_per_entry), e = group / per_entry;
    const int row = (group - e * per_entry) * RPT + r;
    if (row >= s.rows) continue;
    f(l, r, t, entry_offset(s.out, e) + row * s.out_row + t * s.out_token);
  }
}

// *y = alpha sum + beta *y (beta == 0: *y is not read), rounded to Y's type.
template <class DS>
__device__ __forceinline__ void store_scaled(const DecodeArgs& a, DS* y, float sum) {
  store_value(y, a.beta == 0.0f ? a.alpha * sum : a.alpha * sum + a.beta * float(load_value(y)));
}

// One block item: 32 row groups (one per lane) over the chunk [k_begin, k_end) of k. The
// warps' sums meet in shared memory; then either the item is the whole of k (stored: to the
// fp32 workspace, or to Y with alpha and beta) or its sums are added to `accum` with atomics
// (consecutive threads on consecutive rows).
template <class DS, int TOK, int RPT, class ActsOf>
__device__ void run_item(const DecodeArgs& a, const DecodeStage& s, long long set, int k_begin,
                         int k_end, const ActsOf& acts_of, float* accum, float* partial) {
  constexpr int N = RPT * TOK;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  float acc[N];
  lane_sums<DS, TOK, RPT>(acc, a, s, set * 32 + lane, k_begin, k_end, acts_of);
#pragma unroll
  for (int i = 0; i < N; ++i)
    partial[(warp * N + i) * 32 + lane] = acc[i];  // [warp][i][lane]: no bank conflicts
  __syncthreads();
  const bool whole = s.chunks == 1;
  for_each_output<TOK, RPT>(a, s, set, [&](int l, int r, int t, long long at) {
    float sum = 0.0f;
#pragma unroll
    for (int wp = 0; wp < kWarps; ++wp)
      sum += partial[(wp * N + r * TOK + t) * 32 + l];
    if (!whole)
      atomicAdd(accum + at, sum);
    else if (s.out.array == kDecodeY)
      store_scaled(a, static_cast<DS*>(a.arrays[kDecodeY]) + at, sum);
    else
      accum[at] = sum;
  });
  __syncthreads();  // `partial` is reused by the next item
}

// The most coupled values one item of the last stage computes when the coupling is folded:
// two per thread (each a round of loads).
constexpr int kFoldFloats = 2 * kThreads;

// The folded coupling (DecodeArgs::Coupling): the activations of the last stage's entries
// [e_first, e_first + entries) over k in [k_begin, k_begin + len), each a sum over the input
// blocks j of s(o, j, k) Z1(k, j, token) (o: the last stage's entry; k: the rank index, the
// coupling stage c's entry), into coupled[(entry * len + k) * TOK + token]. Consecutive
// threads take consecutive tokens, then consecutive k, so that the reads of s (k contiguous)
// and of Z1 (tokens contiguous) are coalesced, and each thread loads up to 16 blocks' terms
// before adding them. Measured alternatives (bench/NOTES-blr.md, session 26): s in the
// coupling stage's by-rank layout (o fastest) made every item read whole rows of all blocks
// for the one or two it needed (Llama-7B gate_up 8 us slower); staging Z1's rows in shared
// memory first cost a round trip that the small grids felt; k fastest left 8 tokens' Z1
// reads a sector each (DiT-XL/2 15 % slower at B = 8).
template <class DS, int TOK>
__device__ void couple_into(float* coupled, const DecodeArgs& a, const DecodeStage& c, int e_first,
                            int entries, int k_begin, int len, long long z_shift) {
  constexpr int kBatch = 16;  // terms in flight per thread
  const int blocks = c.depth;
  const DS* s = static_cast<const DS*>(a.arrays[a.coupling.array]);
  const float* z = static_cast<const float*>(a.arrays[c.act.array]) + z_shift;
  for (int i = int(threadIdx.x); i < entries * len * TOK; i += kThreads) {
    const int token = i % TOK, rest = i / TOK, kk = rest % len, ee = rest / len;
    const int k = k_begin + kk;
    const DS* sk = s + (e_first + ee) * a.coupling.o_stride + k;
    const float* zk = z + entry_offset(c.act, k) + token * c.act_token;
    float sum = 0.0f;
    for (int j0 = 0; token < a.tokens && j0 < blocks; j0 += kBatch) {
      float sv[kBatch], zv[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const bool in = j0 + b < blocks;
        sv[b] = in ? float(load_value(sk + (j0 + b) * a.coupling.j_stride)) : 0.0f;
        zv[b] = in ? __ldcg(zk + (j0 + b) * c.act_k) : 0.0f;
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        sum = fmaf(sv[b], zv[b], sum);
    }
    coupled[(ee * len + kk) * TOK + token] = sum;
  }
  __syncthreads();
}

// The last stage's row set `set` is complete: Y = alpha accum + beta Y for its rows, and the
// accumulators zeroed for the next call.
template <class DS, int TOK, int RPT>
__device__ void write_set(const DecodeArgs& a, const DecodeStage& s, long long set) {
  DS* y = static_cast<DS*>(a.arrays[kDecodeY]);
  for_each_output<TOK, RPT>(a, s, set, [&](int, int, int, long long at) {
    store_scaled(a, y + at, __ldcg(a.y_accum + at));
    a.y_accum[at] = 0.0f;
  });
}

// Zeroes the copy of Z1 and Z2 that the next call works in (this call does not touch it).
__device__ void zero_other_copy(const DecodeArgs& a, int copy) {
  float4* other =
      reinterpret_cast<float4*>(static_cast<float*>(a.arrays[kDecodeZ1]) + (1 - copy) * a.z_span);
  for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < a.z_span / 4;
       i += (long long)gridDim.x * kThreads)
    other[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

template <class DS, int TOK, int RPT>
__global__ void __launch_bounds__(kThreads, TOK <= 2 ? 3 : 2)
    blr_decode_kernel(const DecodeArgs a) {
  __shared__ float partial[kWarps * RPT * TOK * 32];
  __shared__ __align__(16) float coupled[kFoldFloats];
  __shared__ int finishing, copy;
  // Every block reads the epoch before the first grid barrier; block 0 advances it after.
  if (threadIdx.x == 0) copy = a.count > 1 ? __ldcg(a.epoch) & 1 : 0;
  __syncthreads();
  const long long z_shift = copy * a.z_span;
  if (a.count > 1) zero_other_copy(a, copy);
  const bool fold = a.coupling.fold != 0;
  for (int st = 0; st < a.count; ++st) {
    if (fold && st == 1) continue;  // the last stage computes the coupled values itself
    if (st > 0) cg::this_grid().sync();
    if (st == (fold ? 2 : 1) && blockIdx.x == 0 && threadIdx.x == 0) *a.epoch += 1;
    const DecodeStage& s = a.stages[st];
    const bool last = st == a.count - 1;
    float* accum = last ? a.y_accum : static_cast<float*>(a.arrays[s.out.array]) + z_shift;
    const bool act_storage = s.act.array == kDecodeX;
    const long long act_shift = act_storage ? 0 : z_shift;
    for (int item = int(blockIdx.x); item < int(s.items); item += int(gridDim.x)) {
      const int set = item / s.chunks;
      const int chunk = item - set * s.chunks;
      const int k_begin = chunk * s.chunk_k, k_end = min(s.depth, k_begin + s.chunk_k);
      if (fold && last) {
        // The entries this set's row groups belong to (the launch sized `coupled` for them).
        const int per_entry = s.groups_per_entry, len = k_end - k_begin;
        const int e_first = set * 32 / per_entry;
        const int e_last = min(set * 32 + 31, int(s.groups) - 1) / per_entry;
        couple_into<DS, TOK>(coupled, a, a.stages[1], e_first, e_last - e_first + 1, k_begin, len,
                             z_shift);
        run_item<DS, TOK, RPT>(
            a, s, set, k_begin, k_end,
            [&](int e) {
              return SharedActs<TOK>{coupled + (e - e_first) * len * TOK, k_begin};
            },
            accum, partial);
      } else if (std::is_same_v<DS, float> || !act_storage) {
        run_item<DS, TOK, RPT>(
            a, s, set, k_begin, k_end,
            [&](int e) { return GlobalActs<float, TOK>::of(a, s, e, act_shift); }, accum, partial);
      } else {
        run_item<DS, TOK, RPT>(
            a, s, set, k_begin, k_end, [&](int e) { return GlobalActs<DS, TOK>::of(a, s, e, 0); },
            accum, partial);
      }
      if (!last || s.chunks == 1) continue;
      // The block that adds the last chunk of a row set writes it to Y (the pattern of the
      // CUDA threadFenceReduction sample: fence, count, fence, read through L2) and resets
      // the set's counter and accumulators.
      __threadfence();
      if (threadIdx.x == 0) {
        finishing = atomicAdd(a.counters + set, 1) == s.chunks - 1;
        if (finishing) a.counters[set] = 0;
      }
      __syncthreads();
      if (finishing) {
        __threadfence();
        write_set<DS, TOK, RPT>(a, s, set);
      }
      __syncthreads();
    }
  }
}

// Folds a three-stage plan's coupling (stage 1) into the last stage's activations where the
// plan side gave the couplings by output block, the last stage reads exactly what the
// coupling writes with the roles of entry and row swapped (BLAST: Z2[o][t][b], written by the
// coupling's entry t, row o, read by the last stage's entry o at k = t). This saves a grid barrier
// and a stage, and costs each item of the last stage its coupled values (couple_into): at most two
// per thread, or the fold is not taken. Measured on the H100 (bench/NOTES-blr.md, session 26; graph
// replay, B = 1-8, the 15 layers of blr_bench): with that rule every folded layer got faster (BLAST
// decode medians 0.81-0.85 of session 25's time), while the items of 3-6 values per thread it
// excludes (Llama-7B gate_up at B = 2 and 4, Llama-3.2-1B gate and up at B = 8) were 4-13 % slower
// folded.
template <int TOK>
void fold_coupling(DecodeArgs& a) {
  a.coupling.fold = 0;
  if (a.count != 3 || a.coupling.array < 0) return;
  const DecodeStage& c = a.stages[1];
  const DecodeStage& l = a.stages[2];
  const bool reads_what_coupling_writes =
      c.out.array == l.act.array && c.act.array != kDecodeX && l.entries == c.rows &&
      l.depth == c.entries && l.act.offset == c.out.offset && l.act.stride == c.out_row &&
      l.act_k == c.out.stride && l.act_token == c.out_token;
  if (!reads_what_coupling_writes) return;
  // The most entries one row set (32 row groups) touches.
  long long span = 1;
  for (long long first = 0; first < l.groups; first += 32)
    span = std::max(span, std::min(first + 31, l.groups - 1) / l.groups_per_entry -
                              first / l.groups_per_entry + 1);
  a.coupling.fold = span * l.chunk_k * TOK <= kFoldFloats;
}

template <class DS, int TOK, int RPT>
void launch(DecodeArgs& a, Context& ctx) {
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto kernel = blr_decode_kernel<DS, TOK, RPT>;
  const long long resident =
      resident_blocks<blr_decode_kernel<DS, TOK, RPT>>(kThreads);  // grid.sync: co-resident
  long long most_items = 1;
  for (int st = 0; st < a.count; ++st) {
    DecodeStage& s = a.stages[st];
    s.groups_per_entry = (s.rows + RPT - 1) / RPT;
    s.groups = s.entries * s.groups_per_entry;
    // Whole vector loads: every row group's first weight aligned in every entry and k.
    const long long align = std::min<long long>(16, RPT * sizeof(DS)) / sizeof(DS);
    s.vector_weights = s.w.offset % align == 0 && s.w.stride % align == 0 && s.w_ld % align == 0;
    // float4 activations: fp32 (a workspace, or float signals), tokens contiguous, aligned.
    const bool act_float = std::is_same_v<DS, float> || s.act.array != kDecodeX;
    // The array's own start too: X is the caller's view (any float offset), Z2 starts
    // z1_size floats into the workspace (Z1 and the workspace are 16-byte aligned).
    const bool act_base_aligned =
        s.act.array == kDecodeX ? reinterpret_cast<std::uintptr_t>(a.arrays[kDecodeX]) % 16 == 0
                                : s.act.array != kDecodeZ2 || a.z1_size % 4 == 0;
    s.vector_acts = act_float && TOK % 4 == 0 && a.tokens == TOK && s.act_token == 1 &&
                    s.act_k % 4 == 0 && s.act.offset % 4 == 0 && s.act.stride % 4 == 0 &&
                    act_base_aligned;
    // Chunks of k: the stage's work spread over the resident blocks (whole turns of the
    // 8 warps' unrolled loops), so that no block walks a long chain of dependent turns
    // while others idle.
    constexpr int U = kUnroll<DS, TOK, RPT>;
    const long long sets = (s.groups + 31) / 32;
    const long long turn = kWarps * U;
    long long chunk = (sets * s.depth + resident - 1) / resident;
    chunk = std::min<long long>(s.depth, (chunk + turn - 1) / turn * turn);
    s.chunk_k = int(chunk);
    s.chunks = int((s.depth + chunk - 1) / chunk);
    s.items = sets * s.chunks;
    // The kernel's index arithmetic is 32-bit: row groups (with the 32 of a set's lanes past
    // the last) and items.
    if (s.groups + 32 > INT_MAX || s.items > INT_MAX)
      throw ShapeError(concat("blr decode kernel: ", s.groups, " row groups exceed its 32-bit ",
                              "index arithmetic"));
  }
  fold_coupling<TOK>(a);
  for (int st = 0; st < a.count; ++st)
    if (!(a.coupling.fold && st == 1)) most_items = std::max(most_items, a.stages[st].items);
  const int blocks = int(std::min<long long>(most_items, resident));

  // The accumulators: Z1 and Z2 twice, Y's, the last stage's row-set counters and the epoch
  // (blr_decode_kernel.hpp), from the context's workspace for this layout.
  const DecodeStage& last = a.stages[a.count - 1];
  const long long sets = last.items / last.chunks;
  a.z_span = (a.z1_size + a.z2_size + 3) / 4 * 4;
  const long long floats = 2 * a.z_span + a.y_extent + sets + 1;
  const std::string key =
      concat("blr_decode z", a.z1_size, "+", a.z2_size, " y", a.y_extent, " sets", sets);
  float* base = static_cast<float*>(ctx.persistent_workspace(key, sizeof(float) * floats));
  std::optional<Buffer<float>> during_capture;
  if (base == nullptr) {  // a graph is being captured and the workspace is not made yet
    during_capture.emplace(floats, MemorySpace::Device, ctx);
    check_cuda(cudaMemsetAsync(during_capture->data(), 0, sizeof(float) * floats, stream),
               "blr decode: zeroing the accumulators");
    base = during_capture->data();
  }
  a.arrays[kDecodeZ1] = base;
  a.arrays[kDecodeZ2] = base + a.z1_size;
  a.y_accum = base + 2 * a.z_span;
  a.counters = reinterpret_cast<int*>(a.y_accum + a.y_extent);
  a.epoch = a.counters + sets;
  void* params[] = {&a};
  check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                         dim3(kThreads), params, 0, stream),
             "blr decode kernel (cooperative launch)");
}

// RPT: 8 rows per group (one 16-byte load of 16-bit weights), 4 with 8 tokens (registers and
// the shared memory of the warps' sums).
template <class DS>
void launch_for_tokens(DecodeArgs& a, Context& ctx) {
  static_assert(kDecodeMaxBatch == 8);
  if (a.tokens <= 1) return launch<DS, 1, 8>(a, ctx);
  if (a.tokens <= 2) return launch<DS, 2, 8>(a, ctx);
  if (a.tokens <= 4) return launch<DS, 4, 8>(a, ctx);
  return launch<DS, 8, 4>(a, ctx);
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
