#pragma once
// Small helpers shared by leaf operators.
#include "strop/core/error.hpp"
#include "strop/core/scalar.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

// Real floating-point operations of one multiply-add in T.
template <class T>
constexpr double flops_per_fma() {
  return is_complex_v<T> ? 8.0 : 2.0;
}

// Leaves without a GPU path say so clearly instead of reading device memory on the host.
inline void require_host(const char* name, MemorySpace space) {
  require<DeviceError>(space == MemorySpace::Host, name,
                       " has no GPU path yet: apply it to host data (Eigen matrices)");
}

// Rejects NaN/Inf in parameters: they would silently poison every application.
template <class T>
void require_finite(const char* name, const T* values, Index count) {
  for (Index i = 0; i < count; ++i) {
    require<NumericalError>(is_finite(values[i]), name, ": parameter ", i,
                            " is not finite (NaN or Inf)");
  }
}

}  // namespace strop::detail
