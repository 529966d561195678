#pragma once
// Internal: where entry e of a batched operand starts, for the one-launch BLR kernels
// (blr_decode.cu, blr_fused.cu): offset + e stride. Entry numbers are ints (the launches
// check that they fit).
namespace strop::detail {

template <class Operand>
__device__ __forceinline__ long long entry_offset(const Operand& o, int e) {
  return o.offset + (long long)e * o.stride;
}

}  // namespace strop::detail
