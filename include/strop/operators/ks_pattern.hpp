#pragma once
// KSPattern: the Kronecker-sparse support I_a ⊗ 1_{b x c} ⊗ I_d, an abd x acd matrix with
// abcd nonzeros (NOTES.md, "Kronecker-sparse (KS) factors and chains"), and the known chains
// of patterns (butterfly, Monarch, Kaleidoscope, low rank, dense).
#include <iosfwd>
#include <string>
#include <vector>

#include "strop/core/scalar.hpp"

namespace strop {

struct KSPattern {
  Index a = 1;
  Index b = 1;
  Index c = 1;
  Index d = 1;

  Index rows() const { return a * b * d; }
  Index cols() const { return a * c * d; }
  Index nnz() const { return a * b * c * d; }
  // The support of the transposed factor.
  KSPattern transposed() const { return {a, c, b, d}; }
  // Throws PatternError unless every entry is >= 1.
  void validate() const;

  friend bool operator==(const KSPattern&, const KSPattern&) = default;
};

std::ostream& operator<<(std::ostream& os, const KSPattern& p);  // "(a,b,c,d)"
std::string to_string(const KSPattern& p);

// K_p K_q has a shape: a_p c_p d_p == a_q b_q d_q.
bool connects(const KSPattern& p, const KSPattern& q);
// Connecting, and the product's support lies in one KS pattern: a_p | a_q, d_q | d_p and
// a_q | a_p c_p.
bool chainable(const KSPattern& p, const KSPattern& q);
// That pattern, (a_p, b_p d_p / d_q, c_q a_q / a_p, d_q); PatternError unless chainable.
KSPattern fuse(const KSPattern& p, const KSPattern& q);

// Known chains K_1 ... K_L (K_1 leftmost). Each throws PatternError on sizes it cannot
// represent, naming them.
// Square dyadic butterfly of n = 2^L >= 2: (2^{l-1}, 2, 2, 2^{L-l}), l = 1..L.
std::vector<KSPattern> butterfly_patterns(Index n);
// Monarch M x N with p blocks: (1, M/p, min(M,N)/p, p), (p, min(M,N)/p, N/p, 1).
std::vector<KSPattern> monarch_patterns(Index M, Index N, Index p);
// Kaleidoscope B B^*: the butterfly, then its transposed patterns in reverse order.
std::vector<KSPattern> kaleidoscope_patterns(Index n);
// Rank-r M x N: (1, M, r, 1), (1, r, N, 1).
std::vector<KSPattern> low_rank_patterns(Index M, Index N, Index r);
// One dense factor: (1, M, N, 1).
std::vector<KSPattern> dense_patterns(Index M, Index N);

}  // namespace strop
