#pragma once
// Fast transforms as Kronecker-sparse chains (NOTES.md, "DFT and Hadamard as chains"):
// the Walsh-Hadamard transform, the DFT and the DCT-II, each an ordinary operator (a KSChain,
// times a Permutation where the algorithm reorders its input) that composes with everything
// else in an expression and applies on any batch, layout and op like any KSChain.
//
//   hadamard(n), inverse_hadamard(n)  KSChain                n = 2^k, or m 2^k, m in {12, 20, 28}
//   dft(n), inverse_dft(n)            KSChain * Permutation  complex T; n = m 2^k, odd m <= 63
//   dct(n)                            KSChain * Permutation  DCT-II; n as for dft
//   inverse_dct(n)                    Permutation * KSChain  DCT-III scaled to invert dct(n)
//
// Sizes without such a chain throw PatternError naming n (as butterfly_patterns does), and so
// do sizes whose chain overflows a 64-bit index and invalid options (negative factors, an
// unknown Normalization value); a chain whose tables host memory cannot hold throws
// ShapeError naming the values and bytes.
//
// Structure. The chain is the mixed-radix Cooley-Tukey factorization: with radices
// r_1 ... r_L (n = r_1 ... r_L, r_1 most significant), factor l has pattern
// (r_1...r_{l-1}, r_l, r_l, r_{l+1}...r_L): a dense r_l x r_l block (a small DFT with its
// twiddles, or a small Hadamard matrix) repeated over the other digits. The permutation is
// the mixed-radix digit reversal (the bit reversal when every radix is 2). The odd part m of
// n (or H_m for Hadamard) is radix r_1; the power-of-two part is split into
// `TransformOptions::factors` radices 2^g of near-equal g: each such factor is the product of
// g consecutive radix-2 KS factors (fuse(p, q) patterns; for Hadamard value for value, for the
// DFT up to the order of the 2^g block's rows and columns, which the digit reversal absorbs).
// Fewer factors mean fewer passes over the signals but larger blocks; the GPU side picks by
// measurement, so it is a parameter.
//
// The DFT as one FFT: the product dft() returns carries, on its chain, a FourierForm naming
// the transform and its own digit reversal; applied as a whole (directly or inside any
// expression) it runs a Stockham FFT instead of the permutation and the factors: on the host
// for every size and scalar type, on the GPU for complex<float> and n = 2^k, 16 <= n <= 32768
// (either layout; fastest with contiguous signals). The chain alone, chains derived from it and
// products loaded from a file apply their factors (same values, tested against each other).
//
// Real signals and the DFT: dft<T> needs a complex T. Promote real signals to complex
// (imaginary part zero), e.g. X.cast<std::complex<float>>(); `strop transform --kind dft`
// does this. There is no half-spectrum (R2C) operator: the output is the full spectrum.
//
// The DCT is real: its chain is the complex DFT chain of Makhoul's algorithm (even samples
// forward, odd samples backward, DFT, twiddle, real part) written over the reals: every
// complex factor (a, r, r, d) becomes a real factor (a, 2r, 2r, d), the real/imaginary index
// moving one digit per factor so that each stays Kronecker-sparse; the real part and the real
// input are row/column selections of the first and last factors. Same flops as the complex
// DFT chain, in real arithmetic. For complex T it applies to the real and imaginary parts.
#include <limits>
#include <string_view>

#include "strop/expr/algebra.hpp"
#include "strop/operators/ks_chain.hpp"
#include "strop/operators/permutation.hpp"

