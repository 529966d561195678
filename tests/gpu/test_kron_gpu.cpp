// Kron-matmul on the GPU (operators/kron/): every algorithm, scalar type, layout pair and
// form, against the dense Kronecker product built with Eigen on the CPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gpu_reference.hpp"
#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "runtime/shared_memory.hpp"

#if STROP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

using namespace strop;
using namespace strop::testing;

namespace {

using Shapes = std::vector<std::pair<Index, Index>>;  // (rows, cols) of each factor

// Mixed shapes, 1 to 8 factors, small (fused) and large (chunked P) factors.
const std::vector<Shapes> kShapeSets = {
    {{3, 2}},
    {{2, 3}, {3, 2}, {4, 4}},
    {{8, 8}, {8, 8}, {8, 8}},
    {{5, 3}, {2, 7}, {4, 4}, {3, 3}},
    {{2, 2}, {3, 2}, {2, 3}, {2, 2}, {1, 2}, {3, 3}, {2, 2}, {2, 1}},
    {{16, 16}, {16, 12}},
    {{20, 33}, {40, 20}},
    {{64, 64}, {2, 2}},
    {{1, 5}, {6, 1}, {7, 7}},
};

// The paths whose scalar handling the engine tests above already cover for all four types
// (the solver's inverses, the any-factor path) run on one real and one complex type, which
// keeps CI's build of this file short.
using TwoTypes = boost::mpl::list<float, std::complex<double>>;

const KronAlgorithm kAlgorithms[] = {KronAlgorithm::Auto, KronAlgorithm::Fused,
                                     KronAlgorithm::Sliced, KronAlgorithm::Gemm,
                                     KronAlgorithm::Shuffle};

template <class T>
void check_shapes(const Shapes& shapes, const std::vector<Index>& batches) {
  std::vector<AnyOperator<T>> factors;
  HostMatrix<T> dense = HostMatrix<T>::Ones(1, 1);
  for (auto [r, c] : shapes) {
    const HostMatrix<T> f = random_matrix<T>(r, c);
    factors.emplace_back(Dense<T>(f));
    dense = kron_dense(dense, f);
  }
  const Kron<T> A(factors);
  for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
    const HostMatrix<T> G = op_of(dense, op);
    for (Index batch : batches) {
      // One CPU reference per form and batch, shared by every algorithm and layout pair.
      const T alpha = random_scalar<T>(), beta = random_scalar<T>();
      const HostMatrix<T> x = random_matrix<T>(G.cols(), batch);
      const HostMatrix<T> y0 = random_matrix<T>(G.rows(), batch);
      const HostMatrix<T> expected = alpha * (G * x) + beta * y0;
      for (KronAlgorithm algorithm : kAlgorithms) {
        KronAlgorithmGuard guard(algorithm);
        for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
          for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
            const DeviceMatrix<T> xd = to_device(x, lx);
            DeviceMatrix<T> yd = to_device(y0, ly);
            A.apply(op, xd.view(), yd.view(), alpha, beta);
            BOOST_TEST_CONTEXT(to_string(algorithm)
                               << " " << to_string(op) << " X " << to_string(lx) << " Y "
                               << to_string(ly) << " B " << batch << " " << ScalarTraits<T>::name
                               << " " << G.rows() << "x" << G.cols()) {
              check_error_within(relative_error(yd.to_host(), expected), tolerance<T>(G.cols()));
            }
          }
        }
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_kron, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(every_algorithm_against_dense_kronecker, T, ScalarTypes) {
  for (const Shapes& shapes : kShapeSets)
    check_shapes<T>(shapes, {1, 7, 33});
}

// Batch-first data of FastKron's kind: many signals, fused passes with several chunks per
// block, and a batch that is no multiple of any tile.
BOOST_AUTO_TEST_CASE_TEMPLATE(larger_batches, T, RealTypes) {
  check_shapes<T>({{8, 8}, {8, 8}, {8, 8}, {4, 4}}, {301});
  check_shapes<T>({{32, 32}, {32, 32}}, {130});
}

// n random P x P factors, and the (P, n) the square kernel's tests take: every P it
// specialises, up to 12 steps in one pass.
constexpr std::pair<Index, int> kSquareKernelCases[] = {{2, 14}, {4, 7}, {8, 5}, {16, 4}, {32, 3}};
template <class T>
Kron<T> random_equal_square_kron(Index P, int n) {
  std::vector<AnyOperator<T>> factors;
  for (int i = 0; i < n; ++i)
    factors.emplace_back(Dense<T>(random_matrix<T>(P, P)));
  return Kron<T>(factors);
}

// The in-place kernel for equal square factors (kron_fused_square.cu): every P it
// specialises, up to 12 steps in one pass, float and double, against the CPU application
// (the products are too large for a dense reference). check_gpu_against_cpu covers the
// forms, layouts and alpha/beta on packed data (16-byte output runs: vector stores); the
// strided views below have columns 3 elements longer (scalar stores), start one row in, and
// hold more tiles than the grid has blocks (each block runs several, double-buffered).
BOOST_AUTO_TEST_CASE_TEMPLATE(equal_square_factors_fused_in_place, T, RealTypes) {
  for (auto [P, n] : kSquareKernelCases) {
    const Kron<T> A = random_equal_square_kron<T>(P, n);
    const Index K = A.rows(), batch = 5;
    for (KronAlgorithm algorithm : {KronAlgorithm::Auto, KronAlgorithm::Fused}) {
      KronAlgorithmGuard guard(algorithm);
      BOOST_TEST_CONTEXT(to_string(algorithm) << " P " << P << " n " << n) {
        check_gpu_against_cpu(A, batch);
        const Index many = 150;
        const HostMatrix<T> x = random_matrix<T>(K + 3, many), y0 = random_matrix<T>(K + 3, many);
        HostMatrix<T> expected = y0;
        A.apply(Op::NoTrans, view(x).row_block(1, K), view(expected).row_block(1, K), T(2), T(-1));
        const DeviceMatrix<T> xd = to_device(x, Layout::ColMajor);
        DeviceMatrix<T> yd = to_device(y0, Layout::ColMajor);
        A.apply(Op::NoTrans, ConstView<T>(xd.view()).row_block(1, K), yd.view().row_block(1, K),
                T(2), T(-1));
        check_error_within(relative_error(yd.to_host(), expected), tolerance<T>(K));
      }
    }
  }
}

// One or two signals: the in-place kernel's persistent grid then has more clusters than units
// of work (the idle ones must still pass every cluster barrier), and a case small enough for
// compute-sanitizer's racecheck to finish (scripts/gpu-sanitize.sh OUT racecheck
// gpu_kron/equal_square_factors_on_one_or_two_signals*).
BOOST_AUTO_TEST_CASE_TEMPLATE(equal_square_factors_on_one_or_two_signals, T, RealTypes) {
  for (auto [P, n] : kSquareKernelCases) {
    const Kron<T> A = random_equal_square_kron<T>(P, n);
    KronAlgorithmGuard guard(KronAlgorithm::Fused);
    for (Index batch : {1, 2})
      BOOST_TEST_CONTEXT("P " << P << " n " << n << " batch " << batch) {
        check_gpu_against_cpu(A, batch);
      }
  }
}

// Factors behind transpose/adjoint nodes and identities reach the engine too.
BOOST_AUTO_TEST_CASE_TEMPLATE(transposed_and_identity_factors, T, ScalarTypes) {
  const HostMatrix<T> a = random_matrix<T>(4, 3), b = random_matrix<T>(5, 2);
  const Kron<T> A(std::vector<AnyOperator<T>>{AnyOperator<T>(Dense<T>(a).transpose()),
                                              AnyOperator<T>(Identity<T>(3)),
                                              AnyOperator<T>(Dense<T>(b).adjoint())});
  const HostMatrix<T> eye = HostMatrix<T>::Identity(3, 3);
  const HostMatrix<T> dense =
      kron_dense(kron_dense(HostMatrix<T>(a.transpose()), eye), HostMatrix<T>(b.adjoint()));
  check_error_within(relative_error(A.to_dense(), dense), tolerance<T>(16));
  for (KronAlgorithm algorithm : kAlgorithms) {
    KronAlgorithmGuard guard(algorithm);
    check_gpu_against_cpu(A, 9);
  }
}

// beta = 0 must overwrite Y (NaNs in it do not survive), and a caller's work space is used.
// Half the work space Auto's plan asks for must be refused; with tuning on (STROP_TUNE=1) Auto
// may run a measured algorithm that needs less, so this test runs with tuning off.
BOOST_AUTO_TEST_CASE_TEMPLATE(workspace_and_beta_zero, T, ScalarTypes) {
  struct TuningOff {
    bool was = tuning_enabled();
    TuningOff() { set_tuning_enabled(false); }
    ~TuningOff() { set_tuning_enabled(was); }
  } tuning_off;
  Context ctx;
  const HostMatrix<T> f1 = random_matrix<T>(8, 8), f2 = random_matrix<T>(6, 4),
                      f3 = random_matrix<T>(8, 8);
  const HostMatrix<T> dense = kron_dense(kron_dense(f1, f2), f3);
  const DeviceMatrix<T> d1 = to_device(f1, Layout::ColMajor, ctx),
                        d2 = to_device(f2, Layout::ColMajor, ctx),
                        d3 = to_device(f3, Layout::ColMajor, ctx);
  const std::vector<KronFactorRef<T>> refs = {
      KronFactorRef<T>::column_major(d1.data(), 8, 8, Op::NoTrans),
      KronFactorRef<T>::column_major(d2.data(), 6, 4, Op::NoTrans),
      KronFactorRef<T>::column_major(d3.data(), 8, 8, Op::NoTrans)};
  const Index batch = 19;
  const HostMatrix<T> x = random_matrix<T>(dense.cols(), batch);
  for (KronAlgorithm algorithm : kAlgorithms) {
    for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
      const std::size_t bytes = kron_matmul_workspace_bytes<T>(refs, batch, layout, algorithm);
      Buffer<char> workspace(Index(bytes), MemorySpace::Device, ctx);
      const DeviceMatrix<T> xd = to_device(x, layout, ctx);
      HostMatrix<T> poison(dense.rows(), batch);
      poison.setConstant(T(std::numeric_limits<RealOf<T>>::quiet_NaN()));
      DeviceMatrix<T> yd = to_device(poison, layout, ctx);
      kron_matmul<T>(refs, xd.view(), yd.view(), T(2), T(0), ctx, workspace.data(), bytes,
                     algorithm);
      const HostMatrix<T> got = yd.to_host(ctx);
      BOOST_TEST_CONTEXT(to_string(algorithm) << " " << to_string(layout)) {
        BOOST_TEST(got.allFinite());
        check_error_within(relative_error(got, HostMatrix<T>(T(2) * dense * x)),
                           tolerance<T>(dense.cols()));
        if (bytes > 1024) {
          BOOST_CHECK_THROW(kron_matmul<T>(refs, xd.view(), yd.view(), T(1), T(0), ctx,
                                           workspace.data(), bytes / 2, algorithm),
                            ShapeError);
        }
      }
    }
  }
  // Shapes that do not fit are rejected before any launch.
  DeviceMatrix<T> wrong(dense.cols() + 1, batch, Layout::ColMajor, ctx);
  DeviceMatrix<T> yd(dense.rows(), batch, Layout::ColMajor, ctx);
  BOOST_CHECK_THROW(kron_matmul<T>(refs, wrong.view(), yd.view(), T(1), T(0), ctx), ShapeError);
}

// Factors the engine does not take (here a KS factor) keep the factor-by-factor path.
BOOST_AUTO_TEST_CASE(non_dense_factor_falls_back) {
  std::mt19937 gen(7);
  const auto ks = KSFactor<double>::random({2, 3, 3, 2}, gen);
  const Dense<double> d(random_matrix<double>(3, 4));
  const Kron<double> A(
      std::vector<AnyOperator<double>>{AnyOperator<double>(ks), AnyOperator<double>(d)});
  const HostMatrix<double> x = random_matrix<double>(A.cols(), 5);
  HostMatrix<double> expected(A.rows(), 5);
  A.apply(Op::NoTrans, view(x), view(expected));
  const DeviceMatrix<double> xd = to_device(x, Layout::RowMajor);
  DeviceMatrix<double> yd(A.rows(), 5, Layout::RowMajor);
  A.apply(Op::NoTrans, xd.view(), yd.view());
  check_error_within(relative_error(yd.to_host(), expected), tolerance<double>(64));
}

// Any factors on the device: each applied once to the unfolded intermediate (its own GPU
// path), then permuted; every op, layout pair and alpha/beta against the host path (itself
// checked against the dense product in the unit tests), and more signals than one
// permutation launch takes.
BOOST_AUTO_TEST_CASE_TEMPLATE(any_factors_on_the_device, T, TwoTypes) {
  std::mt19937 gen(5);
  const KSChain<T> butterfly = hadamard<T>(8);
  const Kron<T> A = kron(butterfly, Dense<T>(random_matrix<T>(3, 5)),
                         Permutation<T>(std::vector<Index>{2, 0, 3, 1}));
  check_gpu_against_cpu(A, 13);
  const Kron<T> small = kron(KSFactor<T>::random({1, 2, 3, 1}, gen), Identity<T>(2));
  const HostMatrix<T> x = random_matrix<T>(small.cols(), 70000);
  HostMatrix<T> expected(small.rows(), 70000);
  small.apply(Op::NoTrans, view(x), view(expected));
  const DeviceMatrix<T> xd = to_device(x, Layout::ColMajor);
  DeviceMatrix<T> yd(small.rows(), 70000, Layout::ColMajor);
  small.apply(Op::NoTrans, xd.view(), yd.view());
  check_error_within(relative_error(yd.to_host(), expected), tolerance<T>(8));
}

// Views that are not packed (a column block of a wider matrix: col_stride > rows, and a row
// block: row_stride > cols) reach every algorithm; the GEMM passes stage them.
BOOST_AUTO_TEST_CASE_TEMPLATE(strided_views, T, ScalarTypes) {
  const HostMatrix<T> f1 = random_matrix<T>(4, 3), f2 = random_matrix<T>(5, 6);
  const Kron<T> A = kron(Dense<T>(f1), Dense<T>(f2));
  const HostMatrix<T> dense = kron_dense(f1, f2);
  const Index batch = 11;
  const HostMatrix<T> x = random_matrix<T>(dense.cols() + 3, batch + 4);
  const HostMatrix<T> y0 = random_matrix<T>(dense.rows() + 2, batch + 5);
  for (KronAlgorithm algorithm : kAlgorithms) {
    KronAlgorithmGuard guard(algorithm);
    for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
      const DeviceMatrix<T> xd = to_device(x, layout);
      DeviceMatrix<T> yd = to_device(y0, layout);
      const auto xv = ConstView<T>(xd.view()).row_block(1, dense.cols()).col_block(2, batch);
      auto yv = yd.view().row_block(2, dense.rows()).col_block(1, batch);
      A.apply(Op::NoTrans, xv, yv, T(2), T(-1));
      HostMatrix<T> expected = y0;
      expected.block(2, 1, dense.rows(), batch) =
          T(2) * dense * x.block(1, 2, dense.cols(), batch) - y0.block(2, 1, dense.rows(), batch);
      BOOST_TEST_CONTEXT(to_string(algorithm) << " " << to_string(layout)) {
        // The rows and columns around the block are untouched.
        check_error_within(relative_error(yd.to_host(), expected), tolerance<T>(dense.cols()));
      }
    }
  }
}

