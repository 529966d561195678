// Kronecker-sparse factors and chains against dense matrices built from the definition
// K[i*b*d + k*d + j, i*c*d + l*d + j] = w[i,k,l,j] by a naive loop (never through apply).
#include <limits>
#include <sstream>
#include <type_traits>

#include "operators/ks/ks_mma_tile.hpp"
#include "reference.hpp"
#include "strop/operators/leaf_support.hpp"

namespace {

using namespace strop;
using namespace strop::testing;

template <class T>
HostMatrix<T> naive_dense(const KSFactor<T>& f) {
  const auto [a, b, c, d] = f.pattern();
  const std::vector<T>& w = f.values();
  HostMatrix<T> m = HostMatrix<T>::Zero(a * b * d, a * c * d);
  for (Index i = 0; i < a; ++i)
    for (Index k = 0; k < b; ++k)
      for (Index l = 0; l < c; ++l)
        for (Index j = 0; j < d; ++j)
          m(i * b * d + k * d + j, i * c * d + l * d + j) = w[((i * b + k) * c + l) * d + j];
  return m;
}

template <class T>
HostMatrix<T> naive_dense(const KSChain<T>& chain) {
  HostMatrix<T> m = naive_dense(chain.factors().front());
  for (std::size_t l = 1; l < chain.size(); ++l)
    m = m * naive_dense(chain.factors()[l]);
  return m;
}

std::vector<Index> divisors(Index n) {
  std::vector<Index> out;
  for (Index k = 1; k <= n; ++k)
    if (n % k == 0) out.push_back(k);
  return out;
}
Index random_element(const std::vector<Index>& v) {
  return v[static_cast<std::size_t>(random_index(0, Index(v.size()) - 1))];
}

// `length` patterns, each chainable with the next (NOTES: a_p | a_q, d_q | d_p, a_q | a_p c_p):
// a_q = a_p m with m | c_p, d_q | d_p, and b_q fills the connecting size.
std::vector<KSPattern> random_chainable(std::size_t length) {
  std::vector<KSPattern> out{
      {random_index(1, 3), random_index(1, 4), random_index(1, 4), random_index(1, 3)}};
  while (out.size() < length) {
    const KSPattern& p = out.back();
    const Index a = p.a * random_element(divisors(p.c));
    const Index d = random_element(divisors(p.d));
    out.push_back({a, p.cols() / (a * d), random_index(1, 3), d});
  }
  return out;
}

// `length` patterns where only the shapes connect (a, d any split of the shared size).
std::vector<KSPattern> random_connecting(std::size_t length) {
  std::vector<KSPattern> out{
      {random_index(1, 3), random_index(1, 3), random_index(1, 4), random_index(1, 3)}};
  while (out.size() < length) {
    const Index n = out.back().cols();
    const Index a = random_element(divisors(n));
    const Index d = random_element(divisors(n / a));
    out.push_back({a, n / (a * d), random_index(1, 4), d});
  }
  return out;
}

// Covers every CPU path: 1x1, long j-runs (d >= 4), b != c, and tiles past the small-tile
// threshold (b, c > 8) with short and long j-runs.
const std::vector<KSPattern> factor_patterns = {{1, 1, 1, 1}, {2, 3, 4, 5},   {3, 2, 1, 2},
                                                {1, 4, 3, 1}, {2, 1, 5, 3},   {4, 2, 2, 1},
                                                {1, 2, 2, 4}, {1, 12, 10, 1}, {2, 9, 11, 4}};

}  // namespace

BOOST_AUTO_TEST_SUITE(ks)

BOOST_AUTO_TEST_CASE(pattern_basics) {
  const KSPattern p{2, 3, 4, 5};
  BOOST_TEST(p.rows() == 30);
  BOOST_TEST(p.cols() == 40);
  BOOST_TEST(p.nnz() == 120);
  BOOST_TEST((p.transposed() == KSPattern{2, 4, 3, 5}));
  BOOST_TEST(!(p == p.transposed()));
  BOOST_TEST(to_string(p) == "(2,3,4,5)");
  std::ostringstream os;
  os << p;
  BOOST_TEST(os.str() == "(2,3,4,5)");

  // Square Monarch's two factors are chainable and fuse into the dense pattern.
  const KSPattern m1{1, 4, 4, 4}, m2{4, 4, 4, 1};
  BOOST_TEST(connects(m1, m2));
  BOOST_TEST(chainable(m1, m2));
  BOOST_TEST((fuse(m1, m2) == KSPattern{1, 16, 16, 1}));
  // Monarch 12 x 8 with 4 blocks connects, but a_q = 4 does not divide a_p c_p = 2.
  BOOST_TEST(connects({1, 3, 2, 4}, {4, 2, 2, 1}));
  BOOST_TEST(!chainable({1, 3, 2, 4}, {4, 2, 2, 1}));
  // Butterfly neighbours fuse into a (a, 4, 4, d) level.
  BOOST_TEST((fuse({1, 2, 2, 4}, {2, 2, 2, 2}) == KSPattern{1, 4, 4, 2}));
  // Shapes compose but a_p does not divide a_q.
  BOOST_TEST(connects({2, 2, 2, 1}, {1, 2, 2, 2}));
  BOOST_TEST(!chainable({2, 2, 2, 1}, {1, 2, 2, 2}));
  BOOST_TEST(!connects({1, 2, 3, 1}, {1, 2, 3, 1}));
}

