#pragma once
// strop::Context = device id + stream + cuBLAS and cuSOLVER handles (+ later: tuning cache).
// Every application takes one; default_context() serves users who do not care.
// A context is used by one thread at a time (make one per stream/thread).
#include <memory>

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
  // cusolverDnHandle_t bound to stream() (created on first use).
  void* cusolver();
  // Waits for all work queued on stream().
  void synchronize();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

Context& default_context();

// True when strop was built with CUDA and a CUDA device is visible.
bool cuda_available();
// Number of visible CUDA devices (0 without CUDA).
int device_count();
// "NVIDIA H100 80GB HBM3", or "none".
const char* device_name(int device = 0);

}  // namespace strop
