// The Stockham FFT on the host. Stage s of radix R turns the signal, seen as n / R
// butterflies, into the next: butterfly j (with k = j mod Ns, Ns the product of the radices
// already done) reads the R values src[j + q n / R], multiplies value q by the twiddle
// w^{k q n / (Ns R)} (w = exp(sign 2 pi i / n)), takes their R-point DFT and writes output p
// to dst[(j - k) R + k + p Ns]. After the last stage dst holds F x in natural order: no
// digit reversal pass, unlike the chain. Each signal is copied into a cache-resident buffer
// (transform_each_signal). The GPU kernel (fft_kernel.cu) runs the same stages.
#include "operators/transforms/fft_host.hpp"

#include "operators/transforms/each_signal_host.hpp"

#include <algorithm>
#include <utility>

#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

template <class T>
T times_i(T v, int sign) {  // v * (sign i)
  return sign > 0 ? T(-v.imag(), v.real()) : T(v.imag(), -v.real());
}

// One stage: src -> dst. roots[e] = w^e.
template <class T>
void stockham_stage(const std::vector<T>& src, std::vector<T>& dst, Index n, Index radix, Index ns,
                    const std::vector<T>& roots, int sign, std::vector<T>& v) {
  const Index butterflies = n / radix, twiddle_step = n / (ns * radix);
  for (Index j = 0; j < butterflies; ++j) {
    const Index k = j % ns;
    for (Index q = 0; q < radix; ++q) {
      const T x = src[std::size_t(j + q * butterflies)];
      v[std::size_t(q)] = k == 0 || q == 0 ? x : x * roots[std::size_t(k * q * twiddle_step)];
    }
    T* out = dst.data() + (j - k) * radix + k;
    if (radix == 4) {
      const T a = v[0] + v[2], b = v[0] - v[2], c = v[1] + v[3], d = times_i(v[1] - v[3], sign);
      out[0] = a + c, out[ns] = b + d, out[2 * ns] = a - c, out[3 * ns] = b - d;
    } else if (radix == 2) {
      out[0] = v[0] + v[1], out[ns] = v[0] - v[1];
    } else {  // the odd part: a direct DFT
      for (Index p = 0; p < radix; ++p) {
        T sum = v[0];
        for (Index q = 1; q < radix; ++q)
          sum += v[std::size_t(q)] * roots[std::size_t((p * q % radix) * butterflies)];
        out[p * ns] = sum;
      }
    }
  }
}

}  // namespace

std::vector<Index> stockham_radices(Index n) {
  std::vector<Index> radices;
  Index odd = n;
  while (odd % 2 == 0)
    odd /= 2;
  if (odd > 1) radices.push_back(odd);
  Index rest = n / odd;
  for (; rest >= 4; rest /= 4)
    radices.push_back(4);
  if (rest == 2) radices.push_back(2);
  return radices;
}

template <class T>
void fft_host_apply(const FourierForm& form, int sign, ConstView<T> X, MatrixView<T> Y, T alpha,
                    T beta) {
  static_assert(is_complex_v<T>);
  const Index n = form.n;
  require<ShapeError>(X.rows == n && Y.rows == n, "dft: a transform of size ", n, " applied to ",
                      X.rows, " rows");
  // The table holds w^e for the form's sign; the other sign takes conjugates.
  std::vector<T> roots(static_cast<std::size_t>(n));
  for (Index e = 0; e < n; ++e) {
    const std::complex<double> r = (*form.roots)[std::size_t(e)];
    roots[std::size_t(e)] = T(RealOf<T>(r.real()), RealOf<T>(sign * form.sign * r.imag()));
  }
  const std::vector<Index> radices = stockham_radices(n);
  const T scaled_alpha = alpha * T(RealOf<T>(form.scale));
  struct Scratch {
    std::vector<T> other, butterfly;
  };
  transform_each_signal(
      X, Y, scaled_alpha, beta,
      [&] {
        Index largest_radix = 4;
        for (Index r : radices)
          largest_radix = std::max(largest_radix, r);
        return Scratch{std::vector<T>(static_cast<std::size_t>(n)),
                       std::vector<T>(static_cast<std::size_t>(largest_radix))};
      },
      [&](std::vector<T>& v, Scratch& scratch) {
        Index ns = 1;
        for (Index radix : radices) {
          stockham_stage(v, scratch.other, n, radix, ns, roots, sign, scratch.butterfly);
          std::swap(v, scratch.other);  // the thread's two buffers trade places
          ns *= radix;
        }
      });
}

template void fft_host_apply(const FourierForm&, int, ConstView<std::complex<float>>,
                             MatrixView<std::complex<float>>, std::complex<float>,
                             std::complex<float>);
template void fft_host_apply(const FourierForm&, int, ConstView<std::complex<double>>,
                             MatrixView<std::complex<double>>, std::complex<double>,
                             std::complex<double>);

}  // namespace strop::detail
