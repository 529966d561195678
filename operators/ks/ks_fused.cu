// The fused output-stationary KS kernel (Algorithm 2 of the ICML paper, generalised).
//
// K (pattern a,b,c,d) maps the row group {i*c*d + l*d + j : l < c} of X to the row group
// {i*b*d + k*d + j : k < b} of Y through the b x c block w[i,:,:,j]. A thread block owns
// an output tile of tk rows k x tj consecutive j x tn signals of one i: it gathers the
// matching X rows chunk by chunk (tl values of l at a time) straight from global memory
// into shared memory, multiplies with the weight chunk, and writes its outputs once. No
// permutation pass, X read once per k-tile, Y written once, any pattern/batch/layout.
//
// Each thread accumulates an RK x RN register tile (RK rows k, RN signals). Loads and
// thread order follow the memory order of the layout: signals fastest when each
// feature's batch is contiguous (RowMajor), j fastest otherwise (ColMajor), so global
// accesses coalesce in both.
#include <algorithm>

#include "operators/ks/ks_device.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"

namespace strop::detail {
namespace {

// D: the values and the arithmetic; IO: the signals' storage (D, or 16 bits for D = float).
template <class D, class IO = D>
struct KSArgs {
  const IO* x;
  Index x_rs, x_cs;
  IO* y;
  Index y_rs, y_cs;
  const D* w;
  Index w_i, w_out, w_in;  // strides of (i, output index, input index); j has stride 1
  Index out_group, in_group, d, batch;
  Index k_tiles, j_tiles;
  D alpha, beta;
  bool conjugate_w;
  int tk, tj, tl, tn;
};

template <class D, int RK, int RN, bool BatchContiguous>
__global__ void __launch_bounds__(256) ks_fused_kernel(const KSArgs<D> p) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  D* xs = reinterpret_cast<D*>(shared_raw);  // [tl][tj][tn]
  D* ws = xs + p.tl * p.tj * p.tn;           // [tl][tj][tk]

  const int threads_n = p.tn / RN;
  const int tid = threadIdx.x;
  int t_n, t_j, t_k;
  if constexpr (BatchContiguous) {
    t_n = tid % threads_n;
    t_j = (tid / threads_n) % p.tj;
    t_k = tid / (threads_n * p.tj);
  } else {
    t_j = tid % p.tj;
    t_n = (tid / p.tj) % threads_n;
    t_k = tid / (p.tj * threads_n);
  }
  Index block = blockIdx.x;
  const Index k0 = (block % p.k_tiles) * p.tk;
  block /= p.k_tiles;
  const Index j0 = (block % p.j_tiles) * p.tj;
  const Index i = block / p.j_tiles;
  const Index n0 = Index(blockIdx.y) * p.tn;
  const Index x_base = i * p.in_group * p.d + j0;
  const Index w_base = i * p.w_i + j0;

  // Signal of register column r: contiguous per thread (vectorisable) or strided by the
  // thread count (coalesced across j-fastest threads).
  auto local_n = [&](int r) { return BatchContiguous ? t_n * RN + r : t_n + r * threads_n; };

  D acc[RK][RN];
#pragma unroll
  for (int q = 0; q < RK; ++q)
#pragma unroll
    for (int r = 0; r < RN; ++r)
      acc[q][r] = D{};

