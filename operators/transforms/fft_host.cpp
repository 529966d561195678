// The Stockham FFT on the host. Stage s of radix R turns the signal, seen as n / R
// butterflies, into the next: butterfly j (with k = j mod Ns, Ns the product of the radices
// already done) reads the R values src[j + q n / R], multiplies value q by the twiddle
// w^{k q n / (Ns R)} (w = exp(sign 2 pi i / n)), takes their R-point DFT and writes output p
// to dst[(j - k) R + k + p Ns]. After the last stage dst holds F x in natural order: no
// digit reversal pass, unlike the chain. Each signal is copied into a cache-resident buffer
// (transform_each_signal) and split into real and imaginary arrays; each stage's twiddles
// are laid out [q][k], so that the loops over k read, write and multiply contiguous reals
// (vectorized by the compiler). The GPU kernel (fft_kernel.cu) runs the same stages.
#include "operators/transforms/fft_host.hpp"

#include "operators/transforms/each_signal_host.hpp"

#include <algorithm>
#include <utility>

#include "strop/core/error.hpp"

// The stages' inner loops write one array while reading others: no dependence between
// iterations, which GCC cannot prove through the split arrays (it then leaves them scalar).
#if defined(__GNUC__) && !defined(__clang__)
#define STROP_NO_LOOP_DEPENDENCE _Pragma("GCC ivdep")
#else
#define STROP_NO_LOOP_DEPENDENCE
#endif

// The stages are also compiled for AVX2 and picked at run time (the library itself targets
// baseline x86-64).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define STROP_WIDE_VECTORS __attribute__((target_clones("avx2", "default")))
#else
#define STROP_WIDE_VECTORS
#endif

