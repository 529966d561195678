// The shared memory each kernel may launch with, per device (runtime/cuda_check.hpp,
// runtime/shared_memory.hpp).
#include "runtime/cuda_check.hpp"
#include "runtime/shared_memory.hpp"

#include <algorithm>
#include <atomic>

namespace strop::detail {
namespace {
// The testing cap (SharedMemoryCapForTesting); none by default.
std::atomic<std::size_t> shared_memory_cap{~std::size_t(0)};
std::size_t capped(std::size_t bytes) {
  return std::min(bytes, shared_memory_cap.load(std::memory_order_relaxed));
}
}  // namespace

SharedMemoryCapForTesting::SharedMemoryCapForTesting(std::size_t bytes)
    : previous_(shared_memory_cap.exchange(bytes)) {}
SharedMemoryCapForTesting::~SharedMemoryCapForTesting() {
  shared_memory_cap.store(previous_);
}
}  // namespace strop::detail

#if STROP_HAVE_CUDA
#include <map>
#include <utility>

namespace strop::detail {

std::size_t shared_memory_per_block() {
  static PerDevice<std::size_t> on_device;
  const std::size_t bytes = on_device.get([](int device) {
    int most = 0;
    check_cuda(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
               "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
    return std::size_t(most);
  });
  return capped(bytes);
}

std::size_t shared_memory_for_plans() {
  static const bool has_device = [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  }();
  return has_device ? shared_memory_per_block() : capped(kSm90SharedMemoryPerBlock);
}

void allow_dynamic_shared_memory(const void* kernel, std::size_t bytes, const char* what) {
  // Tiles are chosen within shared_memory_per_block(); a request beyond it is a planning bug
  // or a device smaller than the kernel's least tile. CUDA would report an invalid argument:
  // say why instead. (Checked before the cache below, so that a testing cap also holds for
  // kernels raised before it.)
  const int device = current_device();
  const std::size_t most_on_device = shared_memory_per_block();
  require<DeviceError>(bytes <= most_on_device, what, ": needs ", bytes,
                       " bytes of shared memory per block, device ", device, " allows ",
                       most_on_device);
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
#else
namespace strop::detail {
std::size_t shared_memory_for_plans() {
  return capped(kSm90SharedMemoryPerBlock);
}
}  // namespace strop::detail
#endif