  const int x_tile = p.tl * p.tj * p.tn;
  const int w_tile = p.tl * p.tj * p.tk;
  for (Index l0 = 0; l0 < p.in_group; l0 += p.tl) {
    for (int e = tid; e < x_tile; e += blockDim.x) {
      int n, jx, l;
      if constexpr (BatchContiguous) {
        n = e % p.tn;
        jx = (e / p.tn) % p.tj;
        l = e / (p.tn * p.tj);
      } else {
        jx = e % p.tj;
        l = (e / p.tj) % p.tl;
        n = e / (p.tj * p.tl);
      }
      D v{};
      if (l0 + l < p.in_group && j0 + jx < p.d && n0 + n < p.batch) {
        v = p.x[(x_base + (l0 + l) * p.d + jx) * p.x_rs + (n0 + n) * p.x_cs];
      }
      xs[(l * p.tj + jx) * p.tn + n] = v;
    }
    for (int e = tid; e < w_tile; e += blockDim.x) {
      const int jx = e % p.tj;
      const int l = (e / p.tj) % p.tl;
      const int k = e / (p.tj * p.tl);
      D v{};
      if (l0 + l < p.in_group && j0 + jx < p.d && k0 + k < p.out_group) {
        v = p.w[w_base + (k0 + k) * p.w_out + (l0 + l) * p.w_in + jx];
        if (p.conjugate_w) v = conjugate(v);
      }
      ws[(l * p.tj + jx) * p.tk + k] = v;
    }
    __syncthreads();
    for (int l = 0; l < p.tl; ++l) {
      const D* w_row = ws + (l * p.tj + t_j) * p.tk + t_k * RK;
      const D* x_row = xs + (l * p.tj + t_j) * p.tn;
      D wv[RK], xv[RN];
#pragma unroll
      for (int q = 0; q < RK; ++q)
        wv[q] = w_row[q];
#pragma unroll
      for (int r = 0; r < RN; ++r)
        xv[r] = x_row[local_n(r)];
#pragma unroll
      for (int q = 0; q < RK; ++q)
#pragma unroll
        for (int r = 0; r < RN; ++r)
          multiply_add(acc[q][r], wv[q], xv[r]);
    }
    __syncthreads();
  }