BOOST_AUTO_TEST_CASE(preset_patterns) {
  using V = std::vector<KSPattern>;
  BOOST_TEST((butterfly_patterns(8) == V{{1, 2, 2, 4}, {2, 2, 2, 2}, {4, 2, 2, 1}}));
  BOOST_TEST((butterfly_patterns(2) == V{{1, 2, 2, 1}}));
  BOOST_TEST((monarch_patterns(12, 8, 4) == V{{1, 3, 2, 4}, {4, 2, 2, 1}}));
  BOOST_TEST(
      (kaleidoscope_patterns(4) == V{{1, 2, 2, 2}, {2, 2, 2, 1}, {2, 2, 2, 1}, {1, 2, 2, 2}}));
  BOOST_TEST((low_rank_patterns(5, 7, 2) == V{{1, 5, 2, 1}, {1, 2, 7, 1}}));
  BOOST_TEST((dense_patterns(5, 7) == V{{1, 5, 7, 1}}));
  for (const V& chain :
       {butterfly_patterns(64), monarch_patterns(8, 12, 2), monarch_patterns(16, 16, 4),
        kaleidoscope_patterns(16), low_rank_patterns(9, 4, 3)}) {
    for (std::size_t l = 0; l + 1 < chain.size(); ++l) {
      BOOST_TEST(connects(chain[l], chain[l + 1]));
    }
  }
  // Butterfly and Monarch neighbours are chainable (what the hierarchical factorization needs).
  for (const V& chain :
       {butterfly_patterns(32), monarch_patterns(12, 8, 2), monarch_patterns(16, 16, 4)}) {
    for (std::size_t l = 0; l + 1 < chain.size(); ++l) {
      BOOST_TEST(chainable(chain[l], chain[l + 1]));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(factor_against_dense, T, ScalarTypes) {
  std::vector<KSPattern> patterns = factor_patterns;
  for (int r = 0; r < 4; ++r) {
    patterns.push_back(
        {random_index(1, 4), random_index(1, 5), random_index(1, 5), random_index(1, 4)});
  }
  for (const KSPattern& p : patterns) {
    BOOST_TEST_CONTEXT("pattern " << p) {
      const auto f = KSFactor<T>::random(p, rng());
      const HostMatrix<T> dense = naive_dense(f);
      BOOST_TEST(f.rows() == p.rows());
      BOOST_TEST(f.cols() == p.cols());
      BOOST_TEST(f.parameter_count() == p.nnz());
      BOOST_TEST(f.flops(3) == detail::flops_per_fma<T>() * double(p.nnz()) * 3);
      check_against_dense(f, dense);
      check_against_dense(f.transpose(), HostMatrix<T>(dense.transpose()));
      check_against_dense(f.adjoint(), HostMatrix<T>(dense.adjoint()));
      check_against_dense(KSFactor<T>::transposed_copy(f), HostMatrix<T>(dense.transpose()));
      check_against_dense(KSFactor<T>::transposed_copy(f, true), HostMatrix<T>(dense.adjoint()));
      const auto back = KSFactor<T>::from_dense(p, dense, RealOf<T>(1e-30));
      BOOST_TEST((back.values() == f.values()));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(factor_large_batch_and_strided_views, T, ScalarTypes) {
  // Enough work for the OpenMP path; views that are neither row- nor column-major.
  const auto f = KSFactor<T>::random({4, 8, 6, 4}, rng());
  const HostMatrix<T> dense = naive_dense(f);
  check_against_dense(f, dense, -1, 200);

  const Index batch = 5;
  HostMatrix<T> x_storage = random_matrix<T>(f.cols(), 2 * batch);
  HostMatrix<T> y_storage = random_matrix<T>(f.rows(), 3 * batch);
  const ConstView<T> x{x_storage.data(), f.cols(), batch, 1, 2 * f.cols()};
  const MatrixView<T> y{y_storage.data() + 1 * f.rows(), f.rows(), batch, 1, 3 * f.rows()};
  const HostMatrix<T> expected = dense * eigen_map(x) + T(2) * eigen_map(ConstView<T>(y));
  f.apply(Op::NoTrans, x, y, T(1), T(2));
  BOOST_TEST(relative_error(HostMatrix<T>(eigen_map(y)), expected) <= tolerance<T>(f.cols()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(chains_against_dense, T, ScalarTypes) {
  std::vector<std::vector<KSPattern>> chains = {
      butterfly_patterns(16),      butterfly_patterns(64),      monarch_patterns(12, 8, 4),
      monarch_patterns(16, 16, 4), kaleidoscope_patterns(8),    low_rank_patterns(10, 7, 3),
      dense_patterns(5, 6),        {{1, 1, 1, 1}, {1, 1, 1, 1}}};
  for (std::size_t length : {2, 3, 4}) {
    chains.push_back(random_chainable(length));
    chains.push_back(random_connecting(length));
  }
  for (const auto& patterns : chains) {
    const auto chain = KSChain<T>::random(patterns, rng());
    BOOST_TEST_CONTEXT("chain " << chain.rows() << "x" << chain.cols() << " starting "
                                << patterns.front() << ", " << patterns.size() << " factors") {
      BOOST_TEST((chain.patterns() == patterns));
      const HostMatrix<T> dense = naive_dense(chain);
      check_against_dense(chain, dense);
      double flops = 0;
      Index params = 0;
      for (const auto& p : patterns) {
        flops += detail::flops_per_fma<T>() * double(p.nnz()) * 7;
        params += p.nnz();
      }
      BOOST_TEST(chain.flops(7) == flops);
      BOOST_TEST(chain.parameter_count() == params);
      // The rewritten transposes (reversed chains) and the generic views.
      check_against_dense(chain.transpose(), HostMatrix<T>(dense.transpose()));
      check_against_dense(chain.adjoint(), HostMatrix<T>(dense.adjoint()));
      check_against_dense(Transposed<KSChain<T>, false>(chain), HostMatrix<T>(dense.transpose()));
      check_against_dense(Transposed<KSChain<T>, true>(chain), HostMatrix<T>(dense.adjoint()));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fused_chains, T, ScalarTypes) {
  std::vector<std::vector<KSPattern>> chains = {butterfly_patterns(16), monarch_patterns(12, 8, 2),
                                                monarch_patterns(16, 16, 4)};
  for (int r = 0; r < 3; ++r)
    chains.push_back(random_chainable(4));
  for (const auto& patterns : chains) {
    const auto chain = KSChain<T>::random(patterns, rng());
    const HostMatrix<T> dense = naive_dense(chain);
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
      BOOST_TEST_CONTEXT("fusing " << patterns[i] << " and " << patterns[i + 1]) {
        const auto fused = chain.fused(i);
        BOOST_TEST(fused.size() == chain.size() - 1);
        BOOST_TEST((fused.factors()[i].pattern() == fuse(patterns[i], patterns[i + 1])));
        check_against_dense(fused, dense);
      }
    }
    // Fusing all the way down leaves one factor holding the whole product.
    auto whole = chain;
    while (whole.size() > 1)
      whole = whole.fused(0);
    check_against_dense(whole.factors().front(), dense);
  }
}

using FuseTypes = boost::mpl::list<double, std::complex<float>>;

// The fused values are computed from the two factors' values: against the dense product for
// every chainable pair of small patterns.
BOOST_AUTO_TEST_CASE_TEMPLATE(fused_values_for_every_small_chainable_pair, T, FuseTypes) {
  int pairs = 0;
  for (Index a1 = 1; a1 <= 4; ++a1)
    for (Index b1 = 1; b1 <= 4; ++b1)
      for (Index c1 = 1; c1 <= 4; ++c1)
        for (Index d1 = 1; d1 <= 4; ++d1)
          for (Index a2 = 1; a2 <= 8; ++a2)
            for (Index c2 = 1; c2 <= 3; ++c2)
              for (Index d2 = 1; d2 <= 8; ++d2) {
                const KSPattern p{a1, b1, c1, d1};
                if (p.cols() % (a2 * d2) != 0) continue;
                const KSPattern q{a2, p.cols() / (a2 * d2), c2, d2};
                if (!chainable(p, q)) continue;
                ++pairs;
                const auto chain = KSChain<T>::random({p, q}, rng());
                const HostMatrix<T> product = naive_dense(chain);
                const KSFactor<T> fused = chain.fused(0).factors().front();
                BOOST_TEST_CONTEXT("fusing " << p << " and " << q) {
                  BOOST_TEST((fused.pattern() == fuse(p, q)));
                  BOOST_TEST(relative_error(naive_dense(fused), product) <= tolerance<T>(c1));
                }
              }
  BOOST_TEST(pairs > 2000);
}

BOOST_AUTO_TEST_CASE(fusing_large_factors_needs_no_dense_matrix) {
  // The fused values came from the dense n x n product: 12.9 s and 595 MB at n = 4096,
  // bad_alloc beyond. Two butterfly levels of n = 2^20 hold 2^22 values once fused.
  const std::vector<KSPattern> butterfly = butterfly_patterns(Index(1) << 20);
  const auto chain = KSChain<double>::random({butterfly[0], butterfly[1]}, rng());
  const KSChain<double> fused = chain.fused(0);
  BOOST_TEST((fused.factors().front().pattern() == fuse(butterfly[0], butterfly[1])));
  const HostMatrix<double> x = random_matrix<double>(chain.cols(), 2);
  HostMatrix<double> expected(chain.rows(), 2), got(chain.rows(), 2);
  chain.apply(Op::NoTrans, view(x), view(expected));
  fused.apply(Op::NoTrans, view(x), view(got));
  BOOST_TEST(relative_error(got, expected) <= 1e-14);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(compile_time_rewrites, T, ScalarTypes) {
  const auto patterns = butterfly_patterns(8);
  const auto k1 = KSFactor<T>::random(patterns[0], rng());
  const auto k2 = KSFactor<T>::random(patterns[1], rng());
  const auto k3 = KSFactor<T>::random(patterns[2], rng());
  const KSChain<T> c12 = k1 * k2;
  static_assert(std::is_same_v<decltype(k1 * k2), KSChain<T>>);
  static_assert(std::is_same_v<decltype(c12 * k3), KSChain<T>>);
  static_assert(std::is_same_v<decltype(k1 * (k2 * k3)), KSChain<T>>);
  static_assert(std::is_same_v<decltype(c12 * KSChain<T>(std::vector{k3})), KSChain<T>>);
  static_assert(std::is_same_v<decltype(k1 * k2 * k3), KSChain<T>>);
  static_assert(std::is_same_v<decltype(c12.transpose()), KSChain<T>>);
  static_assert(std::is_same_v<decltype(c12.adjoint()), KSChain<T>>);
  static_assert(std::is_same_v<decltype(k1.transpose()), Transposed<KSFactor<T>, false>>);
  // Other operands keep the generic product.
  const Dense<T> dense8(random_matrix<T>(8, 8));
  static_assert(std::is_same_v<decltype(k1 * dense8), Product<KSFactor<T>, Dense<T>>>);

  const HostMatrix<T> d1 = naive_dense(k1), d2 = naive_dense(k2), d3 = naive_dense(k3);
  const HostMatrix<T> all = d1 * d2 * d3;
  BOOST_TEST(c12.size() == 2u);
  BOOST_TEST((k1 * k2 * k3).size() == 3u);
  check_against_dense(k1 * k2 * k3, all);
  check_against_dense(k1 * (k2 * k3), all);
  check_against_dense(c12 * KSChain<T>(std::vector{k3}), all);
  check_against_dense((k1 * k2 * k3).transpose(), HostMatrix<T>(all.transpose()));
  check_against_dense((k1 * k2 * k3).adjoint().adjoint(), all);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(through_any_operator, T, ScalarTypes) {
  const auto chain = KSChain<T>::random(monarch_patterns(12, 8, 4), rng());
  const AnyOperator<T> any = chain;
  BOOST_TEST(std::string(any.node_type()) == "ks_chain");
  BOOST_TEST(any.children().empty());
  BOOST_TEST(any.template as<KSChain<T>>() != nullptr);
  check_against_dense(any, naive_dense(chain));
  const AnyOperator<T> leaf = chain.factors().front();
  BOOST_TEST(std::string(leaf.node_type()) == "ks_factor");
  check_against_dense(leaf, naive_dense(chain.factors().front()));
}

BOOST_AUTO_TEST_SUITE_END()

// apply_reduced_precision of a float factor on host half/bfloat16 signals: the float result
// rounded once; a bad shape is refused before anything is written.
BOOST_AUTO_TEST_SUITE(ks_reduced_precision)

using HalfTypes = boost::mpl::list<half, bfloat16>;
BOOST_AUTO_TEST_CASE_TEMPLATE(host_signals_round_the_float_result, S, HalfTypes) {
  std::mt19937 rng(8);
  const auto K = KSFactor<float>::random({2, 3, 5, 4}, rng);
  for (Op op : {Op::NoTrans, Op::Trans}) {
    const Index in = op == Op::NoTrans ? K.cols() : K.rows();
    const Index out = op == Op::NoTrans ? K.rows() : K.cols();
    const HostMatrix<S> xs = random_matrix<float>(in, 6).cast<S>();
    const HostMatrix<S> y0 = random_matrix<float>(out, 6).cast<S>();
    HostMatrix<float> expected = y0.template cast<float>();
    K.apply(op, view(HostMatrix<float>(xs.template cast<float>())), view(expected), 0.5f, -2.0f);
    HostMatrix<S> ys = y0;
    apply_reduced_precision<S>(K, op, view(xs), view(ys), 0.5f, -2.0f);
    BOOST_TEST(relative_error(HostMatrix<float>(ys.template cast<float>()), expected) <=
               unit_roundoff_v<S>);
    HostMatrix<S> wrong(out + 1, 6);
    BOOST_CHECK_THROW(apply_reduced_precision<S>(K, op, view(xs), view(wrong)), ShapeError);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(signals_of_a_non_const_matrix_need_no_type_argument, S, HalfTypes) {
  // The families take ConstView<Storage>: a non-const X (a DeviceMatrix's view(), as in the
  // README) found no overload without an explicit <half>.
  const KSChain<float> chain = hadamard<float>(16);
  HostMatrix<S> x = random_matrix<float>(chain.cols(), 5).cast<S>();
  HostMatrix<float> expected(chain.rows(), 5);
  chain.apply(Op::NoTrans, view(HostMatrix<float>(x.template cast<float>())), view(expected));
  HostMatrix<S> y(chain.rows(), 5);
  apply_reduced_precision(chain, Op::NoTrans, view(x), view(y));
  BOOST_TEST(relative_error(HostMatrix<float>(y.template cast<float>()), expected) <=
             4 * unit_roundoff_v<S>);  // the intermediate rounds too
}

BOOST_AUTO_TEST_SUITE_END()

// The tile rules of the tensor-core kernel (host code: the kernel runs on the GPU machine).
BOOST_AUTO_TEST_SUITE(ks_mma_tiles)

BOOST_AUTO_TEST_CASE(heuristic_and_candidates) {
  using detail::KSMmaTile;
  for (bool batch_contiguous : {true, false})
    for (Index d : {1, 2, 3, 4, 6, 7, 8, 12, 64})
      for (Index out : {1, 16, 17, 48, 96, 768})
        for (Index batch : {1, 7, 64, 25088}) {
          BOOST_TEST_CONTEXT("d " << d << " out " << out << " batch " << batch << " contiguous "
                                  << batch_contiguous) {
            const KSMmaTile h = detail::ks_mma_heuristic_tile(out, d, batch, batch_contiguous);
            BOOST_TEST(detail::ks_mma_tile_supported(h));
            BOOST_TEST(h.tj * h.warps_k * h.warps_n == detail::kMmaWarps);
            // Groups side by side only where batch-first signals need runs of features; the
            // pipelined kernel's tj divides d.
            const int tj = batch_contiguous || d == 1 ? 1 : d >= 8 ? 8 : d >= 4 ? 4 : 2;
            const bool pipelined = !batch_contiguous &&
                                   (d % 4 == 0 ? d <= 48 : d % 2 == 0 && d <= 6 && out > 64) &&
                                   out > 32 && batch > 32;
            BOOST_TEST(h.pipelined == pipelined);
            BOOST_TEST(h.tj == (pipelined ? (d % 8 == 0 ? 8 : d % 4 == 0 ? 4 : 2) : tj));
            if (h.pipelined) BOOST_TEST(h.mf * h.nf == 32);  // 64 x 64 warp tiles
            // Warps go to the outputs only while the group has outputs for them.
            if (h.warps_k > 1) BOOST_TEST(h.tk() / 2 < out);
            const auto tiles = detail::ks_mma_tile_candidates(out, d, batch, batch_contiguous);
            BOOST_REQUIRE(!tiles.empty());
            BOOST_TEST(to_string(tiles.front()) == to_string(h));
            for (std::size_t a = 0; a < tiles.size(); ++a) {
              BOOST_TEST(detail::ks_mma_tile_supported(tiles[a]));
              // Names go to the tuning cache and come back as the same tile.
              const auto parsed = detail::parse_ks_mma_tile(to_string(tiles[a]));
              BOOST_TEST((parsed && *parsed == tiles[a]));
              if (tiles[a].pipelined) {
                BOOST_TEST(!batch_contiguous);
                BOOST_TEST(d % tiles[a].tj == 0);
              } else {
                BOOST_TEST(tiles[a].tj == tj);
              }
              for (std::size_t b = 0; b < a; ++b)
                BOOST_TEST(to_string(tiles[a]) != to_string(tiles[b]));  // names are the keys
            }
          }
        }
  // ColMajor with d >= 8 and large groups: one 64 x 64 warp tile per group, pipelined.
  const KSMmaTile wide = detail::ks_mma_heuristic_tile(384, 16, 25088, false);
  BOOST_TEST(to_string(wide) == "tj8.k64x1.n64x1.pipe");
  // Three stages of X (64 x 32 x 8), two of W (8 x 64 x 32), and the larger of two stages of
  // the transposed X (8 x 64 x 32) and the 16-bit output tile (8 x 64 x 64).
  BOOST_TEST(wide.shared_bytes() == std::size_t(2 * (3 * 16384 + 2 * 16384 + 32768)));
  BOOST_TEST(wide.shared_bytes() <= std::size_t(227 * 1024));
  const KSMmaTile ks_mma = {8, 1, 1, 4, 8};  // the same geometry in ks_mma.cu
  BOOST_TEST(ks_mma.shared_bytes() == std::size_t(8 * 64 * 65 * 4));  // the fp32 output tile
  // d = 12: tj = 4; its two warps along the outputs when a group has more than 64.
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(96, 12, 25088, false)) ==
             "tj4.k64x2.n64x1.pipe");
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(48, 12, 25088, false)) ==
             "tj4.k64x1.n64x2.pipe");
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(192, 4, 25088, false)) ==
             "tj4.k64x1.n64x2.pipe");  // a 128-output tile would idle half of the last one
  // d = 2 or 6: tj = 2 with 2 x 2 warps per group; three stages of X (128 x 32 x 2), two of W
  // (2 x 128 x 32), and the output tile (2 x 128 x 128), larger than two transposed X.
  const KSMmaTile pairs = detail::ks_mma_heuristic_tile(192, 6, 25088, false);
  BOOST_TEST(to_string(pairs) == "tj2.k64x2.n64x2.pipe");
  BOOST_TEST(pairs.shared_bytes() == std::size_t(2 * (3 * 8192 + 2 * 8192 + 32768)));
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(48, 2, 25088, false)) ==
             "tj2.k32x2.n32x2");  // few outputs: ks_mma.cu
  BOOST_TEST(!detail::parse_ks_mma_tile("tj2.k64x1.n64x4.pipe").has_value());
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(192, 10, 25088, false)) == "tj8.k64x1.n64x1");
  // Above a d = 48 ks_mma.cu's tile (the pipelined kernel's scattered copies measured slower).
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(384, 64, 25088, false)) == "tj8.k64x1.n64x1");
  BOOST_TEST(!detail::parse_ks_mma_tile("tj8.k64x1.n64x1.pip").has_value());
  BOOST_TEST(!detail::parse_ks_mma_tile("tj8.k32x1.n64x1.pipe").has_value());  // no such kernel
}

// Devices whose blocks have less shared memory than sm_90's 227 KB (sm_80: 163 KB, sm_86/89:
// 99 KB): the heuristic and the tuning candidates keep to it, taking the next tile in the
// heuristic's order (a pipelined tile that fits, then ks_mma.cu's largest warp shape that
// fits); with room, the same tiles as on sm_90.
BOOST_AUTO_TEST_CASE(tiles_within_the_device_shared_memory) {
  using detail::KSMmaTile;
  for (const std::size_t cap : {std::size_t(163 * 1024), std::size_t(99 * 1024)})
    for (bool batch_contiguous : {true, false})
      for (Index d : {1, 2, 4, 6, 8, 12, 64})
        for (Index out : {16, 48, 96, 768})
          for (Index batch : {7, 25088}) {
            BOOST_TEST_CONTEXT("cap " << cap << " d " << d << " out " << out << " batch " << batch
                                      << " contiguous " << batch_contiguous) {
              const KSMmaTile sm90 = detail::ks_mma_heuristic_tile(out, d, batch, batch_contiguous);
              const KSMmaTile h =
                  detail::ks_mma_heuristic_tile(out, d, batch, batch_contiguous, cap);
              BOOST_TEST(detail::ks_mma_tile_supported(h));
              BOOST_TEST(h.shared_bytes() <= cap);
              if (sm90.shared_bytes() <= cap) BOOST_TEST(to_string(h) == to_string(sm90));
              if (!h.pipelined && !sm90.pipelined) BOOST_TEST(h.tj == sm90.tj);
              const auto tiles =
                  detail::ks_mma_tile_candidates(out, d, batch, batch_contiguous, cap);
              BOOST_REQUIRE(!tiles.empty());
              BOOST_TEST(to_string(tiles.front()) == to_string(h));
              for (const KSMmaTile& t : tiles)
                BOOST_TEST(t.shared_bytes() <= cap);
            }
          }
  // d = 8 with large groups: tj8's pipelined tile (224 KB) on sm_90; ks_mma.cu's 64 x 64 warps
  // (130 KB) on sm_80; 32 x 64 warps (80 KB) on sm_86/89. d = 6: tj2's pipelined tile
  // (144 KB) fits sm_80.
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(384, 8, 25088, false, 163 * 1024)) ==
             "tj8.k64x1.n64x1");
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(384, 8, 25088, false, 99 * 1024)) ==
             "tj8.k32x1.n64x1");
  BOOST_TEST(to_string(detail::ks_mma_heuristic_tile(192, 6, 25088, false, 163 * 1024)) ==
             "tj2.k64x2.n64x2.pipe");
  // The limit the planners see: a device's, lowered by the testing cap (without a device,
  // sm_90's).
  const std::size_t uncapped = detail::shared_memory_for_plans();
  {
    const detail::SharedMemoryCapForTesting capped(64 * 1024);
    BOOST_TEST(detail::shared_memory_for_plans() == std::min<std::size_t>(uncapped, 64 * 1024));
  }
  BOOST_TEST(detail::shared_memory_for_plans() == uncapped);
  // A pipelined tile whose kernel does not take the views: the same geometry where it fits.
  const KSMmaTile pipelined = detail::ks_mma_heuristic_tile(384, 8, 25088, false);
  BOOST_TEST(to_string(detail::ks_mma_fitting_tile(
                 pipelined, 384, 25088, detail::kSm90SharedMemoryPerBlock)) == "tj8.k64x1.n64x1");
}

