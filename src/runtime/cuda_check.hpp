#pragma once
// Turns CUDA runtime, cuBLAS and cuSOLVER status codes into DeviceError (internal header).
#if STROP_HAVE_CUDA
#include <algorithm>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "strop/core/error.hpp"

namespace strop::detail {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw DeviceError(
        concat(what, ": ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ")"));
  }
}

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw DeviceError(concat(what, ": cuBLAS status ", static_cast<int>(status), " (",
                             cublasGetStatusString(status), ")"));
  }
}

inline void check_cusolver(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw DeviceError(concat(what, ": cuSOLVER status ", static_cast<int>(status)));
}

// Checks the launch of the kernel just queued (asynchronous errors surface later).
inline void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), kernel);
}

// The current device's number of multiprocessors (for sizing grids).
inline int multiprocessors() {
  int device = 0, count = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(MultiProcessorCount)");
  return count;
}

// Blocks of Kernel (with `threads` threads, static shared memory only) that the current
// device holds at once: the largest grid a cooperative launch (grid.sync) may have. The
// occupancy per multiprocessor is queried once per kernel (a template argument, so that
// kernels of one signature keep their own).
template <auto Kernel>
long long resident_blocks(int threads) {
  static const int per_sm = [&] {
    int blocks = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Kernel, threads, 0),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return std::max(blocks, 1);
  }();
  return (long long)per_sm * multiprocessors();
}

}  // namespace strop::detail
#endif