// Half and bfloat16 signals through float factors: one tensor-core GEMM per factor. Each
// factor and each intermediate is rounded to 16 bits, so the error against the float CPU
// result (same representable inputs) is a few units of roundoff per factor.
// `factor_scale` keeps long products of large factors within half's range (normal factors of
// 16 grow a signal's values 4x per factor, and the largest rows far more).
template <class Storage>
void check_reduced_kron(const Shapes& shapes, Index batch, float factor_scale = 1.0f) {
  std::vector<AnyOperator<float>> factors;
  for (auto [r, c] : shapes)
    factors.emplace_back(
        Dense<float>(HostMatrix<float>(factor_scale * random_matrix<float>(r, c))));
  const Kron<float> A(factors);
  const double bound = 2.0 * double(shapes.size() + 1) * unit_roundoff_v<Storage>;
  for (Op op : {Op::NoTrans, Op::Trans})
    for (Layout lx : {Layout::ColMajor, Layout::RowMajor})
      for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
        const Index in = op == Op::NoTrans ? A.cols() : A.rows();
        const Index out = op == Op::NoTrans ? A.rows() : A.cols();
        const HostMatrix<Storage> xs = random_matrix<float>(in, batch).cast<Storage>();
        const HostMatrix<Storage> y0 = random_matrix<float>(out, batch).cast<Storage>();
        HostMatrix<float> expected = y0.template cast<float>();
        A.apply(op, view(HostMatrix<float>(xs.template cast<float>())), view(expected), 0.5f,
                -2.0f);
        const DeviceMatrix<Storage> xd = to_device(xs, lx);
        DeviceMatrix<Storage> yd = to_device(y0, ly);
        apply_reduced_precision(A, op, xd.view(), yd.view(), 0.5f, -2.0f);
        BOOST_TEST_CONTEXT(to_string(op) << " X " << to_string(lx) << " Y " << to_string(ly)
                                         << " B " << batch << " factors " << shapes.size()) {
          const HostMatrix<float> got = yd.to_host().template cast<float>();
          check_error_within(relative_error(got, expected), bound);
        }
      }
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_signals) {
  for (const Shapes& shapes : kShapeSets) {
    check_reduced_kron<half>(shapes, 7);
    check_reduced_kron<bfloat16>(shapes, 7);
  }
  check_reduced_kron<half>({{16, 16}, {16, 16}, {16, 16}}, 130);
  check_reduced_kron<bfloat16>({{32, 32}, {32, 32}}, 1);
  // A non-dense factor: through float copies of the signals.
  std::mt19937 gen(3);
  const Kron<float> mixed(std::vector<AnyOperator<float>>{
      AnyOperator<float>(KSFactor<float>::random({1, 4, 4, 2}, gen)),
      AnyOperator<float>(Dense<float>(random_matrix<float>(3, 3)))});
  const HostMatrix<half> xs = random_matrix<float>(mixed.cols(), 5).cast<half>();
  HostMatrix<float> expected(mixed.rows(), 5);
  mixed.apply(Op::NoTrans, view(HostMatrix<float>(xs.cast<float>())), view(expected));
  const DeviceMatrix<half> xd = to_device(xs, Layout::ColMajor);
  DeviceMatrix<half> yd(mixed.rows(), 5, Layout::ColMajor);
  apply_reduced_precision(mixed, Op::NoTrans, xd.view(), yd.view());
  check_error_within(relative_error(HostMatrix<float>(yd.to_host().cast<float>()), expected),
                     2 * unit_roundoff_v<half>);
}

