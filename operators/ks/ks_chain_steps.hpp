#pragma once
// Internal: a chain applied factor by factor through two temporaries (ks_chain.cpp, and its
// 16-bit version in ks_chain_reduced.cpp).
#include <algorithm>
#include <cstddef>

#include "strop/core/buffer.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

// Runs `count` steps: step s maps its input to an out_rows(s) x B matrix through
// step(s, in, out, alpha, beta); intermediates alternate between two temporaries in Y's
// layout and memory space, the last step writes Y = alpha (...) + beta Y.
template <class S, class A, class OutRows, class Step>
void apply_in_turn(std::size_t count, const OutRows& out_rows, ConstView<S> X, MatrixView<S> Y,
                   A alpha, A beta, Context& ctx, const Step& step) {
  Index largest = 0;
  for (std::size_t s = 0; s + 1 < count; ++s)
    largest = std::max(largest, out_rows(s));
  const Layout layout = layout_of(Y);
  TempMatrix<S> ping(largest, X.cols, layout, X.space, ctx);
  TempMatrix<S> pong(count > 2 ? largest : 0, X.cols, layout, X.space, ctx);
  S* buffers[2] = {ping.buffer.data(), pong.buffer.data()};
  ConstView<S> in = X;
  for (std::size_t s = 0; s + 1 < count; ++s) {
    const MatrixView<S> out = make_view(buffers[s % 2], out_rows(s), X.cols, layout, X.space);
    step(s, in, out, A(1), A(0));
    in = out;
  }
  step(count - 1, in, Y, alpha, beta);
}

}  // namespace strop::detail
