// KSAlgorithm::SmallBatch: a KS factor applied to a few signals (decoding one token, a GEMV),
// bound by reading the weights once. The weights are read in their grouped (a, d, b, c)
// order, one row-major b x c block per group, always along rows so that a warp's loads are
// contiguous:
//   A      one warp per output row: lanes stride over the row's c weights and the matching
//          inputs, then a warp reduction sums the lanes (lane s writes signal s);
//   A^T/H  one thread per output column: it walks the b rows of its group, the lanes of a
//          warp reading one row's neighbouring weights together.
// Each lane keeps kUnroll independent loads in flight (a first version with one load per
// iteration was latency-bound: 2-3x slower than cuBLAS on Monarch factors). The number of
// signals per pass is a template parameter (1, 2, 4, 8, 16), so no accumulator is wasted.
#include <algorithm>

#include "operators/ks/ks_device.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"

namespace strop::detail {
namespace {

constexpr int kMaxSignals = 16;
constexpr int kUnroll = 4;
constexpr int kThreads = 256;

// y = alpha v + beta y (beta == 0 overwrites).
template <class D>
__device__ __forceinline__ void update(D* y, D v, D alpha, D beta) {
  const D scaled = mul(alpha, v);
  *y = is_zero(beta) ? scaled : add(scaled, mul(beta, *y));
}

struct Geometry {
  Index a, b, c, d;  // the pattern
  Index x_rs, x_cs, y_rs, y_cs;
  int signals;  // in this pass, <= NSIG
};

// Y rows (i b d + j + k d) = W_g X rows (i c d + j + l d), g = i d + j.
template <int NSIG, class D>
__global__ void small_batch_forward(Geometry g, const D* w, const D* x, D* y, D alpha, D beta) {
  const int lane = threadIdx.x % 32;
  const Index row = (blockIdx.x * Index(blockDim.x) + threadIdx.x) / 32;  // i b d + k d + j
  if (row >= g.a * g.b * g.d) return;  // whole warps leave together
  const Index i = row / (g.b * g.d), k = row / g.d % g.b, j = row % g.d;
  const D* w_row = w + ((i * g.d + j) * g.b + k) * g.c;
  const D* x_group = x + (i * g.c * g.d + j) * g.x_rs;
  const Index x_step = g.d * g.x_rs;  // between consecutive inputs l of the group
  D acc[NSIG];
#pragma unroll
  for (int s = 0; s < NSIG; ++s)
    acc[s] = D{};
  Index l = lane;
  for (; l + 32 * (kUnroll - 1) < g.c; l += 32 * kUnroll) {
    D wv[kUnroll], xv[kUnroll][NSIG];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      wv[u] = w_row[l + 32 * u];
#pragma unroll
      for (int s = 0; s < NSIG; ++s)
        xv[u][s] = s < g.signals ? x_group[(l + 32 * u) * x_step + s * g.x_cs] : D{};
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int s = 0; s < NSIG; ++s)
        multiply_add(acc[s], wv[u], xv[u][s]);
  }
  for (; l < g.c; l += 32) {
    const D wv = w_row[l];
#pragma unroll
    for (int s = 0; s < NSIG; ++s)
      if (s < g.signals) multiply_add(acc[s], wv, x_group[l * x_step + s * g.x_cs]);
  }
#pragma unroll
  for (int s = 0; s < NSIG; ++s) {
#pragma unroll
    for (int mask = 16; mask > 0; mask /= 2)
      acc[s] = add(acc[s], shfl_xor(acc[s], mask));
  }
#pragma unroll
  for (int s = 0; s < NSIG; ++s)
    if (s == lane && s < g.signals) update(y + row * g.y_rs + s * g.y_cs, acc[s], alpha, beta);
}

// Y rows (i c d + j + l d) = sum_k op(W_g[k, l]) X rows (i b d + j + k d).
template <int NSIG, class D>
__global__ void small_batch_transposed(Geometry g, const D* w, const D* x, D* y, D alpha, D beta,
                                       bool conjugate_w) {
  const Index column = blockIdx.x * Index(blockDim.x) + threadIdx.x;  // (group, l), l fastest
  if (column >= g.a * g.d * g.c) return;
  const Index group = column / g.c, l = column % g.c;
  const Index i = group / g.d, j = group % g.d;
  const D* w_col = w + group * g.b * g.c + l;
  const D* x_group = x + (i * g.b * g.d + j) * g.x_rs;
  const Index x_step = g.d * g.x_rs;
  D acc[NSIG];
#pragma unroll
  for (int s = 0; s < NSIG; ++s)
    acc[s] = D{};
  Index k = 0;
  for (; k + kUnroll - 1 < g.b; k += kUnroll) {
    D wv[kUnroll], xv[kUnroll][NSIG];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      wv[u] = w_col[(k + u) * g.c];
#pragma unroll
      for (int s = 0; s < NSIG; ++s)
        xv[u][s] = s < g.signals ? x_group[(k + u) * x_step + s * g.x_cs] : D{};
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const D wu = conjugate_w ? conjugate(wv[u]) : wv[u];
#pragma unroll
      for (int s = 0; s < NSIG; ++s)
        multiply_add(acc[s], wu, xv[u][s]);
    }
  }
  for (; k < g.b; ++k) {
    const D wv = conjugate_w ? conjugate(w_col[k * g.c]) : w_col[k * g.c];
#pragma unroll
    for (int s = 0; s < NSIG; ++s)
      if (s < g.signals) multiply_add(acc[s], wv, x_group[k * x_step + s * g.x_cs]);
  }
  D* y_col = y + (i * g.c * g.d + j + l * g.d) * g.y_rs;
#pragma unroll
  for (int s = 0; s < NSIG; ++s)
    if (s < g.signals) update(y_col + s * g.y_cs, acc[s], alpha, beta);
}