// Pairs of 32 x 32 factors on batch-first 16-bit signals run as one tensor-core pass
// (kron_fused_pair16.cu; the planner test in tests/unit/test_kron_matmul.cpp shows Auto takes
// it for these shapes): three and four factors, a pair before a rectangular factor, one and
// several signals, both layouts (batch-last X staged), transposes, alpha and beta. Beta zero
// must not read Y (NaN there), and an X view at an odd address goes through an aligned copy.
BOOST_AUTO_TEST_CASE(pairs_of_32_factors_in_16_bits) {
  check_reduced_kron<half>({{32, 32}, {32, 32}, {32, 32}}, 3);
  check_reduced_kron<bfloat16>({{32, 32}, {32, 32}, {32, 32}}, 2);
  check_reduced_kron<half>({{5, 32}, {32, 32}, {32, 32}}, 2);
  check_reduced_kron<bfloat16>({{32, 32}, {32, 32}, {32, 32}, {32, 32}}, 2);

  const Index K = 32 * 32 * 32, B = 3;
  std::vector<AnyOperator<float>> factors;
  for (int f = 0; f < 3; ++f)
    factors.emplace_back(Dense<float>(random_matrix<float>(32, 32)));
  const Kron<float> A(factors);
  const HostMatrix<half> xs = random_matrix<float>(K, B).cast<half>();
  HostMatrix<float> expected(K, B);
  A.apply(Op::NoTrans, view(HostMatrix<float>(xs.cast<float>())), view(expected), 1.5f, 0.0f);
  // X one element into a buffer (2 bytes off 16-byte alignment), signals K + 1 apart.
  HostMatrix<half> padded(K + 1, B);
  padded.setZero();
  padded.bottomRows(K) = xs;
  const DeviceMatrix<half> xd = to_device(padded, Layout::ColMajor);
  const ConstView<half> x_off = xd.view().row_block(1, K);
  HostMatrix<half> nan_y(K, B);
  nan_y.setConstant(half(std::numeric_limits<float>::quiet_NaN()));
  DeviceMatrix<half> yd = to_device(nan_y, Layout::ColMajor);
  apply_reduced_precision(A, Op::NoTrans, x_off, yd.view(), 1.5f, 0.0f);
  const HostMatrix<float> got = yd.to_host().cast<float>();
  BOOST_TEST(got.allFinite());
  check_error_within(relative_error(got, expected), 2.0 * 4 * unit_roundoff_v<half>);
}

