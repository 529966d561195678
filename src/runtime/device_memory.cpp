// Device allocation and copies behind Buffer/DeviceMatrix.
#include <cstring>

#include "runtime/cuda_check.hpp"
#include "strop/core/buffer.hpp"

namespace strop::detail {

#if STROP_HAVE_CUDA
// Each entry holds a DeviceScope: a DeviceMatrix made, copied or freed with a Context(1) leaves
// the thread's current device as it found it.
void* device_allocate(std::size_t bytes, Context& ctx) {
  DeviceScope device_scope;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  void* ptr = nullptr;
  cudaError_t status = cudaMallocAsync(&ptr, bytes, stream);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw DeviceError(concat("out of device memory: requested ", bytes, " bytes on device ",
                             ctx.device(), " with ", free_bytes, " of ", total_bytes,
                             " bytes free"));
  }
  check_cuda(status, "cudaMallocAsync");
  return ptr;
}

void device_free(void* ptr, Context& ctx) noexcept {
  // Stream-ordered: the memory returns to the pool once queued work using it is done.
  DeviceScope device_scope;
  cudaFreeAsync(ptr, static_cast<cudaStream_t>(ctx.stream()));
}

void device_free_detached(void* ptr, int device) noexcept {
  {
    const DeviceScope device_scope;
    cudaSetDevice(device);
    cudaFree(ptr);  // synchronous: work of any stream still reading it finishes first
  }
  cudaGetLastError();  // at process exit the runtime may be unloading: nothing to report
}

void copy_bytes(void* dst, MemorySpace dst_space, const void* src, MemorySpace src_space,
                std::size_t bytes, Context& ctx) {
  if (bytes == 0) return;
  if (dst_space == MemorySpace::Host && src_space == MemorySpace::Host) {
    std::memcpy(dst, src, bytes);
    return;
  }
  DeviceScope device_scope;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream), "cudaMemcpyAsync");
  // Host memory handed to us is pageable and owned by the caller: finish before returning.
  if (dst_space == MemorySpace::Host || src_space == MemorySpace::Host) {
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize after copy");
  }
}
#else
void* device_allocate(std::size_t, Context&) {
  throw DeviceError("device memory requested but strop was built without CUDA (STROP_CUDA=OFF)");
}
void device_free(void*, Context&) noexcept {}
void device_free_detached(void*, int) noexcept {}
void copy_bytes(void* dst, MemorySpace dst_space, const void* src, MemorySpace src_space,
                std::size_t bytes, Context&) {
  require<DeviceError>(dst_space == MemorySpace::Host && src_space == MemorySpace::Host,
                       "device copy requested but strop was built without CUDA");
  if (bytes > 0) std::memcpy(dst, src, bytes);
}
#endif

}  // namespace strop::detail
