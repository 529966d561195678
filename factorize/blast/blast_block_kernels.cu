// Element-wise CUDA kernels of the BLAST PrecGD step: one thread per output element, in
// the output's memory order (so stores coalesce), grid-stride loops for any size.
#include <algorithm>

#include "factorize/blast/blast_block_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"

namespace strop::detail {
namespace {

// The block grid, passed to the kernels by value.
struct Grid {
  long long M, N, rb, cb, r, p, q;
};
Grid grid_of(const BlastShape& s) {
  return {s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, s.block_rows(), s.block_cols()};
}

#define STROP_GRID_STRIDE_LOOP(e, total)                                                         \
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < (total); \
       e += static_cast<long long>(gridDim.x) * blockDim.x)

template <class D>
__global__ void scale_left_kernel(Grid g, const D* B, const D* d, D* b_bar) {
  const long long Mr = g.M * g.r;
  STROP_GRID_STRIDE_LOOP(e, g.cb * Mr) {
    const long long j = e / Mr, m = (e % Mr) % g.M, rho = (e % Mr) / g.M;
    b_bar[e] = mul(B[m + rho * g.M], d[((m / g.p) * g.cb + j) * g.r + rho]);
  }
}

template <class D>
__global__ void scale_right_kernel(Grid g, const D* C, const D* d, D* c_bar) {
  const long long rN = g.r * g.N;
  STROP_GRID_STRIDE_LOOP(e, g.rb * rN) {
    const long long i = e / rN, within = e % rN, rho = within % g.r, col = within / g.r;
    c_bar[e] = mul(d[(i * g.cb + col / g.q) * g.r + rho], C[within]);
  }
}

template <class D>
__global__ void weighted_gram_sum_kernel(Grid g, const D* grams, const D* d, bool over_col_blocks,
                                         D* out) {
  const long long rr = g.r * g.r;
  const long long outputs = over_col_blocks ? g.rb : g.cb, terms = over_col_blocks ? g.cb : g.rb;
  STROP_GRID_STRIDE_LOOP(e, outputs * rr) {
    const long long x = e / rr, within = e % rr, rho = within % g.r, sigma = within / g.r;
    D acc{};
    for (long long y = 0; y < terms; ++y) {
      const D* w = d + (over_col_blocks ? x * g.cb + y : y * g.cb + x) * g.r;
      // (w w^H)_{rho sigma} summing over column blocks, its conjugate over row blocks.
      const D weight =
          over_col_blocks ? mul(w[rho], conjugate(w[sigma])) : mul(conjugate(w[rho]), w[sigma]);
      multiply_add(acc, weight, grams[y * rr + within]);
    }
    out[e] = acc;
  }
}

template <class D>
__global__ void hadamard_gram_kernel(Grid g, const D* F, const D* G, D* k) {
  const long long rr = g.r * g.r;
  STROP_GRID_STRIDE_LOOP(e, g.rb * g.cb * rr) {
    const long long ij = e / rr, within = e % rr;
    k[e] = mul(F[(ij / g.cb) * rr + within], conjugate(G[(ij % g.cb) * rr + within]));
  }
}

template <class D>
__global__ void diagonal_dots_kernel(Grid g, const D* z, const D* C, D* out) {
  STROP_GRID_STRIDE_LOOP(e, g.rb * g.cb * g.r) {
    const long long ij = e / g.r, rho = e % g.r, i = ij / g.cb, j = ij % g.cb;
    // Row rho of Z_i and of C over the columns of block j: adjacent threads read adjacent
    // rows, i.e. adjacent addresses.
    const D* zi = z + i * g.r * g.N + j * g.q * g.r + rho;
    const D* cj = C + j * g.q * g.r + rho;
    D acc{};
    for (long long c = 0; c < g.q; ++c)
      multiply_add(acc, zi[c * g.r], conjugate(cj[c * g.r]));
    out[e] = acc;
  }
}

template <class D>
__global__ void add_to_diagonal_kernel(D* K, long long n, long long batch, D shift) {
  STROP_GRID_STRIDE_LOOP(e, batch * n) {
    D& v = K[(e / n) * n * n + (e % n) * (n + 1)];
    v = add(v, shift);
  }
}

template <class T>
__global__ void batch_pointers_kernel(T* base, long long stride, long long batch, T** pointers) {
  STROP_GRID_STRIDE_LOOP(t, batch) {
    pointers[t] = base + t * stride;
  }
}

// Enough blocks to fill the GPU, capped: the loops stride over the rest.
unsigned blocks_for(long long total) {
  return static_cast<unsigned>(std::max(1LL, std::min((total + 255) / 256, 65535LL * 8)));
}
cudaStream_t stream_of(Context& ctx) {
  return static_cast<cudaStream_t>(ctx.stream());
}
template <class T>
auto* device(T* p) {
  return reinterpret_cast<DeviceScalar<std::remove_const_t<T>>*>(p);
}
template <class T>
auto* device(const T* p) {
  return reinterpret_cast<const DeviceScalar<T>*>(p);
}

}  // namespace