// Triples of 16 x 16 factors on batch-first 16-bit signals in one tensor-core pass
// (kron_fused_triple16.cu). First its launcher, against the dense 4096 x 4096 product of the
// three factors applied to every chunk of 4096 features, stored rotated (output J of chunk L
// in row J * chunks + L): 1 to 8 tiles of 8 chunks per signal (every cluster size: 1, 2, 4
// and 8 CTAs), transposed factors, alpha and beta (beta zero must not read Y: NaN there).
template <class Storage>
void check_triple16_launcher(Index tiles, Index batch, Op op, float alpha, float beta) {
  const Index K = tiles * detail::kKronTriple16TileFeatures, chunks = K / 4096;
  HostMatrix<float> dense = HostMatrix<float>::Ones(1, 1);
  std::vector<DeviceMatrix<float>> stored;
  std::vector<KronFactorRef<float>> refs;
  for (int f = 0; f < 3; ++f) {
    const HostMatrix<float> g = random_matrix<float>(16, 16);
    dense = kron_dense(dense, HostMatrix<float>(op_of(g, op)));
    stored.push_back(to_device(g, Layout::ColMajor));
  }
  for (const DeviceMatrix<float>& g : stored)
    refs.push_back(KronFactorRef<float>::column_major(g.view().data, 16, 16, op));
  const HostMatrix<Storage> xs = random_matrix<float>(K, batch).cast<Storage>();
  HostMatrix<Storage> y0s = random_matrix<float>(K, batch).cast<Storage>();
  if (beta == 0.0f) y0s.setConstant(Storage(std::numeric_limits<float>::quiet_NaN()));
  const HostMatrix<float> x = xs.template cast<float>(), y0 = y0s.template cast<float>();
  HostMatrix<float> expected(K, batch);
  for (Index b = 0; b < batch; ++b) {
    const Eigen::Map<const HostMatrix<float>> chunk_columns(x.col(b).data(), 4096, chunks);
    const HostMatrix<float> z = dense * chunk_columns;  // column L: chunk L's outputs
    using Rotated = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<Rotated>(expected.col(b).data(), 4096, chunks) = alpha * z;
    if (beta != 0.0f) expected.col(b) += beta * y0.col(b);
  }
  const DeviceMatrix<Storage> xd = to_device(xs, Layout::ColMajor);
  DeviceMatrix<Storage> yd = to_device(y0s, Layout::ColMajor);
  detail::kron_fused_triple16<Storage>(refs, xd.view(), yd.view(), alpha, beta, true,
                                       default_context());
  const HostMatrix<float> got = yd.to_host().template cast<float>();
  BOOST_TEST_CONTEXT(tiles << " tiles, batch " << batch << ", " << to_string(op) << ", beta "
                           << beta) {
    BOOST_TEST(got.allFinite());
    check_error_within(relative_error(got, expected), 2.0 * 4 * unit_roundoff_v<Storage>);
  }
}

