#pragma once
// Balanced two-level splits of a size, shared by the factorize and bench commands.
#include "strop/core/scalar.hpp"

namespace strop::cli {

// The largest divisor d of n with d <= sqrt(n) (1 for n < 4): n = d (n / d) is the most
// balanced split. In integers, and d <= n / d cannot overflow where d * d could.
inline Index largest_divisor_up_to_sqrt(Index n) {
  Index best = 1;
  for (Index d = 2; d <= n / d; ++d)
    if (n % d == 0) best = d;
  return best;
}

}  // namespace strop::cli
