#pragma once
// Internal: where entry e of a batched operand starts, for the one-launch BLR kernels
// (blr_decode.cu, blr_fused.cu): offset + e stride, or offset + (e / inner) outer +
// (e % inner) stride in two-level batches (inner > 0, Monarch's first stage).
// Entry numbers are ints (the launches check that they fit): a 64-bit division is a ~100-
// instruction subroutine, and these run once per tile or row.
namespace strop::detail {

template <class Operand>
__device__ __forceinline__ long long entry_offset(const Operand& o, int e, int inner) {
  if (inner == 0) return o.offset + (long long)e * o.stride;
  const int outer = e / inner;
  return o.offset + (long long)outer * o.outer + (long long)(e - outer * inner) * o.stride;
}

}  // namespace strop::detail
