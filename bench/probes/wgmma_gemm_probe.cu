// Probe (not part of the library): a bf16 GEMM on Hopper's wgmma tensor cores with TMA loads,
// against cuBLAS in the same run. C (M x N, row-major, bf16) = A (M x K, row-major) B^T
// (B: N x K, row-major), fp32 accumulation. Question: how close does a plain TMA + wgmma
// kernel (128 x 128 tiles, 64-deep stages, one producer warp and two consumer warpgroups)
// come to cuBLAS's rate? The STL, Monarch and BLAST fusions (bench/NOTES-stl.md, NOTES-blr.md)
// need a GEMM of our own near cuBLAS's before their epilogues can be fused.
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o wgmma_probe
//   bench/probes/wgmma_gemm_probe.cu -lcublas
//   ./wgmma_probe [M N K]
#include <cublas_v2.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CHECK(x)                                                                           \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

#ifndef WGMMA_BN
#define WGMMA_BN 128
#endif
#ifndef WGMMA_INFLIGHT
#define WGMMA_INFLIGHT 1
#endif
#ifndef WGMMA_GROUP
#define WGMMA_GROUP 0
#endif
#ifndef WGMMA_STAGES
#define WGMMA_STAGES 5
#endif
constexpr int BM = 128, BN = WGMMA_BN, BK = 64, STAGES = WGMMA_STAGES;
constexpr int kConsumers = 2;                     // warpgroups, 64 rows of the tile each
constexpr int kThreads = 128 * (kConsumers + 1);  // + one producer warpgroup
constexpr int kABytes = BM * BK * 2, kBBytes = BN * BK * 2;
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kSharedBytes = STAGES * kStageBytes + 1024 + 2 * STAGES * 8;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, int parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  }
}
// 2D TMA load of the box at (c0 = inner, c1 = outer) into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, int c0, int c1,
                                         uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];\n" ::"r"(smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}