BOOST_AUTO_TEST_CASE(triples_of_16_factors_in_16_bits) {
  check_triple16_launcher<half>(1, 3, Op::NoTrans, 1.0f, 0.0f);
  check_triple16_launcher<bfloat16>(2, 2, Op::Trans, 0.5f, -2.0f);
  check_triple16_launcher<half>(3, 2, Op::NoTrans, 1.5f, 0.0f);
  check_triple16_launcher<half>(4, 1, Op::Trans, 1.0f, 1.0f);
  check_triple16_launcher<bfloat16>(8, 3, Op::NoTrans, -1.0f, 0.0f);
  check_triple16_launcher<half>(24, 2, Op::NoTrans, 0.5f, 0.25f);

  // Auto takes a triple pass for 16^5; through the public path, both layouts, transposes,
  // alpha and beta (factors scaled by 1/4: the half products of the first run overflowed).
  const std::vector<detail::KronShape> five(5, {16, 16});
  const auto passes = detail::plan_auto_passes(five, 2, Layout::ColMajor, 2, false);
  BOOST_TEST(std::count_if(passes.begin(), passes.end(), [](const detail::KronPass& p) {
               return p.kind == detail::KronPassKind::Fused && p.hi - p.lo == 2;
             }) == 1);
  check_reduced_kron<half>(Shapes(5, {16, 16}), 2, 0.25f);
  check_reduced_kron<bfloat16>(Shapes(5, {16, 16}), 1, 0.25f);
  check_reduced_kron<half>({{3, 16}, {16, 16}, {16, 16}, {16, 16}, {16, 16}}, 3, 0.25f);
}

// Tuning on: the candidates are measured once (into scratch memory: Y keeps its beta
// term), the choice is cached, and the result is the same product.
// Devices whose blocks have less shared memory than an H100's, emulated on this one: the
// in-place kernel for equal square factors (135-192 KB for these runs) leaves its passes to
// the general fused kernel, the one-factor kernel stages fewer rows of P (about 100 KB in
// complex<double> at P = 24 on an H100), and 16-bit plans take GEMM passes where the pair
// kernel (192 KB) does not fit. Every result still matches the CPU.
BOOST_AUTO_TEST_CASE(plans_on_devices_with_less_shared_memory) {
  const std::vector<detail::KronShape> pairs = {{32, 32}, {32, 32}, {32, 32}};
  for (const std::size_t cap : kSmallerSharedMemory) {
    const detail::SharedMemoryCapForTesting capped(cap);
    BOOST_TEST_CONTEXT(cap << " bytes per block") {
      for (auto [P, n] : {std::pair<Index, int>{2, 14}, {32, 3}}) {
        std::vector<AnyOperator<float>> floats;
        std::vector<AnyOperator<double>> doubles;
        for (int i = 0; i < n; ++i) {
          floats.emplace_back(Dense<float>(random_matrix<float>(P, P)));
          doubles.emplace_back(Dense<double>(random_matrix<double>(P, P)));
        }
        for (KronAlgorithm algorithm : {KronAlgorithm::Auto, KronAlgorithm::Fused}) {
          KronAlgorithmGuard guard(algorithm);
          BOOST_TEST_CONTEXT(to_string(algorithm) << " P " << P << " n " << n) {
            check_gpu_against_cpu(Kron<float>(floats), 5);
            check_gpu_against_cpu(Kron<double>(doubles), 5);
          }
        }
      }
      check_shapes<std::complex<double>>({{3, 24}, {2, 2}}, {5});
      for (const detail::KronPass& pass :
           detail::plan_auto_passes(pairs, 3, Layout::ColMajor, 2, false, cap))
        BOOST_TEST((pass.kind == detail::KronPassKind::Gemm));
      check_reduced_kron<half>({{32, 32}, {32, 32}, {32, 32}}, 3);
    }
  }
}