namespace strop::detail {
namespace {

// A signal in split form (real parts, imaginary parts): the stages' inner loops then run
// over contiguous arrays of reals, which the compiler vectorizes.
template <class R>
struct SplitSignal {
  std::vector<R> re, im;
};

// Stage s of a transform: its radix, ns (the product of the radices before it) and where
// its twiddles start in the twiddle table: w^{k q n / (ns R)} at offset + (q - 1) ns + k,
// q = 1 ... R - 1, k < ns.
struct StockhamStage {
  Index radix, ns, offset;
};

// Radix 4: butterfly j = b ns + k reads src[j + q n / 4], writes dst[b 4 ns + k + p ns].
// The inner loop runs over k: contiguous reads, writes and twiddles.
template <class R>
STROP_WIDE_VECTORS void radix4_stage(const SplitSignal<R>& src, SplitSignal<R>& dst, Index n,
                                     Index ns, const R* __restrict twr, const R* __restrict twi,
                                     int sign) {
  const Index quarter = n / 4;
  const R* __restrict sr = src.re.data();
  const R* __restrict si = src.im.data();
  R* __restrict dr = dst.re.data();
  R* __restrict di = dst.im.data();
  const R turn = sign > 0 ? R(1) : R(-1);  // multiplication by sign * i
  if (ns == 1) {
    // The first stage: no twiddles, and a loop over b instead (reads contiguous in b, writes
    // four interleaved runs).
    STROP_NO_LOOP_DEPENDENCE
    for (Index b = 0; b < quarter; ++b) {
      const R ar = sr[b] + sr[b + 2 * quarter], ai = si[b] + si[b + 2 * quarter];
      const R br = sr[b] - sr[b + 2 * quarter], bi = si[b] - si[b + 2 * quarter];
      const R cr = sr[b + quarter] + sr[b + 3 * quarter];
      const R ci = si[b + quarter] + si[b + 3 * quarter];
      const R dr_ = -turn * (si[b + quarter] - si[b + 3 * quarter]);
      const R di_ = turn * (sr[b + quarter] - sr[b + 3 * quarter]);
      dr[4 * b] = ar + cr, di[4 * b] = ai + ci;
      dr[4 * b + 1] = br + dr_, di[4 * b + 1] = bi + di_;
      dr[4 * b + 2] = ar - cr, di[4 * b + 2] = ai - ci;
      dr[4 * b + 3] = br - dr_, di[4 * b + 3] = bi - di_;
    }
    return;
  }
  for (Index b = 0; b < quarter / ns; ++b) {
    const Index in = b * ns, out = b * 4 * ns;
    STROP_NO_LOOP_DEPENDENCE
    for (Index k = 0; k < ns; ++k) {
      const Index j = in + k;
      const R x0r = sr[j], x0i = si[j];
      R x1r = sr[j + quarter], x1i = si[j + quarter];
      R x2r = sr[j + 2 * quarter], x2i = si[j + 2 * quarter];
      R x3r = sr[j + 3 * quarter], x3i = si[j + 3 * quarter];
      // Twiddles (a branch-free loop vectorizes).
      const R t1r = twr[k], t1i = twi[k], t2r = twr[ns + k], t2i = twi[ns + k];
      const R t3r = twr[2 * ns + k], t3i = twi[2 * ns + k];
      const R y1r = x1r * t1r - x1i * t1i, y1i = x1r * t1i + x1i * t1r;
      const R y2r = x2r * t2r - x2i * t2i, y2i = x2r * t2i + x2i * t2r;
      const R y3r = x3r * t3r - x3i * t3i, y3i = x3r * t3i + x3i * t3r;
      x1r = y1r, x1i = y1i, x2r = y2r, x2i = y2i, x3r = y3r, x3i = y3i;
      const R ar = x0r + x2r, ai = x0i + x2i, br = x0r - x2r, bi = x0i - x2i;
      const R cr = x1r + x3r, ci = x1i + x3i;
      const R dr_ = -turn * (x1i - x3i), di_ = turn * (x1r - x3r);  // (x1 - x3) * sign i
      const Index o = out + k;
      dr[o] = ar + cr, di[o] = ai + ci;
      dr[o + ns] = br + dr_, di[o + ns] = bi + di_;
      dr[o + 2 * ns] = ar - cr, di[o + 2 * ns] = ai - ci;
      dr[o + 3 * ns] = br - dr_, di[o + 3 * ns] = bi - di_;
    }
  }
}

template <class R>
STROP_WIDE_VECTORS void radix2_stage(const SplitSignal<R>& src, SplitSignal<R>& dst, Index n,
                                     Index ns, const R* __restrict twr, const R* __restrict twi) {
  const Index half = n / 2;
  const R* __restrict sr = src.re.data();
  const R* __restrict si = src.im.data();
  R* __restrict dr = dst.re.data();
  R* __restrict di = dst.im.data();
  for (Index b = 0; b < half / ns; ++b) {
    const Index in = b * ns, out = b * 2 * ns;
    STROP_NO_LOOP_DEPENDENCE
    for (Index k = 0; k < ns; ++k) {
      const Index j = in + k;
      const R ur = sr[j + half], ui = si[j + half];
      const R x1r = ur * twr[k] - ui * twi[k], x1i = ur * twi[k] + ui * twr[k];
      dr[out + k] = sr[j] + x1r, di[out + k] = si[j] + x1i;
      dr[out + k + ns] = sr[j] - x1r, di[out + k + ns] = si[j] - x1i;
    }
  }
}

// Any radix (the odd part): twiddles, then a direct radix-point DFT with roots[e] = w^e.
template <class R>
void direct_stage(const SplitSignal<R>& src, SplitSignal<R>& dst, Index n, Index radix, Index ns,
                  const R* twr, const R* twi, const std::vector<std::complex<R>>& roots,
                  std::vector<std::complex<R>>& v) {
  const Index butterflies = n / radix;
  for (Index j = 0; j < butterflies; ++j) {
    const Index k = j % ns;
    for (Index q = 0; q < radix; ++q) {
      const std::complex<R> x(src.re[std::size_t(j + q * butterflies)],
                              src.im[std::size_t(j + q * butterflies)]);
      v[std::size_t(q)] =
          q == 0 || ns == 1 ? x : x * std::complex<R>(twr[(q - 1) * ns + k], twi[(q - 1) * ns + k]);
    }
    const Index out = (j - k) * radix + k;
    for (Index p = 0; p < radix; ++p) {
      std::complex<R> sum = v[0];
      for (Index q = 1; q < radix; ++q)
        sum += v[std::size_t(q)] * roots[std::size_t((p * q % radix) * butterflies)];
      dst.re[std::size_t(out + p * ns)] = sum.real();
      dst.im[std::size_t(out + p * ns)] = sum.imag();
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
  using R = RealOf<T>;
  const Index n = form.n;
  require<ShapeError>(X.rows == n && Y.rows == n, "dft: a transform of size ", n, " applied to ",
                      X.rows, " rows");
  // The table holds w^e for the form's sign; the other sign takes conjugates.
  std::vector<T> roots(static_cast<std::size_t>(n));
  for (Index e = 0; e < n; ++e) {
    const std::complex<double> r = (*form.roots)[std::size_t(e)];
    roots[std::size_t(e)] = T(R(r.real()), R(sign * form.sign * r.imag()));
  }
  // The stages and their twiddles, laid out [q][k] per stage (contiguous in k).
  std::vector<StockhamStage> stages;
  std::vector<R> twr, twi;
  Index ns = 1, largest_radix = 1;
  for (Index radix : stockham_radices(n)) {
    stages.push_back({radix, ns, Index(twr.size())});
    const Index step = n / (ns * radix);
    for (Index q = 1; q < radix; ++q)
      for (Index k = 0; k < ns; ++k) {
        const T w = roots[std::size_t(k * q * step)];
        twr.push_back(w.real());
        twi.push_back(w.imag());
      }
    ns *= radix;
    largest_radix = std::max(largest_radix, radix);
  }
  const T scaled_alpha = alpha * T(R(form.scale));
  struct Scratch {
    SplitSignal<R> signal[2];
    std::vector<T> butterfly;
  };
  transform_each_signal(
      X, Y, scaled_alpha, beta,
      [&] {
        Scratch s;
        for (auto& half : s.signal) {
          half.re.resize(std::size_t(n));
          half.im.resize(std::size_t(n));
        }
        s.butterfly.resize(std::size_t(largest_radix));
        return s;
      },
      [&](std::vector<T>& v, Scratch& scratch) {
        SplitSignal<R>* cur = &scratch.signal[0];
        SplitSignal<R>* next = &scratch.signal[1];
        for (Index i = 0; i < n; ++i) {
          cur->re[std::size_t(i)] = v[std::size_t(i)].real();
          cur->im[std::size_t(i)] = v[std::size_t(i)].imag();
        }
        for (const StockhamStage& st : stages) {
          const R* wr = twr.data() + st.offset;
          const R* wi = twi.data() + st.offset;
          if (st.radix == 4) {
            radix4_stage(*cur, *next, n, st.ns, wr, wi, sign);
          } else if (st.radix == 2) {
            radix2_stage(*cur, *next, n, st.ns, wr, wi);
          } else {
            direct_stage(*cur, *next, n, st.radix, st.ns, wr, wi, roots, scratch.butterfly);
          }
          std::swap(cur, next);
        }
        for (Index i = 0; i < n; ++i)
          v[std::size_t(i)] = T(cur->re[std::size_t(i)], cur->im[std::size_t(i)]);
      });
}

template void fft_host_apply(const FourierForm&, int, ConstView<std::complex<float>>,
                             MatrixView<std::complex<float>>, std::complex<float>,
                             std::complex<float>);
template void fft_host_apply(const FourierForm&, int, ConstView<std::complex<double>>,
                             MatrixView<std::complex<double>>, std::complex<double>,
                             std::complex<double>);

}  // namespace strop::detail
