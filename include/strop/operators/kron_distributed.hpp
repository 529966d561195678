#pragma once
// DistributedKron<T>: a Kronecker product applied to signals whose features are split over
// several parts, each part on its own GPU (FastKron's multi-GPU algorithm, paper §5, for the
// feature dimension; splitting the signals needs no communication, see
// examples/several_gpus.cpp).
//
// Part p holds rows [p*N/G, (p+1)*N/G) of every signal (N = rows of X, G parts). Each step
// applies, in every part at once and with no communication, the longest run of trailing
// factors not yet applied whose input extents divide the part's rows (the product
// I ⊗ F_j ⊗ ... ⊗ F_n restricted to the part), then exchanges rows between the parts: the
// rotation that moves the factors just applied to the front of the row index (FastKron's
// sliced-multiply store, one level up), so that the next factors become trailing and local.
// After the last step the rows are in natural order. A product of n factors whose parts hold
// whole runs of k of them takes about n/k exchanges; each moves (G-1)/G of the data.
//
// On the GPU each part runs on its context's device: the local steps by the factors' own
// paths (the Kron-matmul engine for dense factors), the exchange by one kernel per part that
// reads the rows it needs from every other part's work space (peer-to-peer reads over
// NVLink/PCIe; strop enables peer access, and access to each device's default memory pool,
// for every pair of devices involved). Several parts may share a device (each part with its
// own context, or one context for all). Host views run the same steps on the CPU.
//
// Requirements: N divisible by G and, at every step, the input extent of the last factor not
// yet applied dividing a part's rows (ShapeError otherwise, naming the factor); the factors
// must act on each signal separately (as for Kron). Devices that cannot access each other's
// memory (no peer-to-peer path) are a DeviceError.
#include <cstddef>
#include <span>
#include <vector>

#include "strop/core/context.hpp"
#include "strop/core/op.hpp"
#include "strop/core/view.hpp"
#include "strop/expr/kron.hpp"

namespace strop {

// One step of a distributed application: factors [first, last) (of op(F)) applied in every
// part, each chunk of `in` rows becoming `out` rows, then one exchange.
struct KronPartStep {
  std::size_t first = 0;
  std::size_t last = 0;
  Index in = 1;
  Index out = 1;
};

template <class T>
class DistributedKron {
 public:
  // ShapeError unless parts >= 1 and the product's columns and rows are multiples of parts.
  DistributedKron(Kron<T> product, int parts);

  int parts() const { return parts_; }
  const Kron<T>& product() const { return product_; }
  // Rows of each part of op(product) X and of X.
  Index rows_per_part(Op op = Op::NoTrans) const;
  Index cols_per_part(Op op = Op::NoTrans) const;
  // The steps of an application of op(product), one exchange each (with one part, apply
  // runs the product directly and exchanges nothing).
  // ShapeError when some factor's input extent cannot divide a part's rows at its step.
  std::vector<KronPartStep> steps(Op op = Op::NoTrans) const;

  // Y_p = alpha (op(product) X)_p + beta Y_p for every part p. X[p] is cols_per_part(op) x B,
  // Y[p] is rows_per_part(op) x B (any layouts and strides), all host views or all device
  // views; contexts[p] runs part p (one per part, may repeat; host views may pass none). As
  // in BLAS, alpha = 0 gives beta Y without reading X. The call returns when the work is
  // queued: each Y[p] is complete in contexts[p]'s stream order. Work space (per part, two
  // blocks the size of its largest intermediate) comes from its stream-ordered pool per call.
  // Not for CUDA graph capture (the parts' streams are joined by events of their own).
  void apply(Op op, std::span<const ConstView<T>> X, std::span<const MatrixView<T>> Y,
             std::span<Context* const> contexts, T alpha = T(1), T beta = T(0)) const;

 private:
  Kron<T> product_;
  int parts_ = 1;
};

extern template class DistributedKron<float>;
extern template class DistributedKron<double>;
extern template class DistributedKron<std::complex<float>>;
extern template class DistributedKron<std::complex<double>>;

}  // namespace strop