template <class T>
void launch_scale_left_factor(const BlastShape& s, const T* B, const T* d, T* b_bar, Context& ctx) {
  const Grid g = grid_of(s);
  scale_left_kernel<<<blocks_for(g.cb * g.M * g.r), 256, 0, stream_of(ctx)>>>(
      g, device(B), device(d), device(b_bar));
  check_launch("blast scale_left_kernel");
}

template <class T>
void launch_scale_right_factor(const BlastShape& s, const T* C, const T* d, T* c_bar,
                               Context& ctx) {
  const Grid g = grid_of(s);
  scale_right_kernel<<<blocks_for(g.rb * g.r * g.N), 256, 0, stream_of(ctx)>>>(
      g, device(C), device(d), device(c_bar));
  check_launch("blast scale_right_kernel");
}

template <class T>
void launch_weighted_gram_sum(const BlastShape& s, const T* grams, const T* d, bool over_col_blocks,
                              T* out, Context& ctx) {
  const Grid g = grid_of(s);
  const long long total = (over_col_blocks ? g.rb : g.cb) * g.r * g.r;
  weighted_gram_sum_kernel<<<blocks_for(total), 256, 0, stream_of(ctx)>>>(
      g, device(grams), device(d), over_col_blocks, device(out));
  check_launch("blast weighted_gram_sum_kernel");
}

template <class T>
void launch_hadamard_gram(const BlastShape& s, const T* F, const T* G, T* k, Context& ctx) {
  const Grid g = grid_of(s);
  hadamard_gram_kernel<<<blocks_for(g.rb * g.cb * g.r * g.r), 256, 0, stream_of(ctx)>>>(
      g, device(F), device(G), device(k));
  check_launch("blast hadamard_gram_kernel");
}

template <class T>
void launch_diagonal_dots(const BlastShape& s, const T* z, const T* C, T* g_out, Context& ctx) {
  const Grid g = grid_of(s);
  diagonal_dots_kernel<<<blocks_for(g.rb * g.cb * g.r), 256, 0, stream_of(ctx)>>>(
      g, device(z), device(C), device(g_out));
  check_launch("blast diagonal_dots_kernel");
}

template <class T>
void launch_add_to_diagonal(T* K, Index n, Index batch, double shift, Context& ctx) {
  add_to_diagonal_kernel<<<blocks_for(batch * n), 256, 0, stream_of(ctx)>>>(
      device(K), n, batch, to_device_scalar(T(shift)));
  check_launch("blast add_to_diagonal_kernel");
}

template <class T>
void launch_batch_pointers(T* base, Index stride, Index batch, T** pointers, Context& ctx) {
  batch_pointers_kernel<<<blocks_for(batch), 256, 0, stream_of(ctx)>>>(base, stride, batch,
                                                                       pointers);
  check_launch("blast batch_pointers_kernel");
}

#define STROP_INSTANTIATE(T)                                                                    \
  template void launch_scale_left_factor(const BlastShape&, const T*, const T*, T*, Context&);  \
  template void launch_scale_right_factor(const BlastShape&, const T*, const T*, T*, Context&); \
  template void launch_weighted_gram_sum(const BlastShape&, const T*, const T*, bool, T*,       \
                                         Context&);                                             \
  template void launch_hadamard_gram(const BlastShape&, const T*, const T*, T*, Context&);      \
  template void launch_diagonal_dots(const BlastShape&, const T*, const T*, T*, Context&);      \
  template void launch_add_to_diagonal(T*, Index, Index, double, Context&);                     \
  template void launch_batch_pointers(T*, Index, Index, T**, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
