#pragma once
// strop::Context = device id + stream + cuBLAS and cuSOLVER handles + persistent workspaces
// (+ later: tuning cache).
// Every application takes one; default_context() serves users who do not care.
// A context is used by one thread at a time (make one per stream/thread). Device matrices and
// temporaries made with a context are freed on its stream, so they must not outlive it;
// operators may (their device copies serve every context of the device). Calls that take a
// context make its device current while they run and give the thread its device back after
// (detail::DeviceScope).
#include <cstddef>
#include <memory>
#include <string>

namespace strop {

class Context {
 public:
  // Nothing touches the GPU until the context is first used for device work, so a context
  // can be made (and default_context() used) on machines without a GPU.
  explicit Context(int device = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const;
  // cudaStream_t of this context (created on first use); throws DeviceError without CUDA.
  void* stream();
  // cublasHandle_t bound to stream() (created on first use).
  void* cublas();
  // cublasLtHandle_t (created on first use; cuBLASLt calls name their stream).
  void* cublas_lt();
  // cusolverDnHandle_t bound to stream() (created on first use).
  void* cusolver();
  // Waits for all work queued on stream().
  void synchronize();
  // Whether stream() is being captured into a CUDA graph (what is queued now is recorded,
  // not run); paths that replay faster from a graph can be chosen then.
  bool capturing();
  // Device memory kept under `key` between calls, for kernels that carry state from one call
  // to the next (the BLR decode kernel keeps its accumulators there and leaves them zero, so
  // that a call needs no allocation or memset). All zero when first made, at least `bytes`
  // long; a key keeps its first block (a larger request under it is a DeviceError, so put the
  // sizes in the key). Blocks live until the context is destroyed, so CUDA graphs captured
  // with them stay valid. Null while stream() captures a graph and the key has no block yet:
  // making one cannot be captured (run the work once before capturing). The work that uses a
  // block must run in one order: on stream(), or in replays of graphs captured from it that
  // do not overlap each other.
  void* persistent_workspace(const std::string& key, std::size_t bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

Context& default_context();

namespace detail {
// The span of one library call that works on a device. A context makes its device current
// when it first reaches its stream; the scope gives the calling thread back the device that
// was current before, so that work on a Context(1) does not leave device 1 current for the
// caller's own CUDA code. Costs one cudaGetDevice when `device_work`, nothing otherwise (host
// work never starts the CUDA runtime).
class DeviceScope {
 public:
  explicit DeviceScope(bool device_work = true);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// Whether `device`'s primary context exists (the CUDA runtime has started that device in
// this process). False without CUDA; true where the driver cannot tell.
bool device_started(int device);

// DeviceError unless `data`, which a view marks as device memory, is memory that kernels on
// ctx's device can read and write: memory of that device, managed memory or mapped pinned
// host memory. Catches a view over pageable host memory or over another device's memory,
// which would otherwise end in an illegal address fault that leaves the device unusable for
// the rest of the process. One cudaPointerGetAttributes.
// `argument` and `name` make the message ("X" of "dense"). Call it with ctx's device current.
void require_usable_on_device(const void* data, Context& ctx, const char* argument,
                              const char* name);
}  // namespace detail

// True when strop was built with CUDA and a CUDA device is visible.
bool cuda_available();
// Number of visible CUDA devices (0 without CUDA).
int device_count();
// "NVIDIA H100 80GB HBM3", or "none".
const char* device_name(int device = 0);

}  // namespace strop
