#pragma once
// Applying a loaded operator on the GPU from the CLI. `strop factorize` stores a butterfly
// found with bit-reversed columns as product(ks_chain, permutation), which normally runs on
// the GPU whole (a permutation is a device row gather). Should that fail with a DeviceError,
// the permutation is applied on the host while the signals move (before the upload for A,
// after the download for A^T / A^H) and the rest runs on the GPU. Anything else goes to the
// GPU whole, or fails with the library's DeviceError.
#include <optional>
#include <string>

#include "strop/strop.hpp"

namespace strop::cli {

template <class T>
struct GpuPlan {
  AnyOperator<T> on_device;               // what runs on the GPU
  std::optional<Permutation<T>> on_host;  // the input permutation, applied on the host
  bool host_permutation() const { return on_host.has_value(); }
};

// The whole operator when a trial application on the GPU works; otherwise, for a
// product(X, permutation), X on the GPU and the permutation on the host.
template <class T>
GpuPlan<T> plan_gpu(const AnyOperator<T>& a) {
  try {
    const DeviceMatrix<T> x(a.cols(), 1, Layout::RowMajor);
    DeviceMatrix<T> y(a.rows(), 1, Layout::RowMajor);
    a.apply(Op::NoTrans, x.view(), y.view());
    default_context().synchronize();
    return {a, std::nullopt};
  } catch (const DeviceError&) {
    const auto children = a.children();
    if (std::string(a.node_type()) != "product" || children.size() != 2) throw;
    const auto* p = children[1].template as<Permutation<T>>();
    if (p == nullptr) throw;
    return {children[0], *p};
  }
}

// op(A) X for host X, run on the GPU by `plan` (signals stored batch-last on the device).
template <class T>
HostMatrix<T> apply_on_gpu(const GpuPlan<T>& plan, Op op, const HostMatrix<T>& x) {
  const bool before = plan.on_host && op == Op::NoTrans;
  const bool after = plan.on_host && op != Op::NoTrans;
  HostMatrix<T> input;
  if (before) {
    input.resize(x.rows(), x.cols());
    plan.on_host->apply(Op::NoTrans, view(x), view(input));
  }
  const DeviceMatrix<T> xd = to_device(before ? input : x, Layout::RowMajor);
  const Index out = op == Op::NoTrans ? plan.on_device.rows() : plan.on_device.cols();
  DeviceMatrix<T> yd(out, x.cols(), Layout::RowMajor);
  plan.on_device.apply(op, xd.view(), yd.view());
  HostMatrix<T> y = yd.to_host();
  if (!after) return y;
  HostMatrix<T> z(y.rows(), y.cols());
  plan.on_host->apply(op, view(y), view(z));  // (X P)^T = P^T X^T, and P^H = P^T
  return z;
}

}  // namespace strop::cli