// The 16-bit Auto model on batch-first signals: the pipelined kernel where it applies, except
// for a d <= 4 with large blocks (Dense), Dense for few groups otherwise, StridedGemm in place
// for batch-last signals with large blocks.
BOOST_AUTO_TEST_CASE(sixteen_bit_auto_model) {
  const auto choice = [](KSPattern p, Layout layout) {
    const Index batch = 25088;
    const ConstView<half> x = make_view<const half>(nullptr, p.cols(), batch, layout);
    const ConstView<half> y = make_view<const half>(nullptr, p.rows(), batch, layout);
    return std::string(to_string(ks_auto_algorithm(p, Op::NoTrans, x, y)));
  };
  const auto name = [](KSAlgorithm a) { return std::string(to_string(a)); };
  BOOST_TEST(choice({1, 384, 384, 4}, Layout::ColMajor) == name(KSAlgorithm::Dense));  // a d = 4
  BOOST_TEST(choice({1, 256, 256, 4}, Layout::ColMajor) == name(KSAlgorithm::Dense));
  BOOST_TEST(choice({2, 384, 384, 4}, Layout::ColMajor) == name(KSAlgorithm::Fused));
  BOOST_TEST(choice({4, 128, 128, 4}, Layout::ColMajor) == name(KSAlgorithm::Fused));
  BOOST_TEST(choice({1, 128, 128, 12}, Layout::ColMajor) == name(KSAlgorithm::Fused));
  // Tiles of two groups: large blocks with d = 6 only.
  BOOST_TEST(choice({1, 512, 512, 6}, Layout::ColMajor) == name(KSAlgorithm::Fused));
  BOOST_TEST(choice({1, 256, 1024, 6}, Layout::ColMajor) == name(KSAlgorithm::Fused));
  BOOST_TEST(choice({1, 1024, 256, 6}, Layout::ColMajor) == name(KSAlgorithm::Dense));
  BOOST_TEST(choice({1, 96, 96, 6}, Layout::ColMajor) == name(KSAlgorithm::Dense));
  BOOST_TEST(choice({1, 1024, 1024, 2}, Layout::ColMajor) == name(KSAlgorithm::Dense));
  BOOST_TEST(choice({1, 96, 96, 3}, Layout::ColMajor) == name(KSAlgorithm::Dense));  // odd d
  BOOST_TEST(choice({1, 64, 64, 96}, Layout::ColMajor) == name(KSAlgorithm::Fused));
  BOOST_TEST(choice({1, 256, 256, 4}, Layout::RowMajor) == name(KSAlgorithm::StridedGemm));
}

