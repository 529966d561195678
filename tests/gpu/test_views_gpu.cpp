// Every operator family on device views that are blocks of larger matrices: X and Y start at
// random offsets (often not 16-byte aligned) inside padded device matrices, so their leading
// dimensions exceed their extents. Each application is compared with the CPU application on the
// same values, and the padding around Y must keep its values exactly (a kernel that writes past
// its view would change them). Shapes, operators, layouts and offsets are drawn at random from
// a seed per round; STROP_VIEW_ROUNDS (default 2) sets the number of rounds, so that a longer
// search can run on a GPU machine without a rebuild.
#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <numeric>
#include <random>
#include <vector>

#include "gpu_reference.hpp"
#include "operator_zoo.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

int view_rounds() {
  return count_from_environment("STROP_VIEW_ROUNDS", 2);
}

Index draw(std::mt19937& gen, Index lo, Index hi) {
  return std::uniform_int_distribution<Index>(lo, hi)(gen);
}

// Where a rows x cols view sits inside its padded matrix.
struct Placement {
  Index row = 0, col = 0, rows_after = 0, cols_after = 0;
  Index total_rows(Index rows) const { return row + rows + rows_after; }
  Index total_cols(Index cols) const { return col + cols + cols_after; }
  template <class View>
  View inside(View whole, Index rows, Index cols) const {
    return whole.row_block(row, rows).col_block(col, cols);
  }
};

Placement draw_placement(std::mt19937& gen) {
  return {draw(gen, 0, 3), draw(gen, 0, 2), draw(gen, 0, 2), draw(gen, 0, 2)};
}

// True when `got` equals `before` outside the block at p (rows x cols), element for element.
template <class T>
bool padding_kept(const HostMatrix<T>& got, const HostMatrix<T>& before, const Placement& p,
                  Index rows, Index cols) {
  for (Index j = 0; j < got.cols(); ++j)
    for (Index i = 0; i < got.rows(); ++i) {
      const bool inside = i >= p.row && i < p.row + rows && j >= p.col && j < p.col + cols;
      if (!inside && !(got(i, j) == before(i, j))) return false;
    }
  return true;
}

// One application of `A` on blocks of padded device matrices against the CPU on the same blocks.
// Storage S is the signals' type: T itself, or half/bfloat16 for a float operator (then the
// CPU computes in float on the rounded values, and `tol` should allow the 16-bit rounding).
template <class S, class E>
void check_placed(const E& A, Op op, Layout lx, Layout ly, Index batch, const Placement& px,
                  const Placement& py, std::mt19937& gen, double tol) {
  using T = typename E::Scalar;
  const Index in = op == Op::NoTrans ? A.cols() : A.rows();
  const Index out = op == Op::NoTrans ? A.rows() : A.cols();
  const HostMatrix<S> x =
      gaussian_matrix<T>(gen, px.total_rows(in), px.total_cols(batch)).template cast<S>();
  const HostMatrix<S> y0 =
      gaussian_matrix<T>(gen, py.total_rows(out), py.total_cols(batch)).template cast<S>();
  const T alpha = gaussian_matrix<T>(gen, 1, 1)(0, 0), beta = gaussian_matrix<T>(gen, 1, 1)(0, 0);

  const HostMatrix<T> xt = x.template cast<T>();
  HostMatrix<T> expected = y0.template cast<T>();
  A.apply(op, px.inside(view(xt), in, batch), py.inside(view(expected), out, batch), alpha, beta);

  BOOST_TEST_CONTEXT(E::type_name << " " << to_string(op) << " X " << to_string(lx) << " at ("
                                  << px.row << ", " << px.col << ") Y " << to_string(ly) << " at ("
                                  << py.row << ", " << py.col << "), " << out << "x" << in
                                  << ", batch " << batch) {
    const DeviceMatrix<S> xd = to_device(x, lx);
    DeviceMatrix<S> yd = to_device(y0, ly);
    const ConstView<S> xv = px.inside(xd.view(), in, batch);
    const MatrixView<S> yv = py.inside(yd.view(), out, batch);
    HostMatrix<S> got;
    try {
      if constexpr (std::is_same_v<S, T>) {
        A.apply(op, xv, yv, alpha, beta);
      } else {
        apply_reduced_precision<S>(A, op, xv, yv, alpha, beta);
      }
      got = yd.to_host();
    } catch (const std::exception& e) {
      BOOST_ERROR(e.what());  // with the contexts: which operator, view and batch
      throw;
    }
    BOOST_TEST(padding_kept(got, y0, py, out, batch));
    const HostMatrix<T> block = got.block(py.row, py.col, out, batch).template cast<T>();
    const HostMatrix<T> want = expected.block(py.row, py.col, out, batch);
    const HostMatrix<T> beta_term = beta * y0.block(py.row, py.col, out, batch).template cast<T>();
    const double scale = std::max({double(want.norm()), double(beta_term.norm()), 1e-30});
    BOOST_TEST(double((block - want).norm()) / scale <= tol);
  }
}

