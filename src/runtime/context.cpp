#include "strop/core/context.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#if STROP_HAVE_CUDA
#include <cublasLt.h>
#include <cuda.h>  // driver types only: its entry points are looked up at run time
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

// Whether `device`'s primary context exists. Since CUDA 12, making a device current creates
// its context (a few hundred MB of that device's memory), so a thread is given back a device
// only where that costs nothing: a process that works on device 1 alone never starts device 0
// (the default current device) through strop. Asked through the driver's entry point, so that
// strop does not link libcuda (absent on machines without a GPU driver).
bool primary_context_active(int device) {
  using GetState = CUresult (*)(CUdevice, unsigned int*, int*);
  static const GetState get_state = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &function, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return GetState(nullptr);
    }
    return reinterpret_cast<GetState>(function);
  }();
  if (get_state == nullptr) return true;  // unknown: give the device back regardless
  unsigned int flags = 0;
  int active = 0;
  // The runtime's device ordinals are the driver's CUdevice values.
  return get_state(CUdevice(device), &flags, &active) == CUDA_SUCCESS && active != 0;
}

// Makes `device` current again for the calling thread where it is not and has a context.
void give_back_device(int device) {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  if (current == device || !primary_context_active(device)) return;
  if (cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
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
  // per operator call, so the common case (already current) costs one cudaGetDevice; a call's
  // DeviceScope switches back afterwards, so the next call on another device's context
  // switches again (without asking for the device count).
  void activate() {
    int current = -1;
    if (visible && cudaGetDevice(&current) == cudaSuccess) {
      if (current != device) detail::check_cuda(cudaSetDevice(device), "cudaSetDevice");
      return;
    }
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
    const detail::DeviceScope device_scope;
    cudaSetDevice(device);  // its context exists: the handles were made in it
    if (!workspaces.empty()) {
      cudaStreamSynchronize(stream);  // queued work may still use them
      for (auto& [key, block] : workspaces)
        cudaFree(block.data);
    }
    if (cusolver != nullptr) cusolverDnDestroy(cusolver);
    if (cublas_lt != nullptr) cublasLtDestroy(cublas_lt);
    if (cublas != nullptr) cublasDestroy(cublas);
    if (stream != nullptr) cudaStreamDestroy(stream);
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

namespace detail {
bool device_started(int device) {
  return primary_context_active(device);
}

DeviceScope::DeviceScope(bool device_work) {
  if (device_work && cudaGetDevice(&previous_) != cudaSuccess) {
    cudaGetLastError();
    previous_ = -1;
  }
}
DeviceScope::~DeviceScope() {
  if (previous_ >= 0) give_back_device(previous_);
}

void require_usable_on_device(const void* data, Context& ctx, const char* argument,
                              const char* name) {
  if (data == nullptr) return;  // an empty view
  cudaPointerAttributes memory{};
  check_cuda(cudaPointerGetAttributes(&memory, data), "cudaPointerGetAttributes");
  const int device = ctx.device();
  switch (memory.type) {
    case cudaMemoryTypeManaged:
      return;
    case cudaMemoryTypeDevice:
      require<DeviceError>(memory.device == device, name, ": ", argument,
                           " is in the memory of device ", memory.device,
                           ", but the context runs on device ", device, "; copy it to device ",
                           device, " or apply with a Context(", memory.device, ")");
      return;
    case cudaMemoryTypeHost:
      // Pinned host memory: usable where it is mapped at the same address (unified addressing).
      require<DeviceError>(memory.devicePointer == data, name, ": ", argument,
                           " is pinned host memory that device ", device,
                           " cannot address directly; copy it to the device (to_device)");
      return;
    default:
      throw DeviceError(concat(name, ": ", argument,
                               " is marked as device memory (MemorySpace::Device) but is host",
                               " memory unknown to CUDA; copy it to the device (to_device) or",
                               " view it as MemorySpace::Host"));
  }
}
}  // namespace detail

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
namespace detail {
bool device_started(int) {
  return false;
}
DeviceScope::DeviceScope(bool) {}
DeviceScope::~DeviceScope() = default;
// Without CUDA no device work starts (the context's stream() throws first).
void require_usable_on_device(const void*, Context&, const char*, const char*) {}
}  // namespace detail
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
