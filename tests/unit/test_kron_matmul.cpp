// The host side of the Kron-matmul engine: work-space sizes of each plan, input
// validation, and the clear errors without a device (the kernels are in tests/gpu).
#include "reference.hpp"

using namespace strop;

namespace {
std::vector<KronFactorRef<float>> square_factors(Index p, int n) {
  // Fake non-null device pointers: the planner never dereferences them.
  static const float dummy = 0;
  return std::vector<KronFactorRef<float>>(
      n, KronFactorRef<float>::column_major(&dummy, p, p, Op::NoTrans));
}
}  // namespace

BOOST_AUTO_TEST_SUITE(kron_matmul_host)

BOOST_AUTO_TEST_CASE(workspace_follows_the_plan) {
  const auto f = square_factors(8, 6);  // FastKron's 8^6
  const Index K = 262144, B = 1024;
  const std::size_t one = sizeof(float) * std::size_t(K * B);
  // Batch-first Auto fuses 8^3 chunks: two passes, one intermediate buffer.
  const std::size_t fused = kron_matmul_workspace_bytes<float>(f, B, Layout::ColMajor);
  BOOST_TEST(fused >= one);
  BOOST_TEST(fused < 2 * one);
  // One factor per launch: two ping-pong buffers.
  const std::size_t sliced =
      kron_matmul_workspace_bytes<float>(f, B, Layout::ColMajor, KronAlgorithm::Sliced);
  BOOST_TEST(sliced >= 2 * one);
  BOOST_TEST(sliced < 3 * one);
  // Batch-last data is not fused by Auto.
  BOOST_TEST(kron_matmul_workspace_bytes<float>(f, B, Layout::RowMajor) == sliced);
  // Shuffle: ping, pong and the transpose temporary.
  BOOST_TEST(kron_matmul_workspace_bytes<float>(f, B, Layout::ColMajor, KronAlgorithm::Shuffle) >=
             3 * one);
  // A single factor writes Y directly.
  BOOST_TEST(kron_matmul_workspace_bytes<float>(square_factors(8, 1), B, Layout::ColMajor) <
             std::size_t(1024));
}

BOOST_AUTO_TEST_CASE(bad_factors_and_host_views_are_rejected) {
  std::vector<KronFactorRef<float>> none;
  BOOST_CHECK_THROW(kron_matmul_workspace_bytes<float>(none, 4, Layout::ColMajor), ShapeError);
  std::vector<KronFactorRef<float>> rect_identity = {{nullptr, 2, 3, 0, 0, false}};
  BOOST_CHECK_THROW(kron_matmul_workspace_bytes<float>(rect_identity, 4, Layout::ColMajor),
                    ShapeError);
  const auto f = square_factors(2, 2);
  HostMatrix<float> x = HostMatrix<float>::Random(4, 3), y(4, 3), bad(5, 3);
  BOOST_CHECK_THROW(kron_matmul<float>(f, view(bad), view(y), 1.0f, 0.0f, default_context()),
                    ShapeError);
  BOOST_CHECK_THROW(kron_matmul<float>(f, view(x), view(y), 1.0f, 0.0f, default_context()),
                    DeviceError);
  BOOST_TEST(to_string(KronAlgorithm::Shuffle) == "shuffle");
  {
    KronAlgorithmGuard guard(KronAlgorithm::Sliced);
    BOOST_TEST((kron_algorithm() == KronAlgorithm::Sliced));
  }
  BOOST_TEST((kron_algorithm() == KronAlgorithm::Auto));
}

BOOST_AUTO_TEST_SUITE_END()
