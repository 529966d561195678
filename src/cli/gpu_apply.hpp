#pragma once
// Applying a loaded operator on the GPU from the CLI: the whole operator runs there (a saved
// butterfly's bit-reversal permutation too, as a row gather); a failure is the library's
// DeviceError.
#include "strop/strop.hpp"

namespace strop::cli {

// op(A) X for host X, run on the GPU (signals stored batch-last on the device).
template <class T>
HostMatrix<T> apply_on_gpu(const AnyOperator<T>& a, Op op, const HostMatrix<T>& x) {
  const DeviceMatrix<T> xd = to_device(x, Layout::RowMajor);
  const Index out = op == Op::NoTrans ? a.rows() : a.cols();
  DeviceMatrix<T> yd(out, x.cols(), Layout::RowMajor);
  a.apply(op, xd.view(), yd.view());
  return yd.to_host();
}

}  // namespace strop::cli