BOOST_AUTO_TEST_CASE(tuned_choice_is_cached_and_correct) {
  const HostMatrix<float> f1 = random_matrix<float>(16, 16), f2 = random_matrix<float>(8, 8);
  const Kron<float> A = kron(Dense<float>(f1), Dense<float>(f2));
  const HostMatrix<float> dense = kron_dense(f1, f2);
  const HostMatrix<float> x = random_matrix<float>(128, 300), y0 = random_matrix<float>(128, 300);
  clear_tuned_choices();
  set_tuning_enabled(true);
  for (int round = 0; round < 2; ++round) {
    const DeviceMatrix<float> xd = to_device(x, Layout::ColMajor);
    DeviceMatrix<float> yd = to_device(y0, Layout::ColMajor);
    A.apply(Op::NoTrans, xd.view(), yd.view(), 2.0f, -1.0f);
    check_error_within(relative_error(yd.to_host(), HostMatrix<float>(2.0f * dense * x - y0)),
                       tolerance<float>(128));
    BOOST_TEST(tuned_keys("kron|").size() == 1u);  // measured once, reused the second time
  }
  // A caller's work space sized for Auto's plan: the tuned choice never asks for more.
  const DeviceMatrix<float> d1 = to_device(f1, Layout::ColMajor),
                            d2 = to_device(f2, Layout::ColMajor);
  const std::vector<KronFactorRef<float>> refs = {
      KronFactorRef<float>::column_major(d1.data(), 16, 16, Op::NoTrans),
      KronFactorRef<float>::column_major(d2.data(), 8, 8, Op::NoTrans)};
  for (Index batch : {Index(1), Index(77)}) {
    const std::size_t bytes = kron_matmul_workspace_bytes<float>(refs, batch, Layout::RowMajor);
    Buffer<char> workspace(Index(std::max<std::size_t>(bytes, 1)), MemorySpace::Device,
                           default_context());
    const HostMatrix<float> xb = random_matrix<float>(128, batch);
    const DeviceMatrix<float> xd = to_device(xb, Layout::RowMajor);
    DeviceMatrix<float> yd(128, batch, Layout::RowMajor);
    kron_matmul<float>(refs, xd.view(), yd.view(), 1.0f, 0.0f, default_context(), workspace.data(),
                       bytes);
    check_error_within(relative_error(yd.to_host(), HostMatrix<float>(dense * xb)),
                       tolerance<float>(128));
  }
  // 16-bit signals: Auto's plan and one GEMM per factor measured once, then reused.
  clear_tuned_choices();
  for (int round = 0; round < 2; ++round) {
    const HostMatrix<half> xs = random_matrix<float>(128, 300).cast<half>();
    const HostMatrix<half> y0s = random_matrix<float>(128, 300).cast<half>();
    const DeviceMatrix<half> xd = to_device(xs, Layout::ColMajor);
    DeviceMatrix<half> yd = to_device(y0s, Layout::ColMajor);
    apply_reduced_precision(A, Op::NoTrans, xd.view(), yd.view(), 2.0f, -1.0f);
    const HostMatrix<float> expected = 2.0f * dense * xs.cast<float>() - y0s.cast<float>();
    check_error_within(relative_error(HostMatrix<float>(yd.to_host().cast<float>()), expected),
                       2.0 * 4 * unit_roundoff_v<half>);
    BOOST_TEST(tuned_keys("kron|").size() == 1u);
  }
  set_tuning_enabled(false);
  clear_tuned_choices();
}

