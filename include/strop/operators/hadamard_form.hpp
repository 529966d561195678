#pragma once
// detail::HadamardForm, the tag that KSChain carries when hadamard() built it (a header of
// its own so that CUDA sources can include it without Eigen).
#include "strop/core/scalar.hpp"

namespace strop {

namespace detail {
// What hadamard() and inverse_hadamard() know about the chain they build: it equals
// scale * (H_m ⊗ H_{2^k}), or scale * (H_m ⊗ H_{2^k})^T (H_{2^k} is symmetric). Such a
// chain is applied from its form instead of its factors' values: on the host by the fast
// Walsh-Hadamard transform (operators/transforms/hadamard_host.cpp), on the GPU by the
// Walsh-Hadamard kernel (hadamard_kernel.cu, float signals and 16-bit ones; other scalar
// types take the generic chain path there). A test checks that form and values agree.
// Derived chains (fused, joined, loaded from a file) do not carry it; the transposed copy
// does.
struct HadamardForm {
  Index m = 1;         // 1, 12, 20 or 28
  int log2_pow2 = 0;   // k
  double scale = 1.0;  // a real scalar
  bool transposed = false;
  Index size() const { return m << log2_pow2; }
};
}  // namespace detail

}  // namespace strop
