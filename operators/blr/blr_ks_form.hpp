#pragma once
// Monarch and BLAST as Kronecker-sparse factors (internal): the form their GPU path applies
// through the KS kernels and cuBLAS (papers/NOTES.md, paper 004: Monarch's permute +
// batched GEMM, BLAST's three stages). K x L grid, blocks h x w, rank r. (LowRank's GPU
// path is two Dense GEMMs.)
#include "strop/operators/blast.hpp"
#include "strop/operators/ks_chain.hpp"
#include "strop/operators/monarch.hpp"

namespace strop::detail {

// U_k: (K, h, r, 1); s_{k,l}: (1, K, L, r) (block (k, l) is diag(s_{k,l})); V_l: (L, r, w, 1).
template <class T>
KSChain<T> blast_ks_form(const Blast<T>& A);

// R_{k,l}: (L, K r, w, 1), rows in (l, k, t) order; the shuffle to (k, l, t) order;
// L_{k,l}: (K, h, L r, 1).
template <class T>
typename Monarch<T>::KSForm monarch_ks_form(const Monarch<T>& A);

}  // namespace strop::detail
