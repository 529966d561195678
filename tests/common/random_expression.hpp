#pragma once
// Random expression graphs with their dense matrices, for differential tests: every node kind
// (product, sum, difference, scaling, transpose, adjoint, Kronecker product, block diagonal,
// stacks) over every leaf family, nested to a given depth, of random shapes that fit. The
// dense matrix is composed here with Eigen from the leaves' dense matrices, independently of
// the library's expression code, so a wrong index, term or transpose anywhere in the
// composition shows.
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "operator_zoo.hpp"
#include "reference.hpp"
#include "strop/strop.hpp"

namespace strop::testing {

// How many graphs a test draws and from which seed: its defaults, or STROP_RANDOM_EXPRESSIONS
// and STROP_RANDOM_SEED for a longer hunt (a failure prints the graph it built).
inline int random_expression_count(int default_count) {
  return count_from_environment("STROP_RANDOM_EXPRESSIONS", default_count);
}
inline std::uint32_t random_expression_seed(std::uint32_t default_seed) {
  const char* text = std::getenv("STROP_RANDOM_SEED");
  return text != nullptr ? std::uint32_t(std::strtoul(text, nullptr, 10)) : default_seed;
}

template <class T>
struct RandomExpression {
  AnyOperator<T> op;
  HostMatrix<T> dense;
  std::string text;  // what was built, for failure messages
};

template <class T>
class ExpressionGenerator {
 public:
  using Expr = RandomExpression<T>;
  using Any = AnyOperator<T>;

  explicit ExpressionGenerator(std::uint32_t seed) : rng_(seed) {}

  // A graph of `rows` x `cols` whose nodes are nested at most `depth` deep.
  Expr operator()(Index rows, Index cols, int depth) {
    if (depth == 0 || chance(0.2)) return leaf(rows, cols);
    switch (pick(0, 8)) {
      case 0: {  // A B, through an inner size of its own
        const Index inner = pick(1, 12);
        Expr a = (*this)(rows, inner, depth - 1), b = (*this)(inner, cols, depth - 1);
        return {Product<Any, Any>(a.op, b.op), a.dense * b.dense,
                "(" + a.text + " * " + b.text + ")"};
      }
      case 1: {
        Expr a = (*this)(rows, cols, depth - 1), b = (*this)(rows, cols, depth - 1);
        return {Sum<Any, Any>(a.op, b.op), a.dense + b.dense, "(" + a.text + " + " + b.text + ")"};
      }
      case 2: {
        Expr a = (*this)(rows, cols, depth - 1), b = (*this)(rows, cols, depth - 1);
        return {a.op - b.op, a.dense - b.dense, "(" + a.text + " - " + b.text + ")"};
      }
      case 3: {
        const T s = scalar();
        Expr a = (*this)(rows, cols, depth - 1);
        return {Scaled<Any>(s, a.op), s * a.dense, "s " + a.text};
      }
      case 4: {
        Expr a = (*this)(cols, rows, depth - 1);
        if (chance(0.5)) return {Transposed<Any, false>(a.op), a.dense.transpose(), a.text + "^T"};
        return {Transposed<Any, true>(a.op), a.dense.adjoint(), a.text + "^H"};
      }
      case 5: {  // F ⊗ G with F's sizes dividing ours
        const Index r = divisor(rows), c = divisor(cols);
        Expr f = (*this)(r, c, depth - 1), g = (*this)(rows / r, cols / c, depth - 1);
        return {Kron<T>({f.op, g.op}), kron_dense(f.dense, g.dense),
                "kron(" + f.text + ", " + g.text + ")"};
      }
      case 6: {
        if (rows < 2 || cols < 2) break;
        const Index r = pick(1, rows - 1), c = pick(1, cols - 1);
        Expr a = (*this)(r, c, depth - 1), b = (*this)(rows - r, cols - c, depth - 1);
        HostMatrix<T> d = HostMatrix<T>::Zero(rows, cols);
        d.topLeftCorner(r, c) = a.dense;
        d.bottomRightCorner(rows - r, cols - c) = b.dense;
        return {BlockDiag<T>({a.op, b.op}), d, "diag(" + a.text + ", " + b.text + ")"};
      }
      case 7: {
        if (rows < 2) break;
        const Index r = pick(1, rows - 1);
        Expr a = (*this)(r, cols, depth - 1), b = (*this)(rows - r, cols, depth - 1);
        HostMatrix<T> d(rows, cols);
        d << a.dense, b.dense;
        return {VStack<T>({a.op, b.op}), d, "[" + a.text + "; " + b.text + "]"};
      }
      case 8: {
        if (cols < 2) break;
        const Index c = pick(1, cols - 1);
        Expr a = (*this)(rows, c, depth - 1), b = (*this)(rows, cols - c, depth - 1);
        HostMatrix<T> d(rows, cols);
        d << a.dense, b.dense;
        return {HStack<T>({a.op, b.op}), d, "[" + a.text + ", " + b.text + "]"};
      }
    }
    return leaf(rows, cols);
  }

