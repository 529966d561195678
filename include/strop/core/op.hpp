#pragma once
// Which form of an operator A is applied: A, A^T or A^H (conjugate transpose).
// Conjugation alone (conj(A) = (A^H)^T) appears only when transposes are composed; the
// Transposed node evaluates it, so operators implement these three forms.
namespace strop {

enum class Op { NoTrans, Trans, Adjoint };

inline bool is_transposed(Op op) {
  return op != Op::NoTrans;
}

inline const char* to_string(Op op) {
  switch (op) {
    case Op::NoTrans:
      return "A";
    case Op::Trans:
      return "A^T";
    case Op::Adjoint:
      return "A^H";
  }
  return "?";
}

}  // namespace strop
