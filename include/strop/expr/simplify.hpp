#pragma once
// The planner's algebraic rewrites on the run-time graph, for what types cannot decide at
// compile time (DESIGN.md section 3). simplify() returns an equivalent operator:
//   (A ⊗ B)(C ⊗ D)      -> (AC) ⊗ (BD)     when the factor shapes line up
//   (A ⊗ B)^T, ^H       -> A^T ⊗ B^T, A^H ⊗ B^H
//   (A^T)^T, (A^H)^H     -> A
//   s (t A)              -> (s t) A,  1 A -> A
//   products of KS factors/chains -> one KSChain (so the chain can be fused)
//   Kronecker products of KS factors/chains and identities -> one KSChain (I ⊗ K ⊗ I as
//                          one wider factor, K's values repeated; left as they are where a
//                          factor would hold more than 2^26 values)
// applied bottom-up over the whole graph, each rewrite only where it costs no more flops to
// apply, as A and as A^T, than what it replaces. Leaves are shared, never copied.
#include "strop/expr/any_operator.hpp"

namespace strop {

template <class T>
AnyOperator<T> simplify(const AnyOperator<T>& op);

}  // namespace strop
