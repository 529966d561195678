#pragma once
// Thread-block cluster operations for kernels that also compile for targets without clusters
// (before sm_90, e.g. the A100's sm_80): there every cluster is one block, which is what the
// host launches on such a device (device_has_clusters in cuda_check.hpp). Internal header, CUDA
// sources only.
#include <cooperative_groups.h>

namespace strop::detail {

// This block's rank in its cluster.
__device__ __forceinline__ int cluster_block_rank() {
#if __CUDA_ARCH__ >= 900
  return int(cooperative_groups::this_cluster().block_rank());
#else
  return 0;
#endif
}

// A barrier over every thread of the cluster, its shared-memory writes visible to them all.
__device__ __forceinline__ void cluster_barrier() {
#if __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#else
  __syncthreads();
#endif
}

// The split barrier: arrive without ordering this thread's memory operations, then wait for
// the whole cluster (for the last barrier, before a block leaves while others may read it).
__device__ __forceinline__ void cluster_arrive_relaxed() {
#if __CUDA_ARCH__ >= 900
  __cluster_barrier_arrive_relaxed();
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if __CUDA_ARCH__ >= 900
  __cluster_barrier_wait();
#else
  __syncthreads();
#endif
}

// Block `rank`'s copy of this block's shared variable at `p` (distributed shared memory).
template <class T>
__device__ __forceinline__ T* cluster_shared(T* p, int rank) {
#if __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(p, rank);
#else
  return rank == 0 ? p : nullptr;
#endif
}

}  // namespace strop::detail