BOOST_AUTO_TEST_CASE(forcing_a_tile) {
  using detail::KSMmaTile;
  BOOST_TEST(!detail::forced_ks_mma_tile().has_value());
  const KSMmaTile t{8, 1, 1, 2, 8};
  {
    const detail::KSMmaTileGuard guard(t);
    BOOST_TEST(to_string(detail::forced_ks_mma_tile().value()) == "tj8.k32x1.n64x1");
    // Not 8 warps, a warp shape without a kernel, groups side by side not a power of two.
    BOOST_CHECK_THROW(detail::KSMmaTileGuard(KSMmaTile{4, 1, 1, 2, 4}), DeviceError);
    BOOST_CHECK_THROW(detail::KSMmaTileGuard(KSMmaTile{8, 1, 1, 4, 4}), DeviceError);
    BOOST_CHECK_THROW(detail::KSMmaTileGuard(KSMmaTile{3, 1, 1, 2, 4}), DeviceError);
    // Names that are not a supported tile parse to nothing.
    for (const char* name :
         {"", "tj8", "tj8.k64x1.n64x1x", "tj8.k64x2.n64x1", "tj8.k48x1.n64x1", "tj4.k64x2.n64x1 "})
      BOOST_TEST(!detail::parse_ks_mma_tile(name).has_value(), name);
    BOOST_TEST(to_string(detail::parse_ks_mma_tile("tj4.k64x2.n64x1").value()) ==
               "tj4.k64x2.n64x1");
    BOOST_TEST(to_string(detail::forced_ks_mma_tile().value()) == "tj8.k32x1.n64x1");
  }
  BOOST_TEST(!detail::forced_ks_mma_tile().has_value());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ks_errors)

