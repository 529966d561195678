#pragma once
// Turns CUDA runtime, cuBLAS and cuSOLVER status codes into DeviceError (internal header).
#if STROP_HAVE_CUDA
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>

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

// The calling thread's current device (a Context makes its own current before its work).
inline int current_device() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

// The current device's number of multiprocessors (for sizing grids).
inline int multiprocessors() {
  int count = 0;
  check_cuda(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, current_device()),
             "cudaDeviceGetAttribute(MultiProcessorCount)");
  return count;
}

// A property of each device that hot paths read, computed by make(device) the first time it
// is asked for on that device, then kept for the process. Not a plain function-local static:
// that keeps the first device's value and hands it to the contexts of every other device
// (a Context(1) on a machine of two different GPUs). Thread-safe.
template <class T>
class PerDevice {
 public:
  template <class Make>
  const T& get(Make&& make) {
    const int device = current_device();
    require<DeviceError>(device < kMaxDevices, "CUDA device ", device, " beyond the ", kMaxDevices,
                         " that strop keeps device properties for");
    Slot& slot = slots_[std::size_t(device)];
    if (!slot.ready.load(std::memory_order_acquire)) {
      std::lock_guard lock(mutex_);
      if (!slot.ready.load(std::memory_order_relaxed)) {
        slot.value = make(device);
        slot.ready.store(true, std::memory_order_release);
      }
    }
    return slot.value;
  }

 private:
  static constexpr int kMaxDevices = 64;
  struct Slot {
    std::atomic<bool> ready{false};
    T value{};
  };
  std::mutex mutex_;
  std::array<Slot, kMaxDevices> slots_;
};

// Whether the current device launches thread-block clusters (compute capability 9.0 and
// later); asked once per device. Kernels that pair blocks in clusters take one block per
// cluster elsewhere (an A100, say).
inline bool device_has_clusters() {
  static PerDevice<bool> clusters;
  return clusters.get([](int device) {
    int major = 0;
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
               "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
    return major >= 9;
  });
}

// Blocks of Kernel (with `threads` threads, static shared memory only) that the current
// device holds at once: the largest grid a cooperative launch (grid.sync) may have. The
// occupancy per multiprocessor is queried once per kernel (a template argument, so that
// kernels of one signature keep their own; each passes one `threads`) and device.
template <auto Kernel>
long long resident_blocks(int threads) {
  static PerDevice<int> per_sm;
  const int blocks = per_sm.get([&](int) {
    int count = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, Kernel, threads, 0),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return std::max(count, 1);
  });
  return (long long)blocks * multiprocessors();
}

// The dynamic shared memory one block of the current device may opt in to (227 KB on
// sm_90, 163 KB on sm_80, 99 KB on sm_86 and sm_89), asked once per device. Kernels whose
// tiles are sized for sm_90 take smaller tiles or leave the work to another path where a
// device has less (cuda_check.cpp). Lowered by SharedMemoryCapForTesting (shared_memory.hpp).
std::size_t shared_memory_per_block();

// Lets `kernel` launch on the current device with `bytes` of dynamic shared memory (above
// 48 KB the kernel must opt in: cudaFuncAttributeMaxDynamicSharedMemorySize). That attribute
// belongs to the kernel on one device and is shared by every host thread, so it only grows
// here: setting it to each launch's own size let a thread launching the same kernel with less
// shared memory lower it between another thread's setting and launch, which then failed
// (cudaErrorInvalidValue). Recorded per kernel and device (cuda_check.cpp).
void allow_dynamic_shared_memory(const void* kernel, std::size_t bytes, const char* what);
template <class... Args>
void allow_dynamic_shared_memory(void (*kernel)(Args...), std::size_t bytes, const char* what) {
  allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), bytes, what);
}

}  // namespace strop::detail
#endif
