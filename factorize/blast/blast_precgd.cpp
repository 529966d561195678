// The BLAST PrecGD iteration of papers/NOTES.md ("The exact BLAST PrecGD"), written once for
// both devices against BlastKernels. Each outer step updates the B factors, then the C
// factors, then the diagonals; each sub-step recomputes the residual R = A - Â first and
// preconditions its gradient by (Gram + eps I)^{-1}, eps = delta ||R||_F.
//
// The Grams are formed from the r x r products C_j C_j^H and B_i^H B_i, never from the
// r x N stacked matrices, so a step costs O(M N r) like the residual itself.
#include <cmath>

#include "factorize/blast/blast_kernels.hpp"
#include "factorize/blast/blast_precgd.hpp"
#include "strop/core/buffer.hpp"

namespace strop::detail {
namespace {

template <class T>
class Precgd {
 public:
  Precgd(const HostMatrix<T>& An, const BlastState<T>& state, BlastKernels<T>& kernels,
         Context& ctx)
      : s_{An.rows(), An.cols(), state.rb, state.cb, state.rank},
        p_(s_.block_rows()),
        q_(s_.block_cols()),
        r_(s_.rank),
        k_(kernels),
        ctx_(ctx),
        A_(upload(An.data(), An.size())),
        R_(allocate(An.size())),
        B_(upload(state.B.data(), state.B.size())),
        C_(upload(state.C.data(), state.C.size())),
        d_(upload(state.d.data(), static_cast<Index>(state.d.size()))),
        b_bar_(allocate(s_.col_blocks * s_.rows * r_)),
        row_block_wide_(allocate(s_.row_blocks * r_ * s_.cols)),
        grad_B_(allocate(s_.rows * r_)),
        grad_C_(allocate(r_ * s_.cols)),
        grad_d_(allocate(static_cast<Index>(state.d.size()))),
        F_(allocate(s_.row_blocks * r_ * r_)),
        G_(allocate(s_.col_blocks * r_ * r_)),
        preconditioners_(allocate(s_.row_blocks * s_.col_blocks * r_ * r_)) {}

  // R = A - Â with Â_{:,j} = B̄_j C_j; leaves B̄ current for update_right_factors. Returns
  // ||R||_F.
  double residual() {
    k_.scale_left_factor(B_.data(), d_.data(), b_bar_.data());
    copy_bytes(R_.data(), k_.space(), A_.data(), k_.space(), sizeof(T) * R_.size(), ctx_);
    k_.gemm(Op::NoTrans, Op::NoTrans, s_.rows, q_, r_, T(-1),
            {b_bar_.data(), s_.rows, s_.rows * r_}, {C_.data(), r_, r_ * q_}, T(1),
            {R_.data(), s_.rows, s_.rows * q_}, s_.col_blocks);
    return k_.norm(R_.size(), R_.data());
  }

  // B_i -= eta grad_i (C̄_i C̄_i^H + eps I)^{-1}, grad_i = -2 R_{i,:} C̄_i^H.
  void update_left_factors(double eta, double eps) {
    T* c_bar = row_block_wide_.data();
    k_.scale_right_factor(C_.data(), d_.data(), c_bar);
    // R_{i,:} C̄_i^H lands in B's own layout (block i at row i p), so the update is one axpy.
    k_.gemm(Op::NoTrans, Op::Adjoint, p_, r_, s_.cols, T(1), {R_.data(), s_.rows, p_},
            {c_bar, r_, r_ * s_.cols}, T(0), {grad_B_.data(), s_.rows, p_}, s_.row_blocks);
    right_grams();
    k_.weighted_gram_sum(G_.data(), d_.data(), true, preconditioners_.data());
    k_.solve_shifted_hpd(SolveSide::right, r_, p_, preconditioners_.data(), s_.row_blocks, eps,
                         {grad_B_.data(), s_.rows, p_});
    k_.axpy(grad_B_.size(), T(2 * eta), grad_B_.data(), B_.data());
  }

  // C_j -= eta (B̄_j^H B̄_j + eps I)^{-1} grad_j, grad_j = -2 B̄_j^H R_{:,j}. Needs B̄ of the
  // current B and d, which residual() leaves behind.
  void update_right_factors(double eta, double eps) {
    k_.gemm(Op::Adjoint, Op::NoTrans, r_, q_, s_.rows, T(1), {b_bar_.data(), s_.rows, s_.rows * r_},
            {R_.data(), s_.rows, s_.rows * q_}, T(0), {grad_C_.data(), r_, r_ * q_}, s_.col_blocks);
    left_grams();
    k_.weighted_gram_sum(F_.data(), d_.data(), false, preconditioners_.data());
    k_.solve_shifted_hpd(SolveSide::left, r_, q_, preconditioners_.data(), s_.col_blocks, eps,
                         {grad_C_.data(), r_, r_ * q_});
    k_.axpy(grad_C_.size(), T(2 * eta), grad_C_.data(), C_.data());
  }