BOOST_AUTO_TEST_CASE(invalid_patterns) {
  BOOST_CHECK_THROW((KSPattern{0, 1, 1, 1}.validate()), PatternError);
  BOOST_CHECK_THROW((KSPattern{1, 2, -1, 1}.validate()), PatternError);
  BOOST_CHECK_THROW(KSFactor<double>(KSPattern{1, 0, 2, 1}, {}), PatternError);
  BOOST_CHECK_THROW(KSFactor<float>::random({1, 2, 2, 0}, rng()), PatternError);
  BOOST_CHECK_THROW(butterfly_patterns(12), PatternError);
  BOOST_CHECK_THROW(butterfly_patterns(1), PatternError);
  BOOST_CHECK_THROW(butterfly_patterns(0), PatternError);
  BOOST_CHECK_THROW(kaleidoscope_patterns(6), PatternError);
  BOOST_CHECK_THROW(monarch_patterns(12, 8, 5), PatternError);
  BOOST_CHECK_THROW(low_rank_patterns(4, 4, 0), PatternError);
  BOOST_CHECK_THROW(dense_patterns(0, 3), PatternError);
  check_error_mentions<PatternError>([] { KSPattern{2, 0, 3, 1}.validate(); }, "(2,0,3,1)");
}

BOOST_AUTO_TEST_CASE(bad_values) {
  BOOST_CHECK_THROW(KSFactor<double>(KSPattern{1, 2, 2, 1}, std::vector<double>(3)), ShapeError);
  std::vector<double> nan_values(4, 1.0);
  nan_values[2] = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(KSFactor<double>(KSPattern{1, 2, 2, 1}, nan_values), NumericalError);
  std::vector<std::complex<float>> inf_values(4);
  inf_values[0] = {0.0f, std::numeric_limits<float>::infinity()};
  BOOST_CHECK_THROW(KSFactor<std::complex<float>>(KSPattern{2, 1, 1, 2}, inf_values),
                    NumericalError);
}

