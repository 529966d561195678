#include "strop/core/context.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#if STROP_HAVE_CUDA
#include <cublasLt.h>
#endif

#include "runtime/cuda_check.hpp"
#include "strop/core/error.hpp"

namespace strop {

namespace {
[[noreturn]] void no_cuda_build(const char* what) {
  throw DeviceError(detail::concat(what, ": strop was built without CUDA (STROP_CUDA=OFF)"));
}
}  // namespace

#if STROP_HAVE_CUDA
namespace {
// Buffers are stream-ordered allocations from the device's default pool, which by default
// returns freed memory to the driver at every synchronization: a factorization that uploads
// a 134 MB matrix then maps it afresh on each call. Keeping up to half of the device's
// memory in the pool makes repeated calls reuse it; the rest is still given back.
void keep_freed_device_memory(int device) {
  cudaMemPool_t pool = nullptr;
  std::size_t free_bytes = 0, total_bytes = 0;
  detail::check_cuda(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  detail::check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  std::uint64_t threshold = total_bytes / 2;
  detail::check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                     "cudaMemPoolSetAttribute(ReleaseThreshold)");
}
}  // namespace

struct Context::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cublasLtHandle_t cublas_lt = nullptr;
  cusolverDnHandle_t cusolver = nullptr;
  struct Block {
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  std::map<std::string, Block> workspaces;
  bool visible = false;  // the device was found once

  // Makes the device current for this thread. Every stream() use passes here, several times
  // per operator call, so the common case (already current) costs one cudaGetDevice.
  void activate() {
    int current = -1;
    if (visible && cudaGetDevice(&current) == cudaSuccess && current == device) return;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();  // clear the sticky "no device" error
      throw DeviceError("no CUDA device is visible (cudaGetDeviceCount returned 0)");
    }
    require<DeviceError>(device < count, "CUDA device ", device, " requested but only ", count,
                         " visible");
    detail::check_cuda(cudaSetDevice(device), "cudaSetDevice");
    visible = true;
  }
  ~Impl() {
    if (!visible) return;  // nothing was made on the device
    // The handles, stream and blocks belong to `device`: release them with it current
    // (cuBLAS assumes its handle's device stays current until cublasDestroy, which
    // synchronises the current device), then give the thread back its device: a Context(1)
    // may be destroyed by a thread that works on device 0.
    int current = -1;
    const bool switch_device = cudaGetDevice(&current) == cudaSuccess && current != device;
    if (switch_device) cudaSetDevice(device);
    if (!workspaces.empty()) {
      cudaStreamSynchronize(stream);  // queued work may still use them
      for (auto& [key, block] : workspaces)
        cudaFree(block.data);
    }
    if (cusolver != nullptr) cusolverDnDestroy(cusolver);
    if (cublas_lt != nullptr) cublasLtDestroy(cublas_lt);
    if (cublas != nullptr) cublasDestroy(cublas);
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (switch_device) cudaSetDevice(current);
    cudaGetLastError();  // at process exit the runtime may be unloading: nothing to report
  }
};

Context::Context(int device) : impl_(std::make_unique<Impl>()) {
  require<DeviceError>(device >= 0, "Context: negative device id ", device);
  impl_->device = device;
}
Context::~Context() = default;
int Context::device() const {
  return impl_->device;
}

void* Context::stream() {
  impl_->activate();
  if (impl_->stream == nullptr) {
    detail::check_cuda(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking),
                       "cudaStreamCreate");
    keep_freed_device_memory(impl_->device);
  }
  return impl_->stream;
}

void* Context::cublas() {
  cudaStream_t s = static_cast<cudaStream_t>(stream());
  if (impl_->cublas == nullptr) {
    detail::check_cublas(cublasCreate(&impl_->cublas), "cublasCreate");
    detail::check_cublas(cublasSetStream(impl_->cublas, s), "cublasSetStream");
  }
  return impl_->cublas;
}

void* Context::cublas_lt() {
  impl_->activate();
  if (impl_->cublas_lt == nullptr)
    detail::check_cublas(cublasLtCreate(&impl_->cublas_lt), "cublasLtCreate");
  return impl_->cublas_lt;
}

void* Context::cusolver() {
  cudaStream_t s = static_cast<cudaStream_t>(stream());
  if (impl_->cusolver == nullptr) {
    detail::check_cusolver(cusolverDnCreate(&impl_->cusolver), "cusolverDnCreate");
    detail::check_cusolver(cusolverDnSetStream(impl_->cusolver, s), "cusolverDnSetStream");
  }
  return impl_->cusolver;
}

void Context::synchronize() {
  if (impl_->stream == nullptr) return;
  detail::check_cuda(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize");
}

bool Context::capturing() {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  detail::check_cuda(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream()), &status),
                     "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

void* Context::persistent_workspace(const std::string& key, std::size_t bytes) {
  cudaStream_t s = static_cast<cudaStream_t>(stream());
  if (auto found = impl_->workspaces.find(key); found != impl_->workspaces.end()) {
    require<DeviceError>(bytes <= found->second.bytes, "Context: workspace '", key, "' holds ",
                         found->second.bytes, " bytes, ", bytes, " requested");
    return found->second.data;
  }
  if (capturing()) return nullptr;
  // cudaMalloc, not the stream-ordered pool: the block outlives every stream operation.
  void* data = nullptr;
  const cudaError_t allocated = cudaMalloc(&data, bytes);
  if (allocated == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw DeviceError(detail::concat("out of device memory: workspace '", key, "' of ", bytes,
                                     " bytes on device ", impl_->device));
  }
  detail::check_cuda(allocated, "cudaMalloc (workspace)");
  const cudaError_t zeroed = cudaMemsetAsync(data, 0, bytes, s);
  if (zeroed != cudaSuccess) cudaFree(data);
  detail::check_cuda(zeroed, "cudaMemsetAsync (workspace)");
  impl_->workspaces[key] = {data, bytes};
  return data;
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

const char* device_name(int device) {
  static std::string names[64];
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (device < 0 || device >= device_count() || device >= 64) return "none";
  if (names[device].empty()) {
    cudaDeviceProp prop{};
    detail::check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    names[device] = prop.name;
  }
  return names[device].c_str();
}

#else
struct Context::Impl {
  int device = 0;
};
Context::Context(int device) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
}
Context::~Context() = default;
int Context::device() const {
  return impl_->device;
}
void* Context::stream() {
  no_cuda_build("Context::stream");
}
void* Context::cublas() {
  no_cuda_build("Context::cublas");
}
void* Context::cublas_lt() {
  no_cuda_build("Context::cublas_lt");
}
void* Context::cusolver() {
  no_cuda_build("Context::cusolver");
}
void Context::synchronize() {}
bool Context::capturing() {
  return false;
}
void* Context::persistent_workspace(const std::string&, std::size_t) {
  no_cuda_build("Context::persistent_workspace");
}
int device_count() {
  return 0;
}
const char* device_name(int) {
  return "none";
}
#endif

bool cuda_available() {
  return device_count() > 0;
}

Context& default_context() {
  static Context context(0);
  return context;
}

}  // namespace strop