// Every op (of `ops`) and layout pair of `A`, T-valued signals.
template <class E>
void check_all_placements(const E& A, Index batch, std::mt19937& gen, double tol = -1,
                          std::initializer_list<Op> ops = {Op::NoTrans, Op::Trans, Op::Adjoint}) {
  using T = typename E::Scalar;
  if (tol < 0) tol = tolerance<T>(4 * std::max<Index>({A.rows(), A.cols(), 1}));
  for (Op op : ops)
    for (Layout lx : {Layout::ColMajor, Layout::RowMajor})
      for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
        const Placement px = draw_placement(gen);
        const Placement py = draw_placement(gen);
        check_placed<T>(A, op, lx, ly, batch, px, py, gen, tol);
      }
}

// Half and bfloat16 signals of a float operator, A and A^T, every layout pair.
template <class E>
void check_reduced_placements(const E& A, Index batch, std::mt19937& gen, double depth) {
  for (Op op : {Op::NoTrans, Op::Trans})
    for (Layout lx : {Layout::ColMajor, Layout::RowMajor})
      for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
        Placement px = draw_placement(gen);
        Placement py = draw_placement(gen);
        check_placed<half>(A, op, lx, ly, batch, px, py, gen, 4 * depth * unit_roundoff_v<half>);
        px = draw_placement(gen);
        py = draw_placement(gen);
        check_placed<bfloat16>(A, op, lx, ly, batch, px, py, gen,
                               4 * depth * unit_roundoff_v<bfloat16>);
      }
}

KSPattern draw_pattern(std::mt19937& gen) {
  return {draw(gen, 1, 4), draw(gen, 1, 9), draw(gen, 1, 9), draw(gen, 1, 5)};
}

const KSAlgorithm kAllKSAlgorithms[] = {KSAlgorithm::Auto,        KSAlgorithm::Fused,
                                        KSAlgorithm::StridedGemm, KSAlgorithm::Bmm,
                                        KSAlgorithm::Dense,       KSAlgorithm::SmallBatch};

Index draw_batch(std::mt19937& gen) {
  const Index batches[] = {1, 2, 3, 5, 8, 13, 16, 33, 130};
  return batches[draw(gen, 0, 8)];
}