  const Index j = j0 + t_j;
  if (j >= p.d) return;
  const bool accumulate = !is_zero(p.beta);
#pragma unroll
  for (int q = 0; q < RK; ++q) {
    const Index k = k0 + t_k * RK + q;
    if (t_k * RK + q >= p.tk || k >= p.out_group) continue;
    D* y_row = p.y + (i * p.out_group * p.d + k * p.d + j) * p.y_rs;
#pragma unroll
    for (int r = 0; r < RN; ++r) {
      const Index n = n0 + local_n(r);
      if (n >= p.batch) continue;
      D v = mul(p.alpha, acc[q][r]);
      if (accumulate) v = add(v, mul(p.beta, y_row[n * p.y_cs]));
      y_row[n * p.y_cs] = v;
    }
  }
}

// Small blocks (b, c <= 8: butterflies, radix-4/8 stages) are pure memory traffic: one
// thread per (group, signal) reads its c inputs straight into registers and writes its b
// outputs, with no shared-memory round trip. Threads run along the contiguous direction
// of the layout (signals for RowMajor, j for ColMajor), so every load and store coalesces,
// and the group's weights are broadcast (RowMajor) or coalesced across j (ColMajor).
// 16-bit signals are read and written as such, with the arithmetic in float.
constexpr int kSmallBlock = 8;

template <class D, class IO, bool BatchContiguous>
__global__ void __launch_bounds__(256) ks_small_kernel(const KSArgs<D, IO> p, Index groups) {
  const Index total = groups * p.batch;
  for (Index t = blockIdx.x * Index(blockDim.x) + threadIdx.x; t < total;
       t += Index(gridDim.x) * blockDim.x) {
    const Index g = BatchContiguous ? t / p.batch : t % groups;
    const Index n = BatchContiguous ? t % p.batch : t / groups;
    const Index i = g / p.d, j = g % p.d;
    const IO* x = p.x + (i * p.in_group * p.d + j) * p.x_rs + n * p.x_cs;
    D xv[kSmallBlock];
#pragma unroll
    for (int l = 0; l < kSmallBlock; ++l) {
      if (l < p.in_group) xv[l] = load_value(x + l * p.d * p.x_rs);
    }
    const D* w = p.w + i * p.w_i + j;
    IO* y = p.y + (i * p.out_group * p.d + j) * p.y_rs + n * p.y_cs;
#pragma unroll
    for (int k = 0; k < kSmallBlock; ++k) {
      if (k >= p.out_group) break;
      D acc{};
#pragma unroll
      for (int l = 0; l < kSmallBlock; ++l) {
        if (l < p.in_group) {
          D wv = w[k * p.w_out + l * p.w_in];
          if (p.conjugate_w) wv = conjugate(wv);
          multiply_add(acc, wv, xv[l]);
        }
      }
      D v = mul(p.alpha, acc);
      IO* out = y + k * p.d * p.y_rs;
      if (!is_zero(p.beta)) v = add(v, mul(p.beta, load_value(out)));
      store_value(out, v);
    }
  }
}

// Tile shape for a problem: register tiles sized to the group, ~256 threads per block.
struct TileChoice {
  int rk, rn, tk, tj, tl, tn;
};

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

template <class D>
TileChoice choose_tiles(Index out, Index in, Index d, Index batch) {
  TileChoice t{};
  const bool wide = sizeof(D) >= 16;  // complex<double>: fewer registers per thread
  if (out >= 32 && in >= 16 && batch >= 64 && !wide) {
    t.rk = 8;
    t.rn = 8;
    t.tk = 64;
    t.tn = 64;
  } else {
    t.rn = batch >= 16 ? 4 : 1;
    t.rk = out >= 4 ? 4 : (out >= 2 ? 2 : 1);
    t.tk = int(std::min<Index>(ceil_div(out, t.rk) * t.rk, 4 * t.rk));
    t.tn = t.rn == 4 ? 64 : 16;
  }
  const int per_j = (t.tk / t.rk) * (t.tn / t.rn);
  t.tj = int(std::clamp<Index>(256 / per_j, 1, d));
  // Few j and small tiles: widen the batch tile to keep the block busy.
  while ((t.tk / t.rk) * t.tj * (t.tn / t.rn) < 128 && t.tn < 256 && t.tn < batch)
    t.tn *= 2;
  t.tl = int(std::min<Index>(in, 16));
  const auto shared = [&] { return std::size_t(t.tl) * t.tj * (t.tn + t.tk) * sizeof(D); };
  while (shared() > 48 * 1024 && t.tl > 1)
    t.tl /= 2;
  return t;
}

template <class D, int RK, int RN, bool BC>
void launch(const KSArgs<D>& args, dim3 grid, int threads, std::size_t shared,
            cudaStream_t stream) {
  ks_fused_kernel<D, RK, RN, BC><<<grid, threads, shared, stream>>>(args);
  check_launch("ks_fused_kernel");
}

template <class D, bool BC>
void dispatch(const TileChoice& t, const KSArgs<D>& args, dim3 grid, int threads,
              std::size_t shared, cudaStream_t stream) {
  if (t.rn == 8) return launch<D, 8, 8, BC>(args, grid, threads, shared, stream);
  if (t.rn == 4) {
    if (t.rk == 4) return launch<D, 4, 4, BC>(args, grid, threads, shared, stream);
    if (t.rk == 2) return launch<D, 2, 4, BC>(args, grid, threads, shared, stream);
    return launch<D, 1, 4, BC>(args, grid, threads, shared, stream);
  }
  if (t.rk == 4) return launch<D, 4, 1, BC>(args, grid, threads, shared, stream);
  if (t.rk == 2) return launch<D, 2, 1, BC>(args, grid, threads, shared, stream);
  return launch<D, 1, 1, BC>(args, grid, threads, shared, stream);
}

// The kernels' arguments for op(K) of pattern p (values w in the (a, b, c, d) order).
template <class D, class IO, class T, class Storage>
KSArgs<D, IO> make_args(const KSPattern& p, const T* w_abcd, Op op, ConstView<Storage> X,
                        MatrixView<Storage> Y, D alpha, D beta) {
  const bool transposed = op != Op::NoTrans;
  KSArgs<D, IO> args{};
  args.x = reinterpret_cast<const IO*>(X.data);
  args.x_rs = X.row_stride;
  args.x_cs = X.col_stride;
  args.y = reinterpret_cast<IO*>(Y.data);
  args.y_rs = Y.row_stride;
  args.y_cs = Y.col_stride;
  args.w = reinterpret_cast<const D*>(w_abcd);
  // Value (i,k,l,j) sits at ((i*b + k)*c + l)*d + j; op(K) reads it with k and l swapped.
  args.w_i = p.b * p.c * p.d;
  args.w_out = transposed ? p.d : p.c * p.d;
  args.w_in = transposed ? p.c * p.d : p.d;
  args.out_group = transposed ? p.c : p.b;
  args.in_group = transposed ? p.b : p.c;
  args.d = p.d;
  args.batch = X.cols;
  args.alpha = alpha;
  args.beta = beta;
  args.conjugate_w = op == Op::Adjoint && is_complex_v<T>;
  return args;
}

template <class D, class IO>
void launch_small(const KSArgs<D, IO>& args, Index groups, bool batch_contiguous,
                  cudaStream_t stream) {
  const Index blocks = std::min<Index>(ceil_div(groups * args.batch, 256), Index(1) << 20);
  if (batch_contiguous) {
    ks_small_kernel<D, IO, true><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(args, groups);
  } else {
    ks_small_kernel<D, IO, false><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(args, groups);
  }
  check_launch("ks_small_kernel");
}

}  // namespace

