#include "factorize/butterfly/two_factor.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>

#include "factorize/svd/block_svd.hpp"
#include "operators/blr/blr_support.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {

template <class T>
double SplitSource<T>::squared_norm() const {
  if (dense) return double(dense->squaredNorm());
  double sum = 0;
  for (const T& v : factor->values())
    sum += double(std::norm(v));
  return sum;
}

template <class T>
void SplitSource<T>::gather(Index r0, Index rs, Index rows, Index c0, Index cs, Index cols,
                            T* out) const {
  if (dense) {
    for (Index l = 0; l < cols; ++l) {
      const T* column = dense->data() + (c0 + l * cs) * dense->rows();
      for (Index k = 0; k < rows; ++k)
        out[k + l * rows] = column[r0 + k * rs];
    }
    return;
  }
  // Entry (r, s) of a KS factor: r = (i, k, j), s = (i', l, j'); nonzero only when i = i'
  // and j = j'.
  const auto [a, b, c, d] = factor->pattern();
  (void)a;
  for (Index l = 0; l < cols; ++l) {
    const Index s = c0 + l * cs;
    const Index si = s / (c * d), sl = (s / d) % c, sj = s % d;
    for (Index k = 0; k < rows; ++k) {
      const Index r = r0 + k * rs;
      const Index ri = r / (b * d), rk = (r / d) % b, rj = r % d;
      out[k + l * rows] = (ri == si && rj == sj) ? factor->value(ri, rk, sl, sj) : T(0);
    }
  }
}

namespace {

// The groups' rectangles of W, copied into one block each (column-major, b1 x c2), and their
// total squared norm in `covered`. Rectangles of groups with the next j1 read the
// neighbouring rows, i.e. the same cache lines: gathering in (column origin, row origin)
// order lets them follow each other, so that each line of W is fetched about once instead
// of once per group (8x less memory traffic for the first split of a 4096 butterfly).
template <class T, class Origin>
std::vector<T> gather_rectangles(const SplitSource<T>& W, Index groups, Index b1, Index c2,
                                 Index d1, Index d2, const Origin& origin, double& covered) {
  std::vector<Index> gather_order(static_cast<std::size_t>(groups));
  std::iota(gather_order.begin(), gather_order.end(), Index(0));
  std::sort(gather_order.begin(), gather_order.end(), [&](Index x, Index y) {
    const auto [rx, cx] = origin(x);
    const auto [ry, cy] = origin(y);
    return std::tie(cx, rx) < std::tie(cy, ry);
  });
  std::vector<T> blocks(static_cast<std::size_t>(groups * b1 * c2));
  parallel_for(groups, double(groups * b1 * c2), [&](Index position) {
    const Index g = gather_order[static_cast<std::size_t>(position)];
    const auto [r0, c0] = origin(g);
    W.gather(r0, d1, b1, c0, d2, c2, blocks.data() + g * b1 * c2);
  });
  covered = 0;
  for (const T& v : blocks)
    covered += double(std::norm(v));
  return blocks;
}

template <class T>
double off_support_energy(const SplitSource<T>& W, const KSPattern& p) {
  if (!W.dense || (p.a == 1 && p.d == 1)) return 0;  // a KS source lies on its support
  const HostMatrix<T>& w = *W.dense;
  double sum = 0;
  for (Index s = 0; s < w.cols(); ++s)
    for (Index r = 0; r < w.rows(); ++r)
      if (r / (p.b * p.d) != s / (p.c * p.d) || r % p.d != s % p.d)
        sum += double(std::norm(w(r, s)));
  return sum;
}
}  // namespace

