// small_inner_gemm on tensor cores (blr_plan_kernels.hpp): 16-bit values, k and n <= 16.
// The CUDA-core kernel does k x n fp32 FMAs per row; at b = 16 (BLAST's coupling stage on
// the Llama layers) that is 256 per row, more than its memory time for 16-bit rows. Here
// each block computes C_j^T (n x m) = op(B_j)^T (n x k) A_j^T (k x m) as m16n8k16 products
// with fp32 accumulation:
// - op(B_j)^T, padded to 16 x 16 with zeros, is every warp's A operand, built once;
// - the block stages 256 rows of A_j (16 columns, 16-byte copies) in shared memory, column by
//   column, so that ldmatrix .trans hands out B fragments of 8 rows (tokens) each;
// - the fp32 results go back through shared memory, and C_j's columns are written in 16-byte
//   pieces, with alpha and beta applied and rounded once.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "operators/blr/blr_plan_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kRows = 256;          // rows of A_j and C_j per block
constexpr int kWarps = 8;           // 32 rows (four n8 tiles) per warp
constexpr int kPitch = kRows + 8;   // shared row pitch: 16 bytes of padding spread ldmatrix's rows
constexpr int kPieces = kRows / 8;  // 16-byte pieces (8 values) per column of the tile

template <class S>
__global__ void __launch_bounds__(kWarps * 32) small_inner_mma_kernel(const SmallInnerGemm g) {
  __shared__ alignas(16) S a_tile[16][kPitch];      // A_j(row0 + r, p) at [p][r]
  __shared__ alignas(16) float c_tile[16][kPitch];  // C_j(row0 + r, q) (sums) at [q][r]
  __shared__ float op_b[16][16];                    // op(B_j)(p, q)
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  const Index j = blockIdx.x, row0 = Index(blockIdx.y) * kRows;
  const S* b = static_cast<const S*>(g.b) + j * g.stride_b;
  const S* a = static_cast<const S*>(g.a) + j * g.stride_a;
  S* c = static_cast<S*>(g.c) + j * g.stride_c;

  for (int e = int(threadIdx.x); e < 16 * 16; e += kWarps * 32) {
    const int p = e / 16, q = e % 16;
    op_b[p][q] = p < g.k && q < g.n
                     ? float(load_value(b + (g.trans_b ? q + p * g.ldb : p + q * g.ldb)))
                     : 0.0f;
  }
  // Columns p >= k and rows past m are zeros, so they add nothing.
  for (int e = int(threadIdx.x); e < 16 * kPieces; e += kWarps * 32) {
    const int p = e / kPieces, piece = e % kPieces;
    const Index row = row0 + 8 * piece;
    S* dst = &a_tile[p][8 * piece];
    if (p < g.k && row + 8 <= g.m) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(a + row + p * g.lda);
    } else {
      for (int i = 0; i < 8; ++i)
        dst[i] = p < g.k && row + i < g.m ? a[row + i + p * g.lda] : S(0.0f);
    }
  }
  __syncthreads();

  // A operand: (op(B_j)^T)(o, i) = op_b[i][o]; lane 4 gr + t holds rows gr, gr + 8 and
  // columns 2 t, 2 t + 1, 2 t + 8, 2 t + 9 (mma16.cuh).
  const int gr = lane / 4, t = lane % 4;
  const uint32_t operand[4] = {pack(S(), op_b[2 * t][gr], op_b[2 * t + 1][gr]),
                               pack(S(), op_b[2 * t][gr + 8], op_b[2 * t + 1][gr + 8]),
                               pack(S(), op_b[2 * t + 8][gr], op_b[2 * t + 9][gr]),
                               pack(S(), op_b[2 * t + 8][gr + 8], op_b[2 * t + 9][gr + 8])};
  // Matrix m of an ldmatrix: k rows 8 (m % 2) ..., tokens 8 (m / 2) ... of the 16-row step.
  const int m = lane / 8, k_row = 8 * (m % 2) + lane % 8;
