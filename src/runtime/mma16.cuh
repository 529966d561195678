#pragma once
// Tensor-core helpers for 16-bit operands (half, bfloat16) with fp32 accumulation, shared
// by the kernels that use mma.sync.m16n8k16 (the Hadamard kernel, the KS kernel).
// Fragments follow the PTX layouts: A row-major 16 x 16 (four 32-bit registers), B
// column-major 16 x 8 (two), C/D 16 x 8 in fp32 (four); lane = 4 g + t holds rows g and g + 8,
// columns (k) 2 t, 2 t + 1 and 2 t + 8, 2 t + 9.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace strop::detail {

// Two floats rounded to a 16-bit pair (lo in the low half), and back.
__device__ __forceinline__ uint32_t pack(__half, float lo, float hi) {
  const __half2 pair = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&pair);
}
__device__ __forceinline__ uint32_t pack(__nv_bfloat16, float lo, float hi) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&pair);
}
__device__ __forceinline__ float2 unpack(__half, uint32_t word) {
  return __half22float2(*reinterpret_cast<const __half2*>(&word));
}
__device__ __forceinline__ float2 unpack(__nv_bfloat16, uint32_t word) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&word));
}

// d = A B + c for one m16n8k16 product (fp32 accumulation).
__device__ __forceinline__ void mma_add(__half, float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1, const float (&c)[4]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void mma_add(__nv_bfloat16, float (&d)[4], const uint32_t (&a)[4],
                                        uint32_t b0, uint32_t b1, const float (&c)[4]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}
// d = A B (accumulation from zero).
template <class S>
__device__ __forceinline__ void mma(S s, float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  mma_add(s, d, a, b0, b1, zero);
}

// Four 8 x 8 16-bit matrices from shared memory: lanes 8 m ... 8 m + 7 give the addresses of
// matrix m's rows (16 bytes each); register m receives this lane's pair of matrix m (row
// lane / 4, columns 2 (lane % 4), +1).
__device__ __forceinline__ void load_matrices_x4(uint32_t (&r)[4], const void* shared_row) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(shared_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// The same with each matrix transposed on the way (ldmatrix .trans): lanes 8 m ... 8 m + 7
// give the addresses of matrix m's rows; register m receives this lane's pair of the
// transpose (rows 2 (lane % 4), +1 of matrix m, column lane / 4), which is a B fragment's
// pair when the rows are indexed by k.
__device__ __forceinline__ void load_matrices_x4_trans(uint32_t (&r)[4], const void* shared_row) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(shared_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// cp.async of one unit (8 or 16 bytes) from global to shared memory, bypassing registers;
// zeros where `fill` is false (src not read). The tensor-core kernels stage their operand
// chunks with it, several chunks in flight.
template <int Bytes>
__device__ __forceinline__ void copy_async(void* shared_dst, const void* global_src, bool fill) {
  const auto dst = static_cast<uint32_t>(__cvta_generic_to_shared(shared_dst));
  const int src_bytes = fill ? Bytes : 0;
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(global_src),
                 "r"(src_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(global_src),
                 "n"(Bytes), "r"(src_bytes));
}
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::);
}
// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

}  // namespace strop::detail