bool ks_small_blocks(const KSPattern& p) {
  return p.b <= kSmallBlock && p.c <= kSmallBlock;
}

template <class T>
void ks_fused_apply(const KSPattern& p, const T* w_abcd, Op op, ConstView<T> X, MatrixView<T> Y,
                    T alpha, T beta, Context& ctx) {
  using D = DeviceScalar<T>;
  KSArgs<D> args =
      make_args<D, D>(p, w_abcd, op, X, Y, to_device_scalar(alpha), to_device_scalar(beta));
  // RowMajor (each feature's batch contiguous) or a single signal: signals fastest.
  const bool batch_contiguous = X.col_stride == 1 || X.cols == 1;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  if (ks_small_blocks(p)) return launch_small(args, p.a * p.d, batch_contiguous, stream);
  const TileChoice t = choose_tiles<D>(args.out_group, args.in_group, p.d, X.cols);
  args.tk = t.tk;
  args.tj = t.tj;
  args.tl = t.tl;
  args.tn = t.tn;
  // gridDim.y (signal tiles) is at most 65535: a larger batch goes in slices of columns
  // (the tile choice only depends on the batch below 256 signals, so it stays the same).
  const Index max_batch = Index(65535) * t.tn;
  if (X.cols > max_batch) {
    for (Index first = 0; first < X.cols; first += max_batch) {
      const Index count = std::min(max_batch, X.cols - first);
      ks_fused_apply(p, w_abcd, op, X.col_block(first, count), Y.col_block(first, count), alpha,
                     beta, ctx);
    }
    return;
  }
  const GroupTileGrid g =
      group_tile_grid(p, args.out_group, t.tk, t.tj, X.cols, t.tn, "ks fused kernel");
  args.k_tiles = g.k_tiles;
  args.j_tiles = g.j_tiles;
  const dim3 grid(g.x, g.y);
  const int threads = (t.tk / t.rk) * t.tj * (t.tn / t.rn);
  const std::size_t shared = std::size_t(t.tl) * t.tj * (t.tn + t.tk) * sizeof(D);
  if (batch_contiguous) {
    dispatch<D, true>(t, args, grid, threads, shared, stream);
  } else {
    dispatch<D, false>(t, args, grid, threads, shared, stream);
  }
}

template <class Storage>
void ks_small_blocks_apply(const KSPattern& p, const float* w_abcd, Op op, ConstView<Storage> X,
                           MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  using IO = DeviceScalar<Storage>;
  require<DeviceError>(ks_small_blocks(p), "ks small-block kernel: pattern ", to_string(p),
                       " has blocks larger than ", kSmallBlock);
  const auto args = make_args<float, IO>(p, w_abcd, op, X, Y, alpha, beta);
  launch_small(args, p.a * p.d, X.col_stride == 1 || X.cols == 1,
               static_cast<cudaStream_t>(ctx.stream()));
}

template void ks_small_blocks_apply(const KSPattern&, const float*, Op, ConstView<half>,
                                    MatrixView<half>, float, float, Context&);
template void ks_small_blocks_apply(const KSPattern&, const float*, Op, ConstView<bfloat16>,
                                    MatrixView<bfloat16>, float, float, Context&);

#define STROP_INSTANTIATE(T)                                                               \
  template void ks_fused_apply(const KSPattern& p, const T* w_abcd, Op op, ConstView<T> X, \
                               MatrixView<T> Y, T alpha, T beta, Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
