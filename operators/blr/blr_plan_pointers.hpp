#pragma once
// Internal: the device kernel that fills the pointer arrays of a two-level batched GEMM
// (blr_plan_pointers.cu).
#include "strop/core/context.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// Operands q = 0, 1, 2 (A, B, C): out[q][e] = base[q] + (e / inner) outer[q] +
// (e % inner) stride[q], offsets in bytes, for e < count.
struct TwoLevelPointers {
  char* base[3];
  Index outer[3], stride[3];
  Index inner, count;
  char** out[3];
};
void make_two_level_pointers(const TwoLevelPointers& p, Context& ctx);

}  // namespace strop::detail