template <int NSIG, class D>
void launch(const KSPattern& p, Op op, bool conjugate, const Geometry& g, const D* w, const D* x,
            D* y, D alpha, D beta, cudaStream_t stream) {
  if (op == Op::NoTrans) {
    const Index blocks = (p.a * p.b * p.d * 32 + kThreads - 1) / kThreads;
    small_batch_forward<NSIG, D>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(g, w, x, y, alpha, beta);
    check_launch("ks small_batch_forward");
  } else {
    const Index blocks = (p.a * p.d * p.c + kThreads - 1) / kThreads;
    small_batch_transposed<NSIG, D><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        g, w, x, y, alpha, beta, conjugate);
    check_launch("ks small_batch_transposed");
  }
}

}  // namespace

template <class T>
void ks_small_batch_apply(const KSPattern& p, const T* w_adbc, Op op, ConstView<T> X,
                          MatrixView<T> Y, T alpha, T beta, Context& ctx) {
  using D = DeviceScalar<T>;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  const D a = to_device_scalar(alpha), b = to_device_scalar(beta);
  const auto* w = reinterpret_cast<const D*>(w_adbc);
  const bool conjugate = is_complex_v<T> && op == Op::Adjoint;
  // complex<double> keeps 8 signals per pass: 16 of them with kUnroll loads in flight spill.
  const Index pass = sizeof(T) >= 16 ? 8 : kMaxSignals;
  for (Index first = 0; first < X.cols; first += pass) {
    const int signals = int(std::min<Index>(pass, X.cols - first));
    const Geometry g{p.a,          p.b,          p.c,          p.d,    X.row_stride,
                     X.col_stride, Y.row_stride, Y.col_stride, signals};
    const auto* x = reinterpret_cast<const D*>(X.data + first * X.col_stride);
    auto* y = reinterpret_cast<D*>(Y.data + first * Y.col_stride);
    if (signals == 1) {
      launch<1>(p, op, conjugate, g, w, x, y, a, b, stream);
    } else if (signals <= 2) {
      launch<2>(p, op, conjugate, g, w, x, y, a, b, stream);
    } else if (signals <= 4) {
      launch<4>(p, op, conjugate, g, w, x, y, a, b, stream);
    } else if (signals <= 8) {
      launch<8>(p, op, conjugate, g, w, x, y, a, b, stream);
    } else {
      launch<16>(p, op, conjugate, g, w, x, y, a, b, stream);
    }
  }
}

#define STROP_INSTANTIATE(T)                                                          \
  template void ks_small_batch_apply<T>(const KSPattern&, const T*, Op, ConstView<T>, \
                                        MatrixView<T>, T, T, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
