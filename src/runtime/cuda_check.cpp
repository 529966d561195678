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
  // Tiles are sized for sm_90 (227 KB a block); a device with less (sm_80: 163 KB, sm_89:
  // 99 KB) refuses the attribute, which CUDA reports as an invalid argument: say why instead.
  int most_on_device = 0;
  check_cuda(
      cudaDeviceGetAttribute(&most_on_device, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
      "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
  require<DeviceError>(bytes <= std::size_t(most_on_device), what, ": needs ", bytes,
                       " bytes of shared memory per block, device ", device, " allows ",
                       most_on_device);
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
             what);
  most = bytes;
}

}  // namespace strop::detail
#endif