BOOST_AUTO_TEST_CASE(from_dense_checks) {
  const KSPattern p{2, 1, 1, 1};  // diagonal 2 x 2
  HostMatrix<double> m = HostMatrix<double>::Identity(2, 2);
  m(0, 1) = 0.5;
  BOOST_CHECK_THROW(KSFactor<double>::from_dense(p, HostMatrix<double>::Zero(2, 3)), ShapeError);
  BOOST_CHECK_THROW(KSFactor<double>::from_dense(p, m, 1e-3), PatternError);
  BOOST_CHECK_NO_THROW(KSFactor<double>::from_dense(p, m, 1.0));
  BOOST_CHECK_NO_THROW(KSFactor<double>::from_dense(p, m));  // tolerance 0: ignored
  // A NaN or negative tolerance skipped the support check without a word.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(KSFactor<double>::from_dense(p, m, nan), NumericalError);
  BOOST_CHECK_THROW(KSFactor<double>::from_dense(p, m, -1.0), NumericalError);
}

BOOST_AUTO_TEST_CASE(chains_that_do_not_connect) {
  const auto f = KSFactor<double>::random({1, 2, 3, 1}, rng());
  BOOST_CHECK_THROW(KSChain<double>({f, f}), PatternError);
  BOOST_CHECK_THROW(KSChain<double>(std::vector<KSFactor<double>>{}), PatternError);
  BOOST_CHECK_THROW(f * f, PatternError);
  BOOST_CHECK_THROW(KSChain<double>::random({{1, 2, 2, 1}, {1, 3, 2, 1}}, rng()), PatternError);
}

