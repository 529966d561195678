#pragma once
// Launches a persistent kernel in thread-block clusters (internal header, CUDA sources only).
#include <algorithm>
#include <cstddef>

#include <cuda_runtime.h>

#include "runtime/cuda_check.hpp"

namespace strop::detail {

// kernel(args) in clusters of `cluster` CTAs of `threads` threads and `shared` bytes of dynamic
// shared memory each: as many clusters as the device holds at once, and no more than `units`
// (the kernel's clusters stride over its units of work).
template <class Args>
void launch_persistent_clusters(void (*kernel)(Args), const Args& args, int cluster, int threads,
                                std::size_t shared, long long units, cudaStream_t stream,
                                const char* name) {
  allow_dynamic_shared_memory(kernel, shared, name);
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = unsigned(cluster);
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = attribute;
  // Devices before sm_90 refuse the attribute: there a cluster is one block, launched without.
  const bool clusters = device_has_clusters();
  config.numAttrs = clusters ? 1 : 0;
  int resident = 0;
  if (clusters) {
    config.gridDim = dim3(unsigned(cluster));
    check_cuda(cudaOccupancyMaxActiveClusters(&resident, kernel, &config), name);
  } else {
    require<DeviceError>(cluster == 1, name, ": clusters of ", cluster,
                         " blocks on a device without clusters");
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads, shared),
               name);
    resident *= multiprocessors();
  }
  const long long grid = std::min<long long>(units, std::max(resident, 1));
  config.gridDim = dim3(unsigned(grid * cluster));
  check_cuda(cudaLaunchKernelEx(&config, kernel, args), name);
  check_launch(name);
}

}  // namespace strop::detail