// The 16-bit engine called directly with each algorithm (every one but Gemm takes Auto's
// plan), each with a caller's work space of the size it asks for, used twice.
BOOST_AUTO_TEST_CASE(sixteen_bit_engine_with_every_algorithm_and_a_workspace) {
  const Shapes shapes = {{8, 8}, {4, 6}, {8, 8}};
  std::vector<DeviceMatrix<float>> values;
  std::vector<KronFactorRef<float>> refs;
  HostMatrix<float> dense = HostMatrix<float>::Ones(1, 1);
  for (auto [r, c] : shapes) {
    const HostMatrix<float> f = random_matrix<float>(r, c);
    dense = kron_dense(dense, f);
    values.push_back(to_device(f, Layout::ColMajor));
    refs.push_back(KronFactorRef<float>::column_major(values.back().data(), r, c, Op::NoTrans));
  }
  const Index B = 37;
  for (KronAlgorithm algorithm : kAlgorithms) {
    const std::size_t bytes =
        kron_matmul_workspace_bytes<half>(refs, B, Layout::ColMajor, algorithm);
    Buffer<char> workspace(Index(std::max<std::size_t>(bytes, 1)), MemorySpace::Device,
                           default_context());
    for (int round = 0; round < 2; ++round) {
      const HostMatrix<half> xs = random_matrix<float>(dense.cols(), B).cast<half>();
      const HostMatrix<half> y0 = random_matrix<float>(dense.rows(), B).cast<half>();
      const HostMatrix<float> expected = 0.5f * dense * xs.cast<float>() - 2.0f * y0.cast<float>();
      const DeviceMatrix<half> xd = to_device(xs, Layout::ColMajor);
      DeviceMatrix<half> yd = to_device(y0, Layout::ColMajor);
      kron_matmul<half>(refs, xd.view(), yd.view(), 0.5f, -2.0f, default_context(),
                        workspace.data(), bytes, algorithm);
      BOOST_TEST_CONTEXT(to_string(algorithm) << " round " << round) {
        check_error_within(relative_error(HostMatrix<float>(yd.to_host().cast<float>()), expected),
                           2.0 * 4 * unit_roundoff_v<half>);
      }
    }
  }
}

// A factor without columns on 16-bit device signals: an empty sum, Y = beta Y.
BOOST_AUTO_TEST_CASE(sixteen_bit_signals_of_an_operator_without_columns) {
  const Kron<float> A =
      kron(Dense<float>(random_matrix<float>(3, 2)), Dense<float>(HostMatrix<float>::Zero(2, 0)));
  const HostMatrix<half> y0 = random_matrix<float>(6, 4).cast<half>();
  const DeviceMatrix<half> xd(0, 4, Layout::ColMajor);
  DeviceMatrix<half> yd = to_device(y0, Layout::ColMajor);
  apply_reduced_precision(A, Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.5f);
  check_error_within(relative_error(HostMatrix<float>(yd.to_host().cast<float>()),
                                    HostMatrix<float>(0.5f * y0.cast<float>())),
                     unit_roundoff_v<half>);
}

#if STROP_HAVE_CUDA
// A bfloat16 GEMM pass past cuBLAS's 32-bit sizes (its 64-bit interface, strided_gemm.hpp):
// batch-last signals, a 2 x 2 factor after a 256 x 256 one (too large to merge with, so Auto
// runs the 2 x 2 alone; tests/unit/test_kron_matmul.cpp) on B = 2^23 signals, whose GEMM has
// ldc = (512 / 2) * 2^23 = 2^31 > INT_MAX. X, Y and the one intermediate take 8 GiB each
// (8 GiB more for tuning's scratch output, twice, with tuning on): skipped where the device has
// less free. X repeats a host pattern of an odd number C of values, so one signal's 512
// features are all different values. Whole signals spread over the batch are checked against
// the dense product on the CPU, and whole rows (every signal) for finite values: Y starts as
// NaN and beta is zero, so a value not written shows.
BOOST_AUTO_TEST_CASE(bfloat16_gemm_pass_past_32_bit_sizes) {
  using S = bfloat16;
  const Index K = 512, B = Index(1) << 23, C = (Index(1) << 24) - 3;
  const HostMatrix<float> g0 = random_matrix<float>(256, 256), g1 = random_matrix<float>(2, 2);
  const Kron<float> A = kron(Dense<float>(g0), Dense<float>(g1));
  const std::vector<KronFactorRef<float>> refs = {
      KronFactorRef<float>::column_major(g0.data(), 256, 256, Op::NoTrans),
      KronFactorRef<float>::column_major(g1.data(), 2, 2, Op::NoTrans)};
  const std::size_t matrix_bytes = sizeof(S) * std::size_t(K * B), gib = std::size_t(1) << 30;
  const std::size_t need = (tuning_enabled() ? 4 : 2) * matrix_bytes +
                           kron_matmul_workspace_bytes<S>(refs, B, Layout::RowMajor) + gib;
  Context& ctx = default_context();
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  // What the default pool kept from earlier tests goes back to the driver before counting.
  cudaMemPool_t pool = nullptr;
  auto trim = [&] {
    ctx.synchronize();
    if (cudaDeviceGetDefaultMemPool(&pool, ctx.device()) == cudaSuccess) cudaMemPoolTrimTo(pool, 0);
  };
  trim();
  std::size_t free_bytes = 0, total_bytes = 0;
  BOOST_REQUIRE(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
  if (free_bytes < need) {
    BOOST_TEST_MESSAGE("skipped: a 16-bit Kron pass past 32-bit sizes needs "
                       << need / gib << " GiB of free device memory, " << free_bytes / gib
                       << " GiB free");
    return;
  }
  {
    // pattern[i]: values in [-1, 1), exact in bfloat16 (24-bit fractions rounded once).
    std::vector<S> pattern(static_cast<std::size_t>(C));
    std::uint64_t state = 0x9e3779b97f4a7c15u;
    for (S& v : pattern) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      v = S(float(std::int64_t(state >> 40) - (std::int64_t(1) << 23)) / float(1 << 23));
    }
    // X[i] = pattern[i mod C] (row-major: X(k, b) = X[k*B + b]): the pattern uploaded once, then
    // the filled part doubled (`done` stays a multiple of C).
    DeviceMatrix<S> xd(K, B, Layout::RowMajor), yd(K, B, Layout::RowMajor);
    const Index total = K * B;
    detail::copy_bytes(xd.data(), MemorySpace::Device, pattern.data(), MemorySpace::Host,
                       sizeof(S) * std::size_t(C), ctx);
    for (Index done = C; done < total; done *= 2)
      detail::copy_bytes(xd.data() + done, MemorySpace::Device, xd.data(), MemorySpace::Device,
                         sizeof(S) * std::size_t(std::min(done, total - done)), ctx);
    BOOST_REQUIRE(cudaMemsetAsync(yd.data(), 0xFF, matrix_bytes, stream) == cudaSuccess);  // NaN

    apply_reduced_precision(A, Op::NoTrans, ConstView<S>(xd.view()), yd.view(), 1.5f, 0.0f);

    // Whole signals at both ends, around 2^22 and at random.
    const std::vector<Index> signals = {0,
                                        1,
                                        4097,
                                        (Index(1) << 22) - 1,
                                        Index(1) << 22,
                                        B - 2,
                                        B - 1,
                                        random_index(0, B - 1),
                                        random_index(0, B - 1)};
    const Index n = Index(signals.size());
    HostMatrix<float> x(K, n), got(K, n);
    std::vector<S> column(static_cast<std::size_t>(K));
    for (Index j = 0; j < n; ++j) {
      const Index b = signals[std::size_t(j)];
      for (Index k = 0; k < K; ++k)
        x(k, j) = float(pattern[std::size_t((k * B + b) % C)]);
      BOOST_REQUIRE(cudaMemcpy2DAsync(column.data(), sizeof(S), yd.data() + b, sizeof(S) * B,
                                      sizeof(S), std::size_t(K), cudaMemcpyDeviceToHost,
                                      stream) == cudaSuccess);
      BOOST_REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
      for (Index k = 0; k < K; ++k)
        got(k, j) = float(column[std::size_t(k)]);
    }
    const HostMatrix<float> expected = 1.5f * (kron_dense(g0, g1) * x);
    BOOST_TEST(got.allFinite());
    check_error_within(relative_error(got, expected), 2.0 * 3 * unit_roundoff_v<S>);

    // Whole rows, every signal: both outputs of the 2 x 2 factor (row 2i + j), at both ends and
    // in the middle.
    std::vector<S> row(static_cast<std::size_t>(B));
    for (Index r : {Index(0), Index(1), Index(254), Index(255), Index(256), Index(511)}) {
      detail::copy_bytes(row.data(), MemorySpace::Host, yd.data() + r * B, MemorySpace::Device,
                         sizeof(S) * std::size_t(B), ctx);
      const auto bad =
          std::count_if(row.begin(), row.end(), [](S v) { return !std::isfinite(float(v)); });
      BOOST_TEST(bad == 0, "row " << r << ": " << bad << " of " << B << " values not finite");
    }
  }
  trim();  // the 24 GiB back to the driver, not kept in the pool for the next tests
}
#endif