// wgmma descriptor of a K-major tile with 128-byte swizzle: rows of 64 bf16 (128 bytes),
// groups of 8 rows 1024 bytes apart.
__device__ __forceinline__ uint64_t descriptor(const void* tile) {
  const uint64_t address = smem_addr(tile);
  return ((address & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}
__device__ __forceinline__ void wgmma_tile(float (&d)[BN / 2], uint64_t desc_a, uint64_t desc_b,
                                           int scale_d) {
#if WGMMA_BN == 128
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, "
      "%9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "
      "%27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "
      "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, "
      "%63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#elif WGMMA_BN == 256
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, "
      "%9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "
      "%27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "
      "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, "
      "%63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, "
      "%81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, "
      "%99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, "
      "%114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, "
      "%129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#else
#error "WGMMA_BN: 128 or 256"
#endif
}

__global__ void __launch_bounds__(kThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                const __grid_constant__ CUtensorMap map_b, __nv_bfloat16* c, int M, int N, int K,
                int permute_rows) {
  // Batch blockIdx.y: A's rows from batch * M, B's K from batch * K (Monarch's first stage:
  // batch = input block i, A = [R_0i; R_1i; ...], B = X's features of block i). permute_rows
  // = r > 0 stores row m = o r + t of batch i at row (o batches + i) r + t of C (Z1[o][i][t][b],
  // the Monarch permutation in the store); 0 stores it at row batch * M + m.
  const int batch = blockIdx.y, batches = gridDim.y;
  extern __shared__ __align__(1024) unsigned char raw[];
  // 1024-byte alignment for the swizzled tiles.
  unsigned char* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(raw) + 1023) &
                                                         ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(base + STAGES * kStageBytes);
  uint64_t* empty = full + STAGES;
  const int warpgroup = threadIdx.x / 128;
  // Tile order: WGMMA_GROUP consecutive row tiles sweep the columns together (operands
  // re-read from L2 while they are still there); 0: row-major order of the tiles.
  const int tiles_m = M / BM, tiles_n = (N + BN - 1) / BN, t = blockIdx.x;
  int m_tile = t / tiles_n, n_tile = t % tiles_n;
  if (WGMMA_GROUP > 0) {
    const int per_group = WGMMA_GROUP * tiles_n, first = t / per_group * WGMMA_GROUP;
    const int size = min(tiles_m - first, WGMMA_GROUP);
    m_tile = first + (t % per_group) % size;
    n_tile = (t % per_group) / size;
  }
  const int m0 = m_tile * BM, n0 = n_tile * BN;
  const int chunks = K / BK;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {  // producer: one thread issues the loads
    if (threadIdx.x == 0) {
      for (int k = 0; k < chunks; ++k) {
        const int s = k % STAGES;
        if (k >= STAGES) mbar_wait(&empty[s], ((k / STAGES) - 1) & 1);
        unsigned char* stage = base + s * kStageBytes;
        mbar_expect_tx(&full[s], kStageBytes);
        tma_load(stage, &map_a, k * BK, batch * M + m0, &full[s]);
        tma_load(stage + kABytes, &map_b, batch * K + k * BK, n0, &full[s]);
      }
    }
    return;
  }
  // consumers: warpgroup w computes rows 64 (w - 1).. of the tile.
  const int w = warpgroup - 1;
  float d[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i)
    d[i] = 0.0f;
  for (int k = 0; k < chunks; ++k) {
    const int s = k % STAGES;
    mbar_wait(&full[s], (k / STAGES) & 1);
    unsigned char* stage = base + s * kStageBytes;
    const unsigned char* a = stage + w * 64 * 128;  // 64 rows of 128 bytes
    const unsigned char* b = stage + kABytes;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)  // 16 values = 32 bytes along K
      wgmma_tile(d, descriptor(a + 32 * kk), descriptor(b + 32 * kk), (k > 0 || kk > 0) ? 1 : 0);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#if WGMMA_INFLIGHT
    // One group in flight: the previous chunk's products are done, its stage can refill.
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    if (k > 0 && threadIdx.x % 128 == 0) mbar_arrive(&empty[(k - 1) % STAGES]);
#else
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    if (threadIdx.x % 128 == 0) mbar_arrive(&empty[s]);
#endif
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  // D fragment: warp q of the warpgroup holds rows 16 q + lane / 4 (+ 8), columns
  // 8 i + 2 (lane % 4) (+ 1) in d[4 i ..].
  const int q = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int row = m0 + 64 * w + 16 * q + lane / 4;
  auto out_row = [&](int m) -> long long {
    if (permute_rows == 0) return (long long)batch * M + m;
    const int o = m / permute_rows, t = m - o * permute_rows;
    return ((long long)o * batches + batch) * permute_rows + t;
  };
  __nv_bfloat16* c0 = c + out_row(row) * N;
  __nv_bfloat16* c8 = c + out_row(row + 8) * N;
#pragma unroll
  for (int i = 0; i < BN / 8; ++i) {
    const int col = n0 + 8 * i + 2 * (lane % 4);
    if (col >= N) continue;
    *reinterpret_cast<__nv_bfloat162*>(c0 + col) = __floats2bfloat162_rn(d[4 * i], d[4 * i + 1]);
    *reinterpret_cast<__nv_bfloat162*>(c8 + col) =
        __floats2bfloat162_rn(d[4 * i + 2], d[4 * i + 3]);
  }
}

// Tensor map of a row-major rows x cols bf16 matrix, boxes of box_rows x 64 with 128-byte
// swizzle.
CUtensorMap make_map(PFN_cuTensorMapEncodeTiled_v12000 encode, const void* p, int rows, int cols,
                     int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(cols) * 2};
  const cuuint32_t box[2] = {64, cuuint32_t(box_rows)};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r =
      encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(p), dims, strides, box,
             elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled failed: %d\n", int(r));
    std::exit(1);
  }
  return map;
}

template <class F>
double median_ms(F f, int reps = 20) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 3; ++i)
    f();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(e0);
    f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return (t[reps / 2 - 1] + t[reps / 2]) / 2;
}