BOOST_AUTO_TEST_CASE(fuse_not_chainable) {
  const KSPattern p{2, 2, 2, 1}, q{1, 2, 2, 2};
  BOOST_CHECK_THROW(fuse(p, q), PatternError);
  BOOST_CHECK_THROW(fuse({1, 2, 3, 1}, {1, 2, 3, 1}), PatternError);
  const auto chain = KSChain<double>::random({p, q}, rng());
  BOOST_CHECK_THROW(chain.fused(0), PatternError);
  BOOST_CHECK_THROW(chain.fused(1), ShapeError);
}

BOOST_AUTO_TEST_CASE(fusing_past_the_end) {
  const auto chain = KSChain<double>::random(butterfly_patterns(8), rng());
  // i + 1 wrapped to 0 and passed the bound check: factors()[SIZE_MAX] (SIGSEGV).
  BOOST_CHECK_THROW(chain.fused(std::numeric_limits<std::size_t>::max()), ShapeError);
  BOOST_CHECK_THROW(chain.fused(2), ShapeError);
  BOOST_CHECK_NO_THROW(chain.fused(1));
  BOOST_CHECK_THROW(KSChain<double>::random({{1, 2, 2, 1}}, rng()).fused(0), ShapeError);
}

BOOST_AUTO_TEST_CASE(applications) {
  const auto chain = KSChain<double>::random(butterfly_patterns(4), rng());
  HostMatrix<double> x = HostMatrix<double>::Ones(3, 2), y(4, 2);
  BOOST_CHECK_THROW(chain.apply(Op::NoTrans, view(x), view(y)), ShapeError);
  // Device views have no CPU path to fall back on.
  HostMatrix<double> x4 = HostMatrix<double>::Ones(4, 2);
  auto xd = view(x4);
  auto yd = view(y);
  xd.space = yd.space = MemorySpace::Device;
  if (cuda_available()) return;  // with a device the GPU path runs (on host memory it cannot tell)
  BOOST_CHECK_THROW(chain.apply(Op::NoTrans, ConstView<double>(xd), yd), DeviceError);
  BOOST_CHECK_THROW(chain.factors()[0].apply(Op::Trans, ConstView<double>(xd), yd), DeviceError);
}