  // A leaf of any family that has this shape; its dense matrix is its own to_dense() (each
  // family is checked against independent references in its own tests).
  Expr leaf(Index rows, Index cols) {
    for (;;) {
      switch (pick(0, 9)) {
        case 0:
          return named(Dense<T>(gaussian_matrix<T>(rng_, rows, cols)), "dense", rows, cols);
        case 1:
          return named(LowRank<T>::random(rows, cols, pick(1, std::min(rows, cols)), rng_),
                       "lowrank", rows, cols);
        case 2: {
          const KSPattern p = pattern(rows, cols);
          return named(KSFactor<T>::random(p, rng_), "ks_factor", rows, cols);
        }
        case 3: {
          const Index rb = divisor(rows), cb = divisor(cols);
          const Index rank = pick(1, std::min(rows / rb, cols / cb));
          return named(Monarch<T>::random(rows, cols, rb, cb, rank, rng_), "monarch", rows, cols);
        }
        case 4: {
          const Index rb = divisor(rows), cb = divisor(cols);
          const Index rank = pick(1, std::min(rows / rb, cols / cb));
          return named(Blast<T>::random(rows, cols, rb, cb, rank, rng_), "blast", rows, cols);
        }
        case 5:  // exact encoders: a Strassen-Tile operator that acts on each signal alone
          if (rows % 2 || cols % 2) break;
          return named(
              StrassenTile<T>::encode(gaussian_matrix<T>(rng_, rows, cols), stl::strassen_2x2()),
              "strassen_tile", rows, cols);
        case 6:
          if (rows != cols) break;
          return named(Diagonal<T>(gaussian_matrix<T>(rng_, rows, 1).col(0)), "diagonal", rows,
                       cols);
        case 7: {
          if (rows != cols) break;
          std::vector<Index> perm(static_cast<std::size_t>(rows));
          std::iota(perm.begin(), perm.end(), Index(0));
          std::shuffle(perm.begin(), perm.end(), rng_);
          return named(Permutation<T>(perm), "permutation", rows, cols);
        }
        case 8:
          if (rows != cols) break;
          return named(Identity<T>(rows), "identity", rows, cols);
        case 9:
          if (rows != cols || rows < 2 || (rows & (rows - 1)) != 0) break;
          return named(KSChain<T>::random(butterfly_patterns(rows), rng_), "butterfly", rows, cols);
      }
    }
  }

  Index pick(Index lo, Index hi) { return std::uniform_int_distribution<Index>(lo, hi)(rng_); }

 private:
  template <class Leaf>
  Expr named(const Leaf& leaf, const char* name, Index rows, Index cols) {
    return {leaf, leaf.to_dense(),
            std::string(name) + " " + std::to_string(rows) + "x" + std::to_string(cols)};
  }

  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  T scalar() { return gaussian_matrix<T>(rng_, 1, 1)(0, 0); }

  // A random divisor of n (1 and n included).
  Index divisor(Index n) {
    std::vector<Index> divisors;
    for (Index d = 1; d <= n; ++d)
      if (n % d == 0) divisors.push_back(d);
    return divisors[static_cast<std::size_t>(pick(0, Index(divisors.size()) - 1))];
  }

  // A KS pattern (a, b, c, d) with a b d = rows and a c d = cols.
  KSPattern pattern(Index rows, Index cols) {
    const Index d = divisor(std::gcd(rows, cols));
    const Index a = divisor(std::gcd(rows, cols) / d);
    return {a, rows / (a * d), cols / (a * d), d};
  }

  std::mt19937 rng_;
};

// Draws `count` graphs (or STROP_RANDOM_EXPRESSIONS) of sizes in [lo, hi], nested `depth`
// deep, and calls check(graph, batch) for each, the batch drawn in [1, batch_hi].
template <class T, class Check>
void for_random_expressions(std::uint32_t seed, int count, Index lo, Index hi, int depth,
                            Index batch_hi, Check check) {
  ExpressionGenerator<T> generate(random_expression_seed(seed));
  for (int i = 0, n = random_expression_count(count); i < n; ++i) {
    const auto e = generate(generate.pick(lo, hi), generate.pick(lo, hi), depth);
    const Index batch = generate.pick(1, batch_hi);
    BOOST_TEST_CONTEXT("expression " << i) {
      check(e, batch);
    }
  }
}

// Applies e.op through `apply(op, x_layout, y_layout, X, Y0, alpha, beta)`, which returns Y,
// in every op and pair of layouts, half the time with alpha = 1, beta = 0 and Y0 all NaN (Y
// must not be read), and compares with the composed dense matrix. The error is measured
// against ||op(A)|| ||X|| + |beta| ||Y0||, which rounding scales with, not against ||Y||,
// which cancellation can make small (a random signal nearly orthogonal to a rank-1 factor).
template <class T, class Apply>
void check_expression(const RandomExpression<T>& e, Index batch, Apply apply) {
  for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
    const HostMatrix<T> d = op_of(e.dense, op);
    for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
      for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
        const bool plain = random_index(0, 1) == 0;
        const auto [alpha, beta, x, y0, expected] = application_case(d, batch, plain);
        const HostMatrix<T> got = apply(op, lx, ly, x, y0, alpha, beta);
        BOOST_TEST_CONTEXT(e.text << ", " << to_string(op) << " X " << to_string(lx) << " Y "
                                  << to_string(ly) << " B=" << batch
                                  << (plain ? " alpha=1 beta=0" : "")) {
          BOOST_TEST(got.allFinite());
          const double scale = std::abs(alpha) * double(d.norm() * x.norm()) +
                               (plain ? 0.0 : std::abs(beta) * double(y0.norm()));
          BOOST_TEST(double((got - expected).norm()) <=
                     tolerance<T>(std::max(d.rows(), d.cols())) * std::max(scale, 1e-300));
        }
      }
    }
  }
}

}  // namespace strop::testing