int monarch_stage1(int argc, char** argv);

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "monarch") return monarch_stage1(argc, argv);
  const int M = argc > 3 ? std::atoi(argv[1]) : 8192, N = argc > 3 ? std::atoi(argv[2]) : 8192,
            K = argc > 3 ? std::atoi(argv[3]) : 8192;
  if (M % BM || N % BN || K % BK) {
    std::printf("M, N, K must be multiples of %d, %d, %d\n", BM, BN, BK);
    return 1;
  }
  std::vector<__nv_bfloat16> ha(size_t(M) * K), hb(size_t(N) * K);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& v : ha)
    v = __float2bfloat16(u(gen));
  for (auto& v : hb)
    v = __float2bfloat16(u(gen));
  __nv_bfloat16 *a, *b, *c, *c_ref;
  CHECK(cudaMalloc(&a, ha.size() * 2));
  CHECK(cudaMalloc(&b, hb.size() * 2));
  CHECK(cudaMalloc(&c, size_t(M) * N * 2));
  CHECK(cudaMalloc(&c_ref, size_t(M) * N * 2));
  CHECK(cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));

  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &q));
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  const CUtensorMap map_a = make_map(encode, a, M, K, BM), map_b = make_map(encode, b, N, K, BN);
  CHECK(
      cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  const dim3 grid((N / BN) * (M / BM));
  auto ours = [&] { gemm_kernel<<<grid, kThreads, kSharedBytes>>>(map_a, map_b, c, M, N, K, 0); };
  cublasHandle_t h;
  cublasCreate(&h);
  const float one = 1, zero = 0;
  // C^T (N x M, column-major) = B A^T: B as a K x N column-major matrix transposed, A as K x M.
  auto ref = [&] {
    cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, CUDA_R_16BF, K, a, CUDA_R_16BF, K,
                 &zero, c_ref, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  ours();
  ref();
  CHECK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> hc(size_t(M) * N), hr(size_t(M) * N);
  CHECK(cudaMemcpy(hc.data(), c, hc.size() * 2, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hr.data(), c_ref, hr.size() * 2, cudaMemcpyDeviceToHost));
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < hc.size(); ++i) {
    max_diff =
        std::max(max_diff, double(std::fabs(__bfloat162float(hc[i]) - __bfloat162float(hr[i]))));
    max_ref = std::max(max_ref, double(std::fabs(__bfloat162float(hr[i]))));
  }
  // A few entries against a double-precision dot product too.
  double max_exact = 0;
  for (int t = 0; t < 64; ++t) {
    const int i = (t * 7919) % M, j = (t * 104729) % N;
    double s = 0;
    for (int k = 0; k < K; ++k)
      s +=
          double(__bfloat162float(ha[size_t(i) * K + k])) * __bfloat162float(hb[size_t(j) * K + k]);
    max_exact = std::max(max_exact, std::fabs(s - __bfloat162float(hc[size_t(i) * N + j])));
  }
  const double t_ours = median_ms(ours), t_ref = median_ms(ref);
  const double flops = 2.0 * M * N * K;
  std::printf(
      "M=%d N=%d K=%d BN=%d STAGES=%d INFLIGHT=%d GROUP=%d: ours %.3f ms (%.0f TFLOP/s), cuBLAS "
      "%.3f ms (%.0f TFLOP/s), "
      "ours/cuBLAS time %.2f; max |ours - cuBLAS| %.3g (max |C| %.3g), max |ours - exact| on 64 "
      "entries %.3g\n",
      M, N, K, BN, STAGES, WGMMA_INFLIGHT, WGMMA_GROUP, t_ours, flops / t_ours * 1e-9, t_ref,
      flops / t_ref * 1e-9, t_ours / t_ref, max_diff, max_ref, max_exact);
  CHECK(cudaGetLastError());
  return max_diff <= 1e-2 * max_ref ? 0 : 2;
}

