#include "strop/operators/ks_pattern.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "strop/core/error.hpp"

namespace strop {

void KSPattern::validate() const {
  require<PatternError>(a >= 1 && b >= 1 && c >= 1 && d >= 1, "KS pattern ", *this,
                        ": every entry (a,b,c,d) must be >= 1");
  // rows(), cols() and nnz() must not wrap around: a wrapped nnz() of 0 would accept an
  // empty value vector (and value() would read past it).
  Index ad = 0, abd = 0, acd = 0, abcd = 0;
  const bool overflow = __builtin_mul_overflow(a, d, &ad) || __builtin_mul_overflow(ad, b, &abd) ||
                        __builtin_mul_overflow(ad, c, &acd) ||
                        __builtin_mul_overflow(abd, c, &abcd);
  require<PatternError>(!overflow, "KS pattern ", *this,
                        ": a*b*c*d (or the size a*b*d x a*c*d) overflows a 64-bit index");
}

std::ostream& operator<<(std::ostream& os, const KSPattern& p) {
  return os << '(' << p.a << ',' << p.b << ',' << p.c << ',' << p.d << ')';
}

std::string to_string(const KSPattern& p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

bool connects(const KSPattern& p, const KSPattern& q) {
  return p.cols() == q.rows();
}

bool chainable(const KSPattern& p, const KSPattern& q) {
  return connects(p, q) && q.a % p.a == 0 && p.d % q.d == 0 && (p.a * p.c) % q.a == 0;
}

KSPattern fuse(const KSPattern& p, const KSPattern& q) {
  p.validate();
  q.validate();
  require<PatternError>(chainable(p, q), "KS patterns ", p, " and ", q,
                        " are not chainable (need a_p c_p d_p == a_q b_q d_q, a_p | a_q,",
                        " d_q | d_p, a_q | a_p c_p): they do not fuse into one KS pattern");
  const KSPattern fused{p.a, p.b * p.d / q.d, q.c * q.a / p.a, q.d};
  fused.validate();  // its nnz can overflow where p's and q's do not
  return fused;
}

namespace {
void require_positive(const char* what, Index M, Index N, const char* k_name, Index k) {
  require<PatternError>(M >= 1 && N >= 1 && k >= 1, what, ": sizes must be >= 1, got M=", M,
                        " N=", N, " ", k_name, "=", k);
}

// The presets' sizes are in range, but a pattern's nnz (or size) can still overflow an index.
std::vector<KSPattern> validated(std::vector<KSPattern> patterns) {
  for (const KSPattern& p : patterns)
    p.validate();
  return patterns;
}
}  // namespace

std::vector<KSPattern> butterfly_patterns(Index n) {
  require<PatternError>(n >= 2 && (n & (n - 1)) == 0,
                        "butterfly_patterns: n must be a power of two >= 2, got ", n);
  Index levels = 0;
  while ((Index(1) << levels) < n)
    ++levels;
  std::vector<KSPattern> patterns;
  for (Index l = 1; l <= levels; ++l) {
    patterns.push_back({Index(1) << (l - 1), 2, 2, Index(1) << (levels - l)});
  }
  return validated(std::move(patterns));
}

std::vector<KSPattern> monarch_patterns(Index M, Index N, Index p) {
  require_positive("monarch_patterns", M, N, "p", p);
  const Index m = std::min(M, N);
  require<PatternError>(M % p == 0 && N % p == 0, "monarch_patterns: ", p,
                        " blocks must divide both M=", M, " and N=", N);
  return validated({{1, M / p, m / p, p}, {p, m / p, N / p, 1}});
}

std::vector<KSPattern> kaleidoscope_patterns(Index n) {
  std::vector<KSPattern> patterns = butterfly_patterns(n);
  const auto levels = patterns.size();
  for (auto l = levels; l-- > 0;)
    patterns.push_back(patterns[l].transposed());
  return patterns;
}

std::vector<KSPattern> low_rank_patterns(Index M, Index N, Index r) {
  require_positive("low_rank_patterns", M, N, "r", r);
  return validated({{1, M, r, 1}, {1, r, N, 1}});
}

std::vector<KSPattern> dense_patterns(Index M, Index N) {
  require<PatternError>(M >= 1 && N >= 1, "dense_patterns: sizes must be >= 1, got M=", M,
                        " N=", N);
  return validated({{1, M, N, 1}});
}

}  // namespace strop
