#pragma once
// How much shared memory a thread block may have, for the host-side planners of kernels whose
// tiles are sized for sm_90 (internal header; builds without CUDA too). Kernel launchers ask
// shared_memory_per_block() (cuda_check.hpp) directly.
#include <cstddef>

namespace strop::detail {

// Dynamic shared memory one block may opt in to on sm_90 (H100, H200).
inline constexpr std::size_t kSm90SharedMemoryPerBlock = 227 * 1024;

// The current device's shared memory per block where the process has a CUDA device; sm_90's
// without one (a work-space query on a machine without a GPU) or without CUDA.
std::size_t shared_memory_for_plans();

// For tests: while one lives, shared_memory_per_block() (cuda_check.hpp), the check of
// allow_dynamic_shared_memory and shared_memory_for_plans() say at most `bytes` on every
// device, so that an H100 runs the paths an A100 or an sm_89 device takes. Not for use
// beside other GPU work of the process.
class SharedMemoryCapForTesting {
 public:
  explicit SharedMemoryCapForTesting(std::size_t bytes);
  ~SharedMemoryCapForTesting();
  SharedMemoryCapForTesting(const SharedMemoryCapForTesting&) = delete;
  SharedMemoryCapForTesting& operator=(const SharedMemoryCapForTesting&) = delete;

 private:
  std::size_t previous_;
};

}  // namespace strop::detail