  // d_ij -= eta ((B_i^H B_i) ∘ conj(C_j C_j^H) + eps I)^{-1} grad_ij,
  // grad_ij = -2 diag(B_i^H R_ij C_j^H).
  void update_diagonals(double eta, double eps) {
    T* z = row_block_wide_.data();
    k_.gemm(Op::Adjoint, Op::NoTrans, r_, s_.cols, p_, T(1), {B_.data(), s_.rows, p_},
            {R_.data(), s_.rows, p_}, T(0), {z, r_, r_ * s_.cols}, s_.row_blocks);
    k_.diagonal_dots(z, C_.data(), grad_d_.data());
    left_grams();
    right_grams();
    k_.hadamard_gram(F_.data(), G_.data(), preconditioners_.data());
    const Index systems = s_.row_blocks * s_.col_blocks;
    k_.solve_shifted_hpd(SolveSide::left, r_, 1, preconditioners_.data(), systems, eps,
                         {grad_d_.data(), r_, r_});
    k_.axpy(grad_d_.size(), T(2 * eta), grad_d_.data(), d_.data());
  }

  void download(BlastState<T>& state) {
    copy_bytes(state.B.data(), MemorySpace::Host, B_.data(), k_.space(), sizeof(T) * B_.size(),
               ctx_);
    copy_bytes(state.C.data(), MemorySpace::Host, C_.data(), k_.space(), sizeof(T) * C_.size(),
               ctx_);
    copy_bytes(state.d.data(), MemorySpace::Host, d_.data(), k_.space(), sizeof(T) * d_.size(),
               ctx_);
  }

 private:
  Buffer<T> allocate(Index count) { return Buffer<T>(count, k_.space(), ctx_); }
  Buffer<T> upload(const T* host, Index count) {
    Buffer<T> b = allocate(count);
    copy_bytes(b.data(), k_.space(), host, MemorySpace::Host, sizeof(T) * count, ctx_);
    return b;
  }
  // F_i = B_i^H B_i.
  void left_grams() {
    k_.gemm(Op::Adjoint, Op::NoTrans, r_, r_, p_, T(1), {B_.data(), s_.rows, p_},
            {B_.data(), s_.rows, p_}, T(0), {F_.data(), r_, r_ * r_}, s_.row_blocks);
  }
  // G_j = C_j C_j^H.
  void right_grams() {
    k_.gemm(Op::NoTrans, Op::Adjoint, r_, r_, q_, T(1), {C_.data(), r_, r_ * q_},
            {C_.data(), r_, r_ * q_}, T(0), {G_.data(), r_, r_ * r_}, s_.col_blocks);
  }

  BlastShape s_;
  Index p_, q_, r_;
  BlastKernels<T>& k_;
  Context& ctx_;
  Buffer<T> A_, R_, B_, C_, d_;
  Buffer<T> b_bar_;           // B̄_j, j < cb (M x r each)
  Buffer<T> row_block_wide_;  // r x N per row block: C̄_i (left step), B_i^H R_{i,:} (diagonals)
  Buffer<T> grad_B_, grad_C_, grad_d_;
  Buffer<T> F_, G_;            // B_i^H B_i and C_j C_j^H
  Buffer<T> preconditioners_;  // one r x r system per factor or per block
};

template <class T>
std::unique_ptr<BlastKernels<T>> make_kernels(const BlastShape& shape, Device device,
                                              Context& ctx) {
  if (device == Device::cpu) return make_blast_kernels_cpu<T>(shape);
#if STROP_HAVE_CUDA
  return make_blast_kernels_cuda<T>(shape, ctx);
#else
  (void)ctx;
  throw DeviceError("factorize_blast: Device::cuda requested, but strop was built without CUDA");
#endif
}

}  // namespace

template <class T>
void blast_iterate(const HostMatrix<T>& An, BlastState<T>& state,
                   const BlastFactorizeOptions& options, const BlastStepCallback& after_step,
                   Context& ctx) {
  const BlastShape shape{An.rows(), An.cols(), state.rb, state.cb, state.rank};
  const auto kernels = make_kernels<T>(shape, options.device, ctx);
  Precgd<T> w(An, state, *kernels, ctx);
  const double norm = std::max(double(An.norm()), 1e-300);
  double error = w.residual();
  for (Index t = 0; t < options.steps; ++t) {
    const double eta = blast_learning_rate(options, t);
    w.update_left_factors(eta, options.delta * error);
    error = w.residual();
    w.update_right_factors(eta, options.delta * error);
    error = w.residual();
    w.update_diagonals(eta, options.delta * error);
    error = w.residual();
    require<NumericalError>(std::isfinite(error),
                            "factorize_blast: the iteration diverged at step ", t,
                            " (non-finite residual)");
    if (!after_step(t, error / norm, eta)) break;
  }
  w.download(state);
}

#define STROP_INSTANTIATE(T)                                                                      \
  template void blast_iterate(const HostMatrix<T>&, BlastState<T>&, const BlastFactorizeOptions&, \
                              const BlastStepCallback&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