namespace strop {

enum class TransformKind { Hadamard, Dft, Dct };

// "hadamard", "dft", "dct".
std::string_view to_string(TransformKind kind);
// The inverse of to_string; PatternError naming the text and the known kinds otherwise.
TransformKind parse_transform_kind(std::string_view name);

// How a forward/inverse pair is scaled. With n the size:
//   Backward     forward unscaled, inverse exact (DFT: 1/n, numpy's default; Hadamard: H^T/n;
//                DCT-II: y_k = 2 sum_j x_j cos(pi k (2j+1) / 2n), as FFTW's REDFT10 and
//                scipy's dct, and its exact inverse).
//   Orthonormal  both unitary: DFT and Hadamard scaled by 1/sqrt(n), DCT-II scaled per row
//                (sqrt(1/n) for k = 0, sqrt(2/n) otherwise; scipy's norm="ortho").
//   None         neither scaled: inverse(forward(x)) = n x for the DFT and Hadamard
//                (inverse DFT = conjugate DFT, inverse Hadamard = H^T) and 2n x for the DCT
//                (inverse = FFTW's REDFT01: y_j = X_0 + 2 sum_{k>0} X_k cos(...)).
enum class Normalization { Backward, Orthonormal, None };

std::string_view to_string(Normalization normalization);   // "backward", "ortho", "none"
Normalization parse_normalization(std::string_view name);  // PatternError otherwise

// The full radix-2 chain: one KS factor per radix-2 stage.
inline constexpr int kFullRadix2Chain = std::numeric_limits<int>::max();
// The largest odd part m of n = m 2^k that dft/dct accept: its factor is a dense m x m block.
inline constexpr Index kMaxOddRadix = 63;

struct TransformOptions {
  Normalization normalization = Normalization::Backward;
  // Number of KS factors for the power-of-two part of n: its log2(n) radix-2 stages are
  // grouped into this many runs of near-equal length (larger runs first), each one factor.
  // 0 takes default_transform_factors(n); values >= the number of stages (such as
  // kFullRadix2Chain) give the full radix-2 chain. The factor of the odd part (or of H_m)
  // always stands alone, in front.
  int factors = 0;
};

// The default of TransformOptions::factors: radix-4 stages (log2 of the power-of-two part
// over 2, rounded up, at least 1). On the CPU path (2 cores, one thread, B = 256 batch-last,
// n = 1024 ... 16384) it was within the noise of the best of {2, 3, 4, 5, 7, full chain}
// factors, and 2 or 3 factors (blocks of 64-128) were 2-4x slower; the GPU choice is its own.
int default_transform_factors(Index n);

// Whether n has a chain (without throwing).
bool hadamard_size_supported(Index n);
bool fourier_size_supported(Index n);  // dft and dct

// ---- Walsh-Hadamard ----
// H_n in Sylvester order for n = 2^k ((-1)^popcount(i & j)); H_m ⊗ H_{2^k} for n = m 2^k,
// m in {12, 20, 28}, with H_12 and H_20 from Paley's first construction (q = 11, 19) and
// H_28 from Paley's second (q = 13). inverse_hadamard(n) inverts hadamard(n) under the same
// options (its blocks are transposed: H_m is not symmetric).
template <class T>
KSChain<T> hadamard(Index n, const TransformOptions& options = {});
template <class T>
KSChain<T> inverse_hadamard(Index n, const TransformOptions& options = {});
// The m x m Hadamard matrix used for the non-power-of-two part (m = 1, 2^k, 12, 20, 28).
template <class T>
HostMatrix<T> small_hadamard_matrix(Index m);

// ---- DFT: X_k = sum_j x_j exp(-2 pi i j k / n) ----
template <class T>
requires is_complex_v<T> Product<KSChain<T>, Permutation<T>> dft(Index n,
                                                                 const TransformOptions& = {});
// sum_k X_k exp(+2 pi i j k / n), scaled by the normalization.
template <class T>
requires is_complex_v<T> Product<KSChain<T>, Permutation<T>> inverse_dft(
    Index n, const TransformOptions& = {});

// ---- DCT-II and its inverse (a scaled DCT-III) ----
template <class T>
Product<KSChain<T>, Permutation<T>> dct(Index n, const TransformOptions& options = {});
template <class T>
Product<Permutation<T>, KSChain<T>> inverse_dct(Index n, const TransformOptions& options = {});

// Any of the above chosen at run time (the CLI's entry). The DFT with a real T is a
// PatternError (it has no real chain; promote the signals to complex).
template <class T>
AnyOperator<T> make_transform(TransformKind kind, Index n, bool inverse,
                              const TransformOptions& options = {});

}  // namespace strop