// Monarch's first stage on the Llama-7B 4096 x 4096 layer (b = 16 blocks of 256, rank 64 per
// block pair, B tokens): Z1[o][i][t][b] = sum_k R[i][o][t][k] X[b][256 i + k], as our kernel
// batched over i with the permutation in the store, against cuBLAS's pointer-batched GEMM of
// the 256 (i, o) products that the library's plan runs today.
//   ./wgmma_probe monarch [B]
int monarch_stage1(int argc, char** argv) {
  const int blocks = 16, block = 256, rank = 64, tokens = argc > 2 ? std::atoi(argv[2]) : 1024;
  const int in = blocks * block, M = blocks * rank, K = block;  // per input block i
  std::vector<__nv_bfloat16> hx(size_t(tokens) * in), hr(size_t(blocks) * M * K);
  std::mt19937 gen(2);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& v : hx)
    v = __float2bfloat16(u(gen));
  for (auto& v : hr)
    v = __float2bfloat16(u(gen));
  const size_t z_values = size_t(blocks) * blocks * rank * tokens;
  __nv_bfloat16 *x, *r, *z, *z_ref;
  CHECK(cudaMalloc(&x, hx.size() * 2));
  CHECK(cudaMalloc(&r, hr.size() * 2));
  CHECK(cudaMalloc(&z, z_values * 2));
  CHECK(cudaMalloc(&z_ref, z_values * 2));
  CHECK(cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(r, hr.data(), hr.size() * 2, cudaMemcpyHostToDevice));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &q));
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  // A: R as (blocks * M) x K rows; B: X as tokens x in.
  const CUtensorMap map_a = make_map(encode, r, blocks * M, K, BM);
  const CUtensorMap map_b = make_map(encode, x, tokens, in, BN);
  CHECK(
      cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  const dim3 grid(((tokens + BN - 1) / BN) * (M / BM), blocks);
  auto ours = [&] {
    gemm_kernel<<<grid, kThreads, kSharedBytes>>>(map_a, map_b, z, M, tokens, K, rank);
  };
  // cuBLAS, column-major: C'(b, t) of pair (o, i) = sum_k X(256 i + k, b) R_io(k, t), C' at
  // Z1[o][i] with ld = tokens (the plan's pointer-batched product).
  std::vector<void*> hp(3 * blocks * blocks);
  for (int o = 0; o < blocks; ++o)
    for (int i = 0; i < blocks; ++i) {
      const int e = o * blocks + i;
      hp[e] = x + size_t(i) * block;
      hp[blocks * blocks + e] = r + (size_t(i) * M + size_t(o) * rank) * K;
      hp[2 * blocks * blocks + e] = z_ref + size_t(e) * rank * tokens;
    }
  void** dp;
  CHECK(cudaMalloc(&dp, hp.size() * sizeof(void*)));
  CHECK(cudaMemcpy(dp, hp.data(), hp.size() * sizeof(void*), cudaMemcpyHostToDevice));
  cublasHandle_t h;
  cublasCreate(&h);
  const float one = 1, zero = 0;
  const int count = blocks * blocks;
  auto ref = [&] {
    cublasGemmBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, tokens, rank, K, &one, dp, CUDA_R_16BF, in,
                        dp + count, CUDA_R_16BF, K, &zero, dp + 2 * count, CUDA_R_16BF, tokens,
                        count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  ours();
  ref();
  CHECK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> hz(z_values), hzr(z_values);
  CHECK(cudaMemcpy(hz.data(), z, z_values * 2, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hzr.data(), z_ref, z_values * 2, cudaMemcpyDeviceToHost));
  double max_diff = 0, max_ref = 0;
  for (size_t e = 0; e < z_values; ++e) {
    max_diff =
        std::max(max_diff, double(std::fabs(__bfloat162float(hz[e]) - __bfloat162float(hzr[e]))));
    max_ref = std::max(max_ref, double(std::fabs(__bfloat162float(hzr[e]))));
  }
  const double t_ours = median_ms(ours), t_ref = median_ms(ref);
  const double flops = 2.0 * blocks * M * double(tokens) * K;
  std::printf(
      "Monarch stage 1, Llama-7B 4096 (b = 16, rank 64 per block), B = %d, BN=%d: ours %.1f us "
      "(%.0f TFLOP/s), cuBLAS pointer batch %.1f us (%.0f TFLOP/s), cuBLAS/ours %.2f; max "
      "|ours - cuBLAS| %.3g (max |Z1| %.3g)\n",
      tokens, BN, t_ours * 1e3, flops / t_ours * 1e-9, t_ref * 1e3, flops / t_ref * 1e-9,
      t_ref / t_ours, max_diff, max_ref);
  CHECK(cudaGetLastError());
  return max_diff <= 1e-2 * max_ref ? 0 : 2;
}
