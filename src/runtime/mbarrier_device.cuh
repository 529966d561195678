#pragma once
// Shared-memory barriers (mbarrier) and named CTA barriers for kernels whose warps play
// different roles (producers and consumers of tile buffers). On sm_90 an arrival may target
// the barrier of another block of the cluster; before sm_90 (no clusters) every barrier is
// this block's. Internal header, CUDA sources only.
#include <cstdint>

namespace strop::detail {

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return unsigned(__cvta_generic_to_shared(p));
}

// Waits at barrier `id` (1..15; 0 is __syncthreads) until `threads` threads of this block
// (whole warps) have arrived.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count)
               : "memory");
}

// Makes the initialisations visible to the cluster (before the cluster barrier that precedes
// any remote arrival).
__device__ __forceinline__ void mbarrier_init_fence() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
  __threadfence_block();
#endif
}

// One arrival on block `rank`'s copy of `bar`. Release: this thread's earlier memory
// operations (and those ordered before them by a CTA barrier) are visible to a thread that
// sees the phase complete with an acquire at cluster scope. Relaxed: orders nothing (for
// arrivals after reads whose values were already used, where a release would also wait for
// this thread's global stores to drain).
template <bool Release>
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar, int rank) {
#if __CUDA_ARCH__ >= 900
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(shared_address(bar)), "r"(rank));
  if constexpr (Release)
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
                 : "memory");
  else
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
                 : "memory");
#else
  (void)rank;
  std::uint64_t state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];"
               : "=l"(state)
               : "r"(shared_address(bar))
               : "memory");
  (void)state;
#endif
}

// Waits until the phase of `bar` with the given parity has completed, then sees the memory
// operations its arrivals released (from the whole cluster).
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, unsigned parity) {
  const unsigned address = shared_address(bar);
  unsigned done = 0;
  while (!done) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(address), "r"(parity)
        : "memory");
#else
    asm volatile(
        "{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(address), "r"(parity)
        : "memory");
#endif
  }
}

// An arrival on `bar` (of this block) when every cp.async this thread issued so far has
// landed; the barrier's count must include it (noinc).
__device__ __forceinline__ void mbarrier_arrive_on_copies(std::uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(shared_address(bar))
               : "memory");
}

}  // namespace strop::detail