template <class T>
TwoFactorSolution<T> solve_two_factor(const SplitSource<T>& W, const KSPattern& pi1,
                                      const KSPattern& pi2, bool orthonormal, Device device,
                                      Context& ctx) {
  pi1.validate();
  pi2.validate();
  require<PatternError>(chainable(pi1, pi2), "factorize: KS patterns ", pi1, " and ", pi2,
                        " are not chainable (need a1 c1 d1 == a2 b2 d2, a1 | a2, d2 | d1,",
                        " a2 | a1 c1): the two-factor problem does not split into blocks");
  require<ShapeError>(W.rows() == pi1.rows() && W.cols() == pi2.cols(), "factorize: patterns ", pi1,
                      " * ", pi2, " make a ", pi1.rows(), "x", pi2.cols(), " matrix, the input is ",
                      W.rows(), "x", W.cols());
  const auto [a1, b1, c1, d1] = pi1;
  const auto [a2, b2, c2, d2] = pi2;
  (void)a1;
  const Index R = pi1.cols();

  // Inner index t joins column t of X (rows {i1 b1 d1 + k d1 + j1}) and row t of Y
  // (columns {i2 c2 d2 + l d2 + j2}); t's with the same key (i1, j1, i2, j2) share one
  // rectangle of W, and different keys own disjoint rectangles.
  struct Term {
    Index key_rows;  // i1 * d1 + j1
    Index key_cols;  // i2 * d2 + j2
    Index t;
  };
  std::vector<Term> terms(static_cast<std::size_t>(R));
  for (Index t = 0; t < R; ++t) {
    terms[static_cast<std::size_t>(t)] = {(t / (c1 * d1)) * d1 + t % d1,
                                          (t / (b2 * d2)) * d2 + t % d2, t};
  }
  std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) {
    return std::tie(x.key_rows, x.key_cols, x.t) < std::tie(y.key_rows, y.key_cols, y.t);
  });
  std::vector<std::size_t> group_start;
  for (std::size_t n = 0; n < terms.size(); ++n) {
    if (n == 0 || terms[n].key_rows != terms[n - 1].key_rows ||
        terms[n].key_cols != terms[n - 1].key_cols)
      group_start.push_back(n);
  }
  const Index groups = static_cast<Index>(group_start.size());
  group_start.push_back(terms.size());
  Index rank = 0;
  for (Index g = 0; g < groups; ++g)
    rank = std::max<Index>(rank, static_cast<Index>(group_start[g + 1] - group_start[g]));

  // Group g's rectangle: rows i1 b1 d1 + j1 + k d1 (k < b1), columns i2 c2 d2 + j2 + l d2.
  auto rectangle_origin = [&](Index g) {
    const Term& first = terms[group_start[static_cast<std::size_t>(g)]];
    const Index i1 = first.key_rows / d1, j1 = first.key_rows % d1;
    const Index i2 = first.key_cols / d2, j2 = first.key_cols % d2;
    return std::pair<Index, Index>{i1 * b1 * d1 + j1, i2 * c2 * d2 + j2};
  };
  double covered = 0;
  std::optional<BlockSvd<T>> svd;
  if (device == Device::cuda && W.dense) {
    // The GPU reads the rectangles in place from the dense matrix: no host gather.
    StridedBlocks<T> rectangles{
        W.dense->data(), W.dense->rows(), W.dense->cols(), {}, {}, b1, c2, d1, d2};
    for (Index g = 0; g < groups; ++g) {
      const auto [r0, c0] = rectangle_origin(g);
      rectangles.row0.push_back(r0);
      rectangles.col0.push_back(c0);
    }
    svd = block_svd_in_place(rectangles, rank, covered, ctx);
  }
  if (!svd)
    svd = block_svd(gather_rectangles(W, groups, b1, c2, d1, d2, rectangle_origin, covered), groups,
                    b1, c2, rank, device, ctx);
  distribute_singular_values(*svd, orthonormal ? 1.0 : 0.5);

  std::vector<T> x(static_cast<std::size_t>(pi1.nnz()), T(0));
  std::vector<T> y(static_cast<std::size_t>(pi2.nnz()), T(0));
  double dropped = 0;
  for (Index g = 0; g < groups; ++g) {
    dropped += svd->dropped[static_cast<std::size_t>(g)];
    const T* u = svd->u_block(g);
    const T* vh = svd->vh_block(g);
    for (std::size_t n = group_start[g]; n < group_start[g + 1]; ++n) {
      const Index m = static_cast<Index>(n - group_start[g]);  // singular triple of t
      const Index t = terms[n].t;
      const Index i1 = t / (c1 * d1), l1 = (t / d1) % c1, j1 = t % d1;
      for (Index k = 0; k < b1; ++k)
        x[static_cast<std::size_t>(((i1 * b1 + k) * c1 + l1) * d1 + j1)] = u[k + m * b1];
      const Index i2 = t / (b2 * d2), k2 = (t / d2) % b2, j2 = t % d2;
      for (Index l = 0; l < c2; ++l)
        y[static_cast<std::size_t>(((i2 * b2 + k2) * c2 + l) * d2 + j2)] = vh[m + l * rank];
    }
  }
  // Entries of W outside every rectangle cannot be represented. The rectangles tile the
  // fused pattern's support, so that energy is counted directly (a difference of norms
  // would lose half the digits).
  const KSPattern fused = fuse(pi1, pi2);
  const double outside = groups * b1 * c2 == fused.nnz()
                             ? off_support_energy(W, fused)
                             : std::max(0.0, W.squared_norm() - covered);
  return {KSFactor<T>(pi1, std::move(x)), KSFactor<T>(pi2, std::move(y)), dropped + outside};
}

#define STROP_INSTANTIATE(T)                                                              \
  template struct SplitSource<T>;                                                         \
  template TwoFactorSolution<T> solve_two_factor(const SplitSource<T>&, const KSPattern&, \
                                                 const KSPattern&, bool, Device, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