// The shuffle baseline's transposes launch at most 65535 signals at a time.
BOOST_AUTO_TEST_CASE(shuffle_with_more_signals_than_a_grid_extent) {
  const HostMatrix<float> f1 = random_matrix<float>(3, 2), f2 = random_matrix<float>(2, 3);
  const Kron<float> A = kron(Dense<float>(f1), Dense<float>(f2));
  const HostMatrix<float> dense = kron_dense(f1, f2);
  const Index B = 70001;
  const HostMatrix<float> x = random_matrix<float>(6, B);
  KronAlgorithmGuard guard(KronAlgorithm::Shuffle);
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    const DeviceMatrix<float> xd = to_device(x, layout);
    DeviceMatrix<float> yd(6, B, layout);
    A.apply(Op::NoTrans, xd.view(), yd.view());
    check_error_within(relative_error(yd.to_host(), HostMatrix<float>(dense * x)),
                       tolerance<float>(6));
  }
}

// KronSolver on device right-hand sides: the engine applies the factor inverses, from LU of
// general factors and from Cholesky of Hermitian positive definite ones.
BOOST_AUTO_TEST_CASE_TEMPLATE(solve_on_the_device, T, TwoTypes) {
  for (KronSolveMethod method : {KronSolveMethod::LU, KronSolveMethod::Cholesky}) {
    std::vector<AnyOperator<T>> factors;
    HostMatrix<T> dense = HostMatrix<T>::Ones(1, 1);
    for (Index n : {6, 8, 5}) {
      const HostMatrix<T> g = random_matrix<T>(n, n);
      HostMatrix<T> f = method == KronSolveMethod::LU ? g : HostMatrix<T>(g * g.adjoint());
      f.diagonal().array() += T(RealOf<T>(n));
      factors.emplace_back(Dense<T>(f));
      dense = kron_dense(dense, f);
    }
    const KronSolver<T> solver{Kron<T>(factors), method};
    const HostMatrix<T> b = random_matrix<T>(dense.rows(), 9);
    for (Op op : {Op::NoTrans, Op::Adjoint})
      for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
        const DeviceMatrix<T> bd = to_device(b, layout);
        DeviceMatrix<T> xd(dense.rows(), 9, layout);
        solver.solve(op, bd.view(), xd.view());
        const HostMatrix<T> x = xd.to_host();
        BOOST_TEST_CONTEXT((method == KronSolveMethod::LU ? "LU " : "Cholesky ")
                           << to_string(op) << " " << to_string(layout)) {
          check_error_within(relative_error(HostMatrix<T>(op_of(dense, op) * x), b),
                             tolerance<T>(dense.rows()));
        }
      }
  }
}

BOOST_AUTO_TEST_SUITE_END()
