#pragma once
// The linear algebra behind one BLAST PrecGD step, per device (internal header). The step
// structure (blast_precgd.cpp) is written once against this interface; the CPU (Eigen) and
// GPU (cuBLAS/cuSOLVER) implementations only do arithmetic on buffers they are handed, so
// the two devices cannot drift apart in the algorithm.
//
// Shapes follow papers/NOTES.md ("The exact BLAST PrecGD"): A is M x N in an rb x cb grid of
// p x q blocks, B (M x r) stacks the B_i, C (r x N) puts the C_j side by side, and d holds
// d_ij = D[:, i, j] at (i * cb + j) * r. Every matrix is column-major. Free of Eigen, so that
// CUDA sources can include it.
#include <memory>

#include "strop/core/context.hpp"
#include "strop/core/op.hpp"
#include "strop/core/scalar.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

struct BlastShape {
  Index rows = 0, cols = 0;                               // M, N
  Index row_blocks = 1, col_blocks = 1;                   // rb, cb
  Index rank = 0;                                         // r
  Index block_rows() const { return rows / row_blocks; }  // p
  Index block_cols() const { return cols / col_blocks; }  // q
};

// Matrix t of a batch: column-major at data + t * stride, leading dimension ld.
template <class P>
struct Batched {
  P data;
  Index ld;
  Index stride;
};

// left: X <- K^{-1} X; right: X <- X K^{-1}.
enum class SolveSide { left, right };

template <class T>
class BlastKernels {
 public:
  virtual ~BlastKernels() = default;
  // Where the buffers handed to this object live.
  virtual MemorySpace space() const = 0;

  // c_t = alpha op_a(a_t) op_b(b_t) + beta c_t for t < batch; op_a(a_t) is m x k.
  virtual void gemm(Op op_a, Op op_b, Index m, Index n, Index k, T alpha, Batched<const T*> a,
                    Batched<const T*> b, T beta, Batched<T*> c, Index batch) = 0;

  // B̄_j = [B_1 diag(d_1j); ...; B_rb diag(d_rb,j)] (M x r) at b_bar + j M r, j < cb.
  virtual void scale_left_factor(const T* B, const T* d, T* b_bar) = 0;
  // C̄_i = [diag(d_i1) C_1, ..., diag(d_i,cb) C_cb] (r x N) at c_bar + i r N, i < rb.
  virtual void scale_right_factor(const T* C, const T* d, T* c_bar) = 0;

  // The preconditioners of the factor steps from the r x r Grams, without forming the
  // r x N stacked matrices again:
  //   over_col_blocks: out_i = Σ_j (d_ij d_ij^H) ∘ gram_j        = C̄_i C̄_i^H,  i < rb
  //   otherwise:       out_j = Σ_i conj(d_ij d_ij^H) ∘ gram_i    = B̄_j^H B̄_j,  j < cb
  // (gram_j = C_j C_j^H, resp. gram_i = B_i^H B_i; all r x r, contiguous).
  virtual void weighted_gram_sum(const T* grams, const T* d, bool over_col_blocks, T* out) = 0;
  // K_ij = F_i ∘ conj(G_j) at k + (i cb + j) r^2: the Gram of the rank-one pieces of block
  // (i, j), F_i = B_i^H B_i, G_j = C_j C_j^H.
  virtual void hadamard_gram(const T* F, const T* G, T* k) = 0;
  // g_ij[rho] = Σ_{columns c of block j} Z_i[rho, c] conj(C[rho, c]) = (B_i^H R_ij C_j^H)_{rho
  // rho}, with Z_i = B_i^H R_{i,:} (r x N) at z + i r N; g_ij at g + (i cb + j) r.
  virtual void diagonal_dots(const T* z, const T* C, T* g) = 0;

  // For t < batch: (K_t + shift I) X_t = Y_t solved in place of X_t (n x nrhs, side left) or
  // X_t (K_t + shift I) = Y_t (X_t nrhs x n, side right). K_t (n x n, Hermitian, contiguous)
  // is overwritten by its Cholesky factor. NumericalError when K_t + shift I is not positive
  // definite.
  virtual void solve_shifted_hpd(SolveSide side, Index n, Index nrhs, T* K, Index batch,
                                 double shift, Batched<T*> x) = 0;

  // y += alpha x over count contiguous values.
  virtual void axpy(Index count, T alpha, const T* x, T* y) = 0;
  // ||x||_2 over count contiguous values (waits for the device).
  virtual double norm(Index count, const T* x) = 0;
};

template <class T>
std::unique_ptr<BlastKernels<T>> make_blast_kernels_cpu(const BlastShape& shape);
#if STROP_HAVE_CUDA
template <class T>
std::unique_ptr<BlastKernels<T>> make_blast_kernels_cuda(const BlastShape& shape, Context& ctx);
#endif

}  // namespace strop::detail
