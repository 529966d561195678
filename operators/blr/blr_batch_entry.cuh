#pragma once
// Internal: where entry e of a batched operand starts, for the one-launch BLR kernels
// (blr_decode.cu, blr_fused.cu): offset + e stride, or offset + (e / inner) outer +
// (e % inner) stride in two-level batches (inner > 0, Monarch's first stage).
namespace strop::detail {

template <class Operand>
__device__ __forceinline__ long long entry_offset(const Operand& o, long long e, long long inner) {
  return inner ? o.offset + (e / inner) * o.outer + (e % inner) * o.stride
               : o.offset + e * o.stride;
}

}  // namespace strop::detail
