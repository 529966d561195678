// Kron-matmul on the GPU (operators/kron/): every algorithm, scalar type, layout pair and
// form, against the dense Kronecker product built with Eigen on the CPU.
#include "gpu_reference.hpp"

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

const KronAlgorithm kAlgorithms[] = {KronAlgorithm::Auto, KronAlgorithm::Fused,
                                     KronAlgorithm::Sliced, KronAlgorithm::Shuffle};

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
              BOOST_TEST(relative_error(yd.to_host(), expected) <= tolerance<T>(G.cols()));
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

// Factors behind transpose/adjoint nodes and identities reach the engine too.
BOOST_AUTO_TEST_CASE_TEMPLATE(transposed_and_identity_factors, T, ScalarTypes) {
  const HostMatrix<T> a = random_matrix<T>(4, 3), b = random_matrix<T>(5, 2);
  const Kron<T> A(std::vector<AnyOperator<T>>{AnyOperator<T>(Dense<T>(a).transpose()),
                                              AnyOperator<T>(Identity<T>(3)),
                                              AnyOperator<T>(Dense<T>(b).adjoint())});
  const HostMatrix<T> eye = HostMatrix<T>::Identity(3, 3);
  const HostMatrix<T> dense =
      kron_dense(kron_dense(HostMatrix<T>(a.transpose()), eye), HostMatrix<T>(b.adjoint()));
  BOOST_TEST(relative_error(A.to_dense(), dense) <= tolerance<T>(16));
  for (KronAlgorithm algorithm : kAlgorithms) {
    KronAlgorithmGuard guard(algorithm);
    check_gpu_against_cpu(A, 9);
  }
}

// beta = 0 must overwrite Y (NaNs in it do not survive), and a caller's work space is used.
BOOST_AUTO_TEST_CASE_TEMPLATE(workspace_and_beta_zero, T, ScalarTypes) {
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
        BOOST_TEST(relative_error(got, HostMatrix<T>(T(2) * dense * x)) <=
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
  BOOST_TEST(relative_error(yd.to_host(), expected) <= tolerance<double>(64));
}

BOOST_AUTO_TEST_SUITE_END()
