#include "operators/stl/stl_host.hpp"

#include "operators/blr/blr_support.hpp"

namespace strop::detail {
namespace {

// 1. Input tiles as columns (entry i + t f, column I + S F), encoded: column p of the result
// is colour p.
template <class T>
HostMatrix<T> encode(const StlSteps& s, ConstView<T> X) {
  const Index t = s.tile, S = s.signal_tiles, B = X.cols;
  HostMatrix<T> tiles(t * t, S * s.in_tiles);
  parallel_for(s.in_tiles, double(t * t * S) * double(s.in_tiles), [&](Index F) {
    for (Index I = 0; I < S; ++I)
      for (Index f = 0; f < t; ++f)
        for (Index i = 0; i < t; ++i) {
          const Index signal = I * t + i;
          tiles(i + t * f, I + S * F) = signal < B ? X(F * t + f, signal) : T(0);
        }
  });
  return tiles.transpose() * s.encoder->cast<T>().transpose();
}

// 2. Colour GEMMs: Ŷ^(p) = X̂^(p) op_w(Ŵ^(p)).
template <class T>
HostMatrix<T> colour_gemms(const StlSteps& s, const T* weights, const HostMatrix<T>& encoded) {
  const Index S = s.signal_tiles;
  HostMatrix<T> colours(S * s.out_tiles, s.rank);
  const Index w_rows = s.adjoint_roles() ? s.out_tiles : s.in_tiles;
  const Index w_cols = s.adjoint_roles() ? s.in_tiles : s.out_tiles;
  for (Index p = 0; p < s.rank; ++p) {
    Eigen::Map<const HostMatrix<T>> w(weights + p * w_rows * w_cols, w_rows, w_cols);
    Eigen::Map<const HostMatrix<T>> x(encoded.col(p).data(), S, s.in_tiles);
    Eigen::Map<HostMatrix<T>> y(colours.col(p).data(), S, s.out_tiles);
    // y^T = op_w(w)^T x^T, with op_w(w)^T = w^T, w, conj(w) for A, A^T, A^H.
    gemm(s.weight_op, w.transpose(), x.transpose(), y.transpose(), T(1), T(0));
  }
  return colours;
}

// 3. Decode and scatter (entry i + t g of column I + S G is Y[G t + g, I t + i]).
template <class T>
void decode(const StlSteps& s, const HostMatrix<T>& colours, MatrixView<T> Y, T alpha, T beta) {
  const Index t = s.tile, S = s.signal_tiles, B = Y.cols;
  const HostMatrix<T> out = s.decoder->cast<T>().transpose() * colours.transpose();
  parallel_for(s.out_tiles, double(t * t * S) * double(s.out_tiles), [&](Index G) {
    for (Index I = 0; I < S; ++I)
      for (Index g = 0; g < t; ++g)
        for (Index i = 0; i < t && I * t + i < B; ++i) {
          T& y = Y(G * t + g, I * t + i);
          const T v = alpha * out(i + t * g, I + S * G);
          y = beta == T(0) ? v : v + beta * y;
        }
  });
}

}  // namespace

template <class T>
void stl_run_host(const std::vector<StlHostStage<T>>& stages, ConstView<T> X, MatrixView<T> Y,
                  T alpha, T beta) {
  HostMatrix<T> colours = encode(stages.front().steps, X);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    colours = colour_gemms(stages[s].steps, stages[s].weights, colours);
    if (s + 1 < stages.size()) {
      const Eigen::MatrixXd mixing = stl_mixing(stages[s].steps, stages[s + 1].steps);
      colours = colours * mixing.cast<T>().transpose();
    }
  }
  decode(stages.back().steps, colours, Y, alpha, beta);
}

#define STROP_INSTANTIATE(T)                                                                      \
  template void stl_run_host<T>(const std::vector<StlHostStage<T>>&, ConstView<T>, MatrixView<T>, \
                                T, T);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