template <class Body>
void for_each_round(const char* what, Body body) {
  for (int round = 0; round < view_rounds(); ++round) {
    std::mt19937 gen(7919u * unsigned(round) + 17u);
    BOOST_TEST_CONTEXT(what << ", round " << round) {
      body(gen);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_views, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(basic_operators_on_placed_views, T, ScalarTypes) {
  for_each_round("dense, diagonal, permutation", [](std::mt19937& gen) {
    check_all_placements(Dense<T>(gaussian_matrix<T>(gen, draw(gen, 1, 70), draw(gen, 1, 70))),
                         draw_batch(gen), gen);
    const Index n = draw(gen, 1, 60);
    check_all_placements(Diagonal<T>(gaussian_matrix<T>(gen, n, 1).col(0)), draw_batch(gen), gen);
    std::vector<Index> perm(static_cast<std::size_t>(n));
    std::iota(perm.begin(), perm.end(), Index(0));
    std::shuffle(perm.begin(), perm.end(), gen);
    check_all_placements(Permutation<T>(perm), draw_batch(gen), gen);
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(ks_operators_on_placed_views, T, ScalarTypes) {
  for_each_round("KS factor and chains", [](std::mt19937& gen) {
    const KSPattern p = draw_pattern(gen);
    const auto K = KSFactor<T>::random(p, gen);
    for (KSAlgorithm algorithm : kAllKSAlgorithms) {
      const KSAlgorithmGuard forced(algorithm);
      BOOST_TEST_CONTEXT("pattern (" << p.a << "," << p.b << "," << p.c << "," << p.d << "), "
                                     << to_string(algorithm)) {
        check_all_placements(K, draw_batch(gen), gen);
      }
    }
    const Index n = Index(1) << draw(gen, 1, 7);
    check_all_placements(KSChain<T>::random(butterfly_patterns(n), gen), draw_batch(gen), gen);
    check_all_placements(KSChain<T>::random(monarch_patterns(24, 36, 6), gen), draw_batch(gen),
                         gen);
    check_all_placements(hadamard<T>(n), draw_batch(gen), gen);
    check_all_placements(dct<T>(12 * n), draw_batch(gen), gen);
    if constexpr (is_complex_v<T>) {
      check_all_placements(dft<T>(n), draw_batch(gen), gen);  // complex<float>: the FFT kernel
      check_all_placements(dft<T>(3 * n), draw_batch(gen), gen);
    }
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(block_low_rank_on_placed_views, T, ScalarTypes) {
  for_each_round("low-rank, Monarch, BLAST", [](std::mt19937& gen) {
    const Index rb = draw(gen, 1, 5), cb = draw(gen, 1, 5), rank = draw(gen, 1, 9);
    const Index rows = rb * draw(gen, 1, 12), cols = cb * draw(gen, 1, 12);
    BOOST_TEST_CONTEXT(rows << "x" << cols << " grid " << rb << "x" << cb << " rank " << rank) {
      check_all_placements(LowRank<T>::random(rows, cols, rank, gen), draw_batch(gen), gen);
      check_all_placements(Monarch<T>::random(rows, cols, rb, cb, rank, gen), draw_batch(gen), gen);
      check_all_placements(Blast<T>::random(rows, cols, rb, cb, rank, gen), draw_batch(gen), gen);
    }
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(kron_and_expressions_on_placed_views, T, ScalarTypes) {
  for_each_round("Kron and expressions", [](std::mt19937& gen) {
    std::vector<AnyOperator<T>> factors;
    const Index count = draw(gen, 1, 4);
    for (Index f = 0; f < count; ++f)
      factors.push_back(Dense<T>(gaussian_matrix<T>(gen, draw(gen, 1, 7), draw(gen, 1, 7))));
    for (KronAlgorithm algorithm :
         {KronAlgorithm::Auto, KronAlgorithm::Fused, KronAlgorithm::Sliced, KronAlgorithm::Gemm,
          KronAlgorithm::Shuffle}) {
      const KronAlgorithmGuard forced(algorithm);
      BOOST_TEST_CONTEXT(to_string(algorithm)) {
        check_all_placements(Kron<T>(factors), draw_batch(gen), gen);
      }
    }
    // Kron of other operators: each factor through its own device path.
    const auto K = KSFactor<T>::random(draw_pattern(gen), gen);
    const Dense<T> D(gaussian_matrix<T>(gen, draw(gen, 1, 5), draw(gen, 1, 5)));
    check_all_placements(kron(D, K), draw_batch(gen), gen);
    // Sums, products and stacks pass sub-views of their temporaries and outputs along.
    const Index n = K.rows();
    const Dense<T> S(gaussian_matrix<T>(gen, n, K.cols()));
    const Dense<T> E(gaussian_matrix<T>(gen, draw(gen, 1, 9), n));
    check_all_placements(E * (K - S) + E * S, draw_batch(gen), gen);
    check_all_placements(vstack(K, S), draw_batch(gen), gen);
    check_all_placements(hstack(E, E), draw_batch(gen), gen);
    check_all_placements(block_diag(K, E), draw_batch(gen), gen);
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(strassen_tile_on_placed_views, T, ScalarTypes) {
  for_each_round("Strassen-Tile", [](std::mt19937& gen) {
    const Index rows = 4 * draw(gen, 1, 12), cols = 4 * draw(gen, 1, 12);
    // Exact encoders (per signal) and a random rank-49 subset (mixes each tile's signals: the
    // CPU computes the same batch-linear map).
    const auto exact =
        StrassenTile<T>::encode(gaussian_matrix<T>(gen, 2 * rows, cols), stl::strassen_2x2());
    const auto subset = StrassenTile<T>::encode(gaussian_matrix<T>(gen, rows, cols),
                                                stl::rank49_subset(draw(gen, 8, 49), gen));
    for (StlPath path : {StlPath::Auto, StlPath::Steps}) {
      const StlPathGuard forced(path);
      BOOST_TEST_CONTEXT(to_string(path)) {
        check_all_placements(exact, draw_batch(gen), gen);
        check_all_placements(subset, draw_batch(gen), gen);
      }
    }
    // A chain of three layers (kept encoded between layers when t divides the batch).
    const Index inner = 4 * draw(gen, 1, 6);
    const StrassenTileChain<T> chain({
        StrassenTile<T>::encode(gaussian_matrix<T>(gen, rows, inner), stl::rank49_subset(40, gen)),
        StrassenTile<T>::encode(gaussian_matrix<T>(gen, inner, inner), stl::rank49_subset(24, gen)),
        StrassenTile<T>::encode(gaussian_matrix<T>(gen, inner, cols), stl::rank49_subset(49, gen)),
    });
    check_all_placements(chain, draw_batch(gen), gen);
    if constexpr (!is_complex_v<T>) {
      // The fused kernel's domain: t = 4, A (not A^T), B <= 16, input features in runs of 128.
      const StlPathGuard forced(StlPath::Fused);
      const auto fused =
          StrassenTile<T>::encode(gaussian_matrix<T>(gen, rows, 128 * draw(gen, 1, 2)),
                                  stl::rank49_subset(draw(gen, 8, 49), gen));
      check_all_placements(fused, draw(gen, 1, 16), gen, -1, {Op::NoTrans});
    }
  });
}

BOOST_AUTO_TEST_CASE(sixteen_bit_signals_on_placed_views) {
  for_each_round("16-bit signals", [](std::mt19937& gen) {
    const auto K = KSFactor<float>::random(draw_pattern(gen), gen);
    for (KSAlgorithm algorithm : kAllKSAlgorithms) {
      if (algorithm == KSAlgorithm::SmallBatch) continue;  // no 16-bit version (a DeviceError)
      const KSAlgorithmGuard forced(algorithm);
      BOOST_TEST_CONTEXT(to_string(algorithm)) {
        check_reduced_placements(K, draw_batch(gen), gen, 2);
      }
    }
    const Index n = Index(1) << draw(gen, 2, 7);
    check_reduced_placements(KSChain<float>::random(butterfly_patterns(n), gen), draw_batch(gen),
                             gen, 2 + double(butterfly_patterns(n).size()));
    check_reduced_placements(hadamard<float>(n), draw_batch(gen), gen, 4);
    const Index rb = draw(gen, 1, 4), cb = draw(gen, 1, 4), rank = draw(gen, 1, 9);
    const Index rows = rb * draw(gen, 1, 10), cols = cb * draw(gen, 1, 10);
    check_reduced_placements(LowRank<float>::random(rows, cols, rank, gen), draw_batch(gen), gen,
                             4);
    check_reduced_placements(Monarch<float>::random(rows, cols, rb, cb, rank, gen), draw_batch(gen),
                             gen, 4);
    check_reduced_placements(Blast<float>::random(rows, cols, rb, cb, rank, gen), draw_batch(gen),
                             gen, 6);
    // A layer large enough for the GEMM plans, the decode and the skinny kernels (by batch).
    check_reduced_placements(Monarch<float>::random(256, 256, 16, 16, 16, gen), draw_batch(gen),
                             gen, 4);
    check_reduced_placements(Blast<float>::random(256, 256, 16, 16, 16, gen), draw_batch(gen), gen,
                             6);
    check_reduced_placements(
        Kron<float>({Dense<float>(gaussian_matrix<float>(gen, draw(gen, 1, 6), draw(gen, 1, 6))),
                     Dense<float>(gaussian_matrix<float>(gen, draw(gen, 1, 6), draw(gen, 1, 6)))}),
        draw_batch(gen), gen, 4);
    check_reduced_placements(
        StrassenTile<float>::encode(
            gaussian_matrix<float>(gen, 4 * draw(gen, 1, 8), 4 * draw(gen, 1, 8)),
            stl::rank49_subset(draw(gen, 8, 49), gen)),
        draw_batch(gen), gen, 8);
    const StrassenTileChain<float> chain(
        {StrassenTile<float>::encode(gaussian_matrix<float>(gen, 16, 32),
                                     stl::rank49_subset(32, gen)),
         StrassenTile<float>::encode(gaussian_matrix<float>(gen, 32, 8),
                                     stl::rank49_subset(49, gen))});
    check_reduced_placements(chain, draw_batch(gen), gen, 16);
  });
}

// cuBLAS's pointer-array GEMM (a KS factor with a, d > 1 under StridedGemm) picks its vector
// width from the leading dimensions and cannot check the pointers, which live on the device:
// Y at an odd offset with an even (16-bit) or a multiple-of-4 (float) leading dimension
// faulted with cudaErrorMisalignedAddress (found by the rounds above: bfloat16, round 9).
BOOST_AUTO_TEST_CASE(grouped_gemms_on_misaligned_views) {
  std::mt19937 gen(5);
  const auto K = KSFactor<float>::random(KSPattern{2, 3, 5, 2}, gen);
  const auto Kd = KSFactor<double>::random(KSPattern{3, 4, 2, 2}, gen);
  const KSAlgorithmGuard forced(KSAlgorithm::StridedGemm);
  const Placement px{3, 1, 0, 1}, py{1, 1, 1, 3};  // Y: 8 + 1 + 3 = 12 columns in RowMajor
  for (Op op : {Op::NoTrans, Op::Trans})
    for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
      check_placed<float>(K, op, lx, Layout::RowMajor, 8, px, py, gen, tolerance<float>(64));
      check_placed<double>(Kd, op, lx, Layout::RowMajor, 8, px, py, gen, tolerance<double>(64));
      check_placed<half>(K, op, lx, Layout::RowMajor, 8, px, py, gen, 8 * unit_roundoff_v<half>);
      check_placed<bfloat16>(K, op, lx, Layout::RowMajor, 8, px, py, gen,
                             8 * unit_roundoff_v<bfloat16>);
    }
}

BOOST_AUTO_TEST_SUITE_END()
