// The fast Walsh-Hadamard transform on the host. Each signal is copied into a buffer of n
// values (at most a few hundred KiB: it stays in cache), transformed in place by the radix-2
// stages of H_{2^k} on every block of 2^k values (the inner loops run over contiguous values
// and vectorise) and by H_m on the top digit, then scaled into Y (transform_each_signal). n log2(n)
// additions per signal, against the n sum(radices) multiply-adds of the generic chain path.
#include "operators/transforms/hadamard_host.hpp"

#include <vector>

#include "operators/transforms/each_signal_host.hpp"
#include "operators/transforms/hadamard_signs.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {
namespace {

// v <- H_{2^k} v on each block of 2^k values.
template <class T>
void power_of_two_stages(std::vector<T>& v, Index block) {
  const Index n = Index(v.size());
  for (Index h = 1; h < block; h *= 2)
    for (Index base = 0; base < n; base += 2 * h)
      for (Index i = base; i < base + h; ++i) {
        const T x = v[std::size_t(i)], y = v[std::size_t(i + h)];
        v[std::size_t(i)] = x + y;
        v[std::size_t(i + h)] = x - y;
      }
}

// v <- (H_m or H_m^T ⊗ I_stride) v, the digit of m on top.
template <class T>
void odd_digit(std::vector<T>& v, const HadamardRowMasks& masks, Index m, Index stride,
               bool transposed, std::vector<T>& row) {
  auto negative = [&](Index r, Index c) {
    return (transposed ? masks[std::size_t(c)] >> r : masks[std::size_t(r)] >> c) & 1;
  };
  for (Index f = 0; f < stride; ++f) {
    for (Index r = 0; r < m; ++r) {
      T sum{};
      for (Index c = 0; c < m; ++c) {
        const T x = v[std::size_t(f + c * stride)];
        sum += negative(r, c) ? -x : x;
      }
      row[std::size_t(r)] = sum;
    }
    for (Index r = 0; r < m; ++r)
      v[std::size_t(f + r * stride)] = row[std::size_t(r)];
  }
}

}  // namespace

template <class T>
void hadamard_host_apply(const HadamardForm& form, Op op, ConstView<T> X, MatrixView<T> Y, T alpha,
                         T beta) {
  const Index block = Index(1) << form.log2_pow2;
  // H is real: its adjoint is its transpose, and only H_m is not symmetric.
  const bool transposed = form.transposed != (op != Op::NoTrans);
  const T scaled_alpha = alpha * T(RealOf<T>(form.scale));
  const HadamardRowMasks masks = paley_row_masks(int(form.m));  // once, not per signal
  transform_each_signal(
      X, Y, scaled_alpha, beta, [&] { return std::vector<T>(static_cast<std::size_t>(form.m)); },
      [&](std::vector<T>& v, std::vector<T>& row) {
        power_of_two_stages(v, block);
        if (form.m > 1) odd_digit(v, masks, form.m, block, transposed, row);
      });
}

#define STROP_INSTANTIATE(T) \
  template void hadamard_host_apply(const HadamardForm&, Op, ConstView<T>, MatrixView<T>, T, T);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
