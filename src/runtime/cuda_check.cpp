// The dynamic shared memory each kernel may launch with, per device (runtime/cuda_check.hpp).
#include "runtime/cuda_check.hpp"

#if STROP_HAVE_CUDA
#include <map>
#include <utility>

namespace strop::detail {

void allow_dynamic_shared_memory(const void* kernel, std::size_t bytes, const char* what) {
  const int device = current_device();
  static std::mutex mutex;
  // What each (kernel, device) may launch with now: only ever raised, under the lock, so that
  // a launch never meets a limit another thread lowered after this one raised it. (A
  // cudaDeviceReset would forget the attributes; strop's device copies do not survive one
  // either.)
  static std::map<std::pair<const void*, int>, std::size_t> allowed;
  std::lock_guard lock(mutex);
  std::size_t& most = allowed[{kernel, device}];
  if (bytes <= most) return;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
             what);
  most = bytes;
}

}  // namespace strop::detail
#endif