#pragma unroll
  for (int step = 0; step < 2; ++step) {
    const int token0 = 32 * warp + 16 * step;
    uint32_t frag[4];  // B fragments: tokens token0 ... (k 0-7, 8-15), token0 + 8 ... (same)
    load_matrices_x4_trans(frag, &a_tile[k_row][token0 + 8 * (m / 2)]);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float d[4];
      mma(S(), d, operand, frag[2 * half], frag[2 * half + 1]);
      const int token = token0 + 8 * half + 2 * t;
      *reinterpret_cast<float2*>(&c_tile[gr][token]) = make_float2(d[0], d[1]);
      *reinterpret_cast<float2*>(&c_tile[gr + 8][token]) = make_float2(d[2], d[3]);
    }
  }
  __syncthreads();

  const float alpha = float(g.alpha), beta = float(g.beta);
  for (int e = int(threadIdx.x); e < int(g.n) * kPieces; e += kWarps * 32) {
    const int q = e / kPieces, piece = e % kPieces;
    const Index row = row0 + 8 * piece;
    S* out = c + row + q * g.ldc;
    const float* sums = &c_tile[q][8 * piece];
    if (row + 8 <= g.m) {
      // The lanes' 8 sums lie 32 bytes apart, so 16-byte reads of their first halves would
      // hit each bank twice per quarter warp; lanes 4-7 of each quarter read their second
      // half first, and the 8 reads fall in 32 different banks.
      const int first = (piece / 4) % 2;
      const float4 read0 = *reinterpret_cast<const float4*>(sums + 4 * first);
      const float4 read1 = *reinterpret_cast<const float4*>(sums + 4 - 4 * first);
      const float4 lo = first ? read1 : read0, hi = first ? read0 : read1;
      const float value[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
      uint4 old{};
      if (beta != 0.0f) old = *reinterpret_cast<const uint4*>(out);
      const uint32_t old_words[4] = {old.x, old.y, old.z, old.w};
      uint32_t words[4];
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        float2 v = make_float2(alpha * value[2 * w], alpha * value[2 * w + 1]);
        if (beta != 0.0f) {
          const float2 o = unpack(S(), old_words[w]);
          v.x += beta * o.x, v.y += beta * o.y;
        }
        words[w] = pack(S(), v.x, v.y);
      }
      *reinterpret_cast<uint4*>(out) = make_uint4(words[0], words[1], words[2], words[3]);
    } else {
      for (int i = 0; row + i < g.m; ++i) {
        const float v = alpha * sums[i];
        store_value(out + i, beta == 0.0f ? v : v + beta * float(load_value(out + i)));
      }
    }
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

// Up to 8 x 8 the CUDA-core kernel is faster (measured on an H100 at b = 3 and 6: about half
// this kernel's time, whose fixed cost per block of 256 rows is a 16-column tile); from 9 on
// this one (b = 9: 1.05-1.4x, b = 16: 1.25-1.95x; bench/NOTES-blr.md, session 17).
bool small_inner_mma_takes(const SmallInnerGemm& g, std::size_t value_bytes) {
  return value_bytes == 2 && std::max(g.k, g.n) > 8 && g.k <= 16 && g.n <= 16 && aligned16(g.a) &&
         aligned16(g.c) && g.lda % 8 == 0 && g.ldc % 8 == 0 && g.stride_a % 8 == 0 &&
         g.stride_c % 8 == 0;
}

template <class Storage>
void small_inner_mma(const SmallInnerGemm& g, Context& ctx) {
  using S = DeviceScalar<Storage>;
  const Index row_blocks = (g.m + kRows - 1) / kRows;
  require<DeviceError>(row_blocks <= 65535 && g.batch < (Index(1) << 31),
                       "small_inner_gemm: too many rows or products");
  small_inner_mma_kernel<S><<<dim3(unsigned(g.batch), unsigned(row_blocks)), kWarps * 32, 0,
                              static_cast<cudaStream_t>(ctx.stream())>>>(g);
  check_launch("small_inner_gemm (tensor cores)");
}

template void small_inner_mma<half>(const SmallInnerGemm&, Context&);
template void small_inner_mma<bfloat16>(const SmallInnerGemm&, Context&);

}  // namespace strop::detail
