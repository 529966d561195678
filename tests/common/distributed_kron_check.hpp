#pragma once
// The check of a DistributedKron application against the dense Kronecker product, on host
// parts (no contexts) or on device parts (one context per part), shared by the unit and GPU
// tests.
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "reference.hpp"
#include "strop/operators/kron_distributed.hpp"

namespace strop::testing {

using Shapes = std::vector<std::pair<Index, Index>>;  // (rows, cols) of each factor

// A product of random dense factors; `dense`, when given, receives it formed densely.
template <class T>
Kron<T> random_kron(const Shapes& shapes, HostMatrix<T>* dense = nullptr) {
  std::vector<AnyOperator<T>> factors;
  if (dense != nullptr) *dense = HostMatrix<T>::Ones(1, 1);
  for (auto [r, c] : shapes) {
    const HostMatrix<T> f = random_matrix<T>(r, c);
    factors.emplace_back(Dense<T>(f));
    if (dense != nullptr) *dense = kron_dense(*dense, f);
  }
  return Kron<T>(factors);
}

// Rows [first, first + rows) of `m`, stored in `layout` on the host or, with a context, on its
// device.
template <class T>
class StoredRows {
 public:
  StoredRows(const HostMatrix<T>& m, Index first, Index rows, Layout layout, Context* ctx)
      : rows_(rows), cols_(m.cols()) {
    const HostMatrix<T> block = m.middleRows(first, rows);
    if (ctx != nullptr) {
      device_ = to_device(block, layout, *ctx);
      view_ = device_.view();
    } else {
      host_.resize(static_cast<std::size_t>(rows * cols_));
      view_ = make_view(host_.data(), rows, cols_, layout);
      for (Index j = 0; j < cols_; ++j)
        for (Index i = 0; i < rows; ++i)
          view_(i, j) = block(i, j);
    }
  }
  MatrixView<T> view() const { return view_; }
  HostMatrix<T> to_host() const {
    if (view_.space == MemorySpace::Device) return device_.to_host();
    HostMatrix<T> m(rows_, cols_);
    for (Index j = 0; j < cols_; ++j)
      for (Index i = 0; i < rows_; ++i)
        m(i, j) = view_(i, j);
    return m;
  }

 private:
  Index rows_, cols_;
  std::vector<T> host_;
  DeviceMatrix<T> device_;
  MatrixView<T> view_;
};

// Applies the product split into `parts` to row blocks of one matrix per side (strided part
// views: the local steps take the identity-factor path) or to packed copies of each block
// (the chunked path), in `layout`, and compares every part with the dense product (or, where
// `dense` is empty, too large to form, with the host application of A). Host parts
// without contexts; otherwise part p on contexts[p] (row blocks: all on contexts[0]'s device).
// Y is stored in `y_layout` where given, else in `layout`.
template <class T>
void check_parts(const Kron<T>& A, const HostMatrix<T>& dense, int parts, Op op, Layout layout,
                 bool packed_parts, Index batch, std::span<Context* const> contexts,
                 std::optional<Layout> y_layout = std::nullopt) {
  const Layout layout_y = y_layout.value_or(layout);
  const DistributedKron<T> split(A, parts);
  const Index rows = op == Op::NoTrans ? A.rows() : A.cols(), cols = A.rows() + A.cols() - rows;
  // Row blocks with alpha = 1, beta = 0 and Y all NaN (the last exchange writes Y directly and
  // must not read it), packed parts with random alpha and beta (the last exchange goes to a
  // work space, then Y = that + beta Y).
  const bool plain = !packed_parts;
  const T alpha = plain ? T(1) : random_scalar<T>(), beta = plain ? T(0) : random_scalar<T>();
  const HostMatrix<T> x = random_matrix<T>(cols, batch);
  HostMatrix<T> y0 = random_matrix<T>(rows, batch);
  if (plain) y0.setConstant(T(std::numeric_limits<RealOf<T>>::quiet_NaN()));
  HostMatrix<T> expected = plain ? HostMatrix<T>::Zero(rows, batch) : y0;
  if (dense.size() > 0) {
    expected = plain ? HostMatrix<T>(op_of(dense, op) * x)
                     : HostMatrix<T>(alpha * (op_of(dense, op) * x) + beta * y0);
  } else {
    A.apply(op, view(x), view(expected), alpha, beta);
  }
  const Index in = cols / parts, out = rows / parts;
  const auto ctx = [&](int p) { return contexts.empty() ? nullptr : contexts[p]; };

  std::vector<StoredRows<T>> xs, ys;
  std::vector<ConstView<T>> xv;
  std::vector<MatrixView<T>> yv;
  if (packed_parts) {
    for (int p = 0; p < parts; ++p) {
      xs.emplace_back(x, p * in, in, layout, ctx(p));
      ys.emplace_back(y0, p * out, out, layout_y, ctx(p));
    }
    for (int p = 0; p < parts; ++p) {
      xv.push_back(xs[p].view());
      yv.push_back(ys[p].view());
    }
  } else {
    xs.emplace_back(x, 0, cols, layout, ctx(0));
    ys.emplace_back(y0, 0, rows, layout_y, ctx(0));
    for (int p = 0; p < parts; ++p) {
      xv.push_back(xs[0].view().row_block(p * in, in));
      yv.push_back(ys[0].view().row_block(p * out, out));
    }
  }
  split.apply(op, xv, yv, contexts, alpha, beta);
  HostMatrix<T> got(rows, batch);
  if (packed_parts) {
    for (int p = 0; p < parts; ++p)
      got.middleRows(p * out, out) = ys[p].to_host();
  } else {
    got = ys[0].to_host();
  }
  BOOST_TEST_CONTEXT(parts << " parts, " << to_string(op) << ", X " << to_string(layout) << ", Y "
                           << to_string(layout_y)
                           << (packed_parts ? ", packed parts" : ", row blocks") << ", "
                           << split.steps(op).size() << " steps, B " << batch) {
    BOOST_TEST(relative_error(got, expected) <= tolerance<T>(cols));
  }
}

}  // namespace strop::testing
