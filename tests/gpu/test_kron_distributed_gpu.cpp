// DistributedKron on device parts: the local steps on each part's context, the exchange
// kernels (tiled for signal-contiguous work spaces, element-wise otherwise), against the dense
// Kronecker product. Parts share one GPU here (several contexts on device 0, or one context for
// all); the two-device case needs a second GPU.
#include <memory>
#include <tuple>
#include <vector>

#include "distributed_kron_check.hpp"
#include "gpu_reference.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

// `count` contexts on `devices` devices in turn.
struct PartContexts {
  std::vector<std::unique_ptr<Context>> owned;
  std::vector<Context*> pointers;
  PartContexts(int count, int devices) {
    for (int p = 0; p < count; ++p) {
      owned.push_back(std::make_unique<Context>(p % devices));
      pointers.push_back(owned.back().get());
    }
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_kron_distributed, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(parts_agree_with_the_dense_product, T, ScalarTypes) {
  const std::vector<std::pair<Shapes, std::vector<int>>> cases = {
      {{{4, 4}, {4, 4}, {4, 4}}, {2, 4, 8}},
      {{{2, 3}, {3, 2}, {4, 4}, {2, 2}}, {2, 4}},
      {{{3, 3}, {2, 2}, {2, 2}, {2, 2}, {3, 3}}, {3, 6}},
      {{{6, 4}, {4, 6}, {2, 2}}, {2, 4}},
  };
  for (const auto& [shapes, part_counts] : cases) {
    HostMatrix<T> dense;
    const Kron<T> A = random_kron<T>(shapes, &dense);
    for (int parts : part_counts) {
      PartContexts contexts(parts, 1);
      for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint})
        for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
          for (bool packed_parts : {true, false})
            check_parts(A, dense, parts, op, layout, packed_parts, 5, contexts.pointers);
    }
  }
}

// Larger parts and batches, against the host application (the products are too large for a
// dense reference): many exchange tiles per part, tiles cut at a part's first and last rows
// and heads that are no multiple of the tile (5 x 16 x 16 x 3 over 4 parts: 80 heads in the
// first exchange), and more tiles than the grid has blocks (8^5 over 4 parts, 300 signals).
BOOST_AUTO_TEST_CASE_TEMPLATE(many_tiles_and_signals, T, RealTypes) {
  const std::vector<std::tuple<Shapes, int, Index>> cases = {
      {{{8, 8}, {8, 8}, {8, 8}, {8, 8}, {8, 8}}, 4, 300},
      {{{5, 5}, {16, 16}, {16, 16}, {3, 3}}, 4, 37},
      {{{2, 2}, {64, 64}, {64, 64}}, 8, 37},
  };
  for (const auto& [shapes, parts, batch] : cases) {
    const HostMatrix<T> dense;  // none: too large
    const Kron<T> A = random_kron<T>(shapes);
    PartContexts contexts(parts, 1);
    for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
      check_parts(A, dense, parts, Op::NoTrans, layout, true, batch, contexts.pointers);
  }
}

// One context (one stream) for every part.
BOOST_AUTO_TEST_CASE(one_context_for_all_parts) {
  HostMatrix<float> dense;
  const Kron<float> A = random_kron<float>({{4, 4}, {2, 2}, {4, 4}, {2, 2}}, &dense);
  Context ctx;
  const std::vector<Context*> same(4, &ctx);
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
    check_parts(A, dense, 4, Op::Trans, layout, true, 9, same);
}

BOOST_AUTO_TEST_CASE(device_parts_need_a_context_each) {
  HostMatrix<float> dense;
  const Kron<float> A = random_kron<float>({{2, 2}, {2, 2}}, &dense);
  const DistributedKron<float> split(A, 2);
  DeviceMatrix<float> x0(2, 3), x1(2, 3), y0(2, 3), y1(2, 3);
  const std::vector<ConstView<float>> xv = {x0.view(), x1.view()};
  const std::vector<MatrixView<float>> yv = {y0.view(), y1.view()};
  Context ctx;
  const std::vector<Context*> one = {&ctx};
  check_error_mentions<ShapeError>([&] { split.apply(Op::NoTrans, xv, yv, one); },
                                   "one context each");
  // A host Y among device parts.
  HostMatrix<float> host_y(2, 3);
  const std::vector<Context*> two = {&ctx, &ctx};
  check_error_mentions<ShapeError>(
      [&] {
        split.apply(Op::NoTrans, xv, std::vector<MatrixView<float>>{y0.view(), view(host_y)}, two);
      },
      "must all be in host or all in device memory");
}

BOOST_TEST_DECORATOR(*utf::precondition(HasTwoDevices()))
BOOST_AUTO_TEST_CASE_TEMPLATE(parts_on_two_devices, T, ScalarTypes) {
  HostMatrix<T> dense;
  const Kron<T> A = random_kron<T>({{4, 4}, {4, 4}, {4, 4}, {2, 2}}, &dense);
  for (int parts : {2, 4}) {
    PartContexts contexts(parts, 2);
    for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
      check_parts(A, dense, parts, Op::NoTrans, layout, true, 7, contexts.pointers);
  }
}

BOOST_AUTO_TEST_SUITE_END()