BOOST_AUTO_TEST_CASE(patterns_whose_sizes_overflow) {
  // nnz() wrapped to 0 and the factor was accepted with no values (value() read past them).
  const Index big = Index(1) << 32;
  BOOST_CHECK_THROW((KSPattern{big, big, 1, 1}.validate()), PatternError);  // nnz = 2^64
  BOOST_CHECK_THROW((KSPattern{1, Index(1) << 62, 4, 1}.validate()), PatternError);
  BOOST_CHECK_THROW(KSFactor<double>(KSPattern{big, big, 1, 1}, {}), PatternError);
  BOOST_CHECK_NO_THROW((KSPattern{1 << 20, 2, 2, 1 << 20}.validate()));  // 2^42 nonzeros
  // fuse() and the presets returned such patterns (nnz() wrapped) without a word.
  const Index e40 = Index(1) << 40;
  BOOST_CHECK_THROW(fuse({1, e40, 1, 1}, {1, 1, e40, 1}), PatternError);  // 2^80 nonzeros
  BOOST_CHECK_THROW(monarch_patterns(e40, e40, 1), PatternError);
  BOOST_CHECK_THROW(low_rank_patterns(e40, e40, Index(1) << 30), PatternError);
  BOOST_CHECK_THROW(dense_patterns(big, big), PatternError);
  BOOST_CHECK_THROW(butterfly_patterns(Index(1) << 62), PatternError);  // 2n nonzeros
  BOOST_CHECK_THROW(kaleidoscope_patterns(Index(1) << 62), PatternError);
  BOOST_CHECK_NO_THROW(butterfly_patterns(Index(1) << 61));
}

BOOST_AUTO_TEST_SUITE_END()
