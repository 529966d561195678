// The CPU iteration of BLAST PrecGD. The Gram matrices of the preconditioners are formed
// from the r x r products G_j = C_j C_j^H and F_i = B_i^H B_i, never from the r x N
// stacked matrices, so a step costs O(M N r) like the residual itself.
#include <Eigen/Cholesky>
#include <cmath>

#include "factorize/blast/blast_precgd.hpp"
#include "operators/blr/blr_support.hpp"

namespace strop::detail {
namespace {

template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

template <class T>
struct Workspace {
  const HostMatrix<T>& A;
  BlastState<T>& s;
  Index p, q, r;
  HostMatrix<T> R;  // A - Â

  Eigen::Map<Vector<T>> d(Index i, Index j) {
    return Eigen::Map<Vector<T>>(s.d.data() + (i * s.cb + j) * r, r);
  }

  // R = A - Â block by block; returns ||R||_F.
  double residual() {
    parallel_for(s.rb * s.cb, double(A.size()) * double(r), [&](Index ij) {
      const Index i = ij / s.cb, j = ij % s.cb;
      R.block(i * p, j * q, p, q).noalias() =
          A.block(i * p, j * q, p, q) -
          s.B.middleRows(i * p, p) * (d(i, j).asDiagonal() * s.C.middleCols(j * q, q));
    });
    return double(R.norm());
  }

  void step_B(double eta, double eps) {
    std::vector<HostMatrix<T>> G(static_cast<std::size_t>(s.cb));
    for (Index j = 0; j < s.cb; ++j)
      G[j] = s.C.middleCols(j * q, q) * s.C.middleCols(j * q, q).adjoint();
    parallel_for(s.rb, double(A.size()) * double(r), [&](Index i) {
      HostMatrix<T> grad = HostMatrix<T>::Zero(p, r);
      HostMatrix<T> H = HostMatrix<T>::Zero(r, r);
      for (Index j = 0; j < s.cb; ++j) {
        const auto dij = d(i, j);
        grad.noalias() += R.block(i * p, j * q, p, q) * s.C.middleCols(j * q, q).adjoint() *
                          dij.conjugate().asDiagonal();
        H.noalias() += dij.asDiagonal() * G[j] * dij.conjugate().asDiagonal();
      }
      grad *= T(-2);
      H.diagonal().array() += T(eps);
      // B_i -= eta grad H^{-1}, i.e. (H^{-1} grad^H)^H with H Hermitian.
      s.B.middleRows(i * p, p) -= T(eta) * HostMatrix<T>(H.llt().solve(grad.adjoint())).adjoint();
    });
  }

  void step_C(double eta, double eps) {
    std::vector<HostMatrix<T>> F(static_cast<std::size_t>(s.rb));
    for (Index i = 0; i < s.rb; ++i)
      F[i] = s.B.middleRows(i * p, p).adjoint() * s.B.middleRows(i * p, p);
    parallel_for(s.cb, double(A.size()) * double(r), [&](Index j) {
      HostMatrix<T> grad = HostMatrix<T>::Zero(r, q);
      HostMatrix<T> K = HostMatrix<T>::Zero(r, r);
      for (Index i = 0; i < s.rb; ++i) {
        const auto dij = d(i, j);
        grad.noalias() += dij.conjugate().asDiagonal() *
                          (s.B.middleRows(i * p, p).adjoint() * R.block(i * p, j * q, p, q));
        K.noalias() += dij.conjugate().asDiagonal() * F[i] * dij.asDiagonal();
      }
      grad *= T(-2);
      K.diagonal().array() += T(eps);
      s.C.middleCols(j * q, q) -= T(eta) * HostMatrix<T>(K.llt().solve(grad));
    });
  }

  void step_D(double eta, double eps) {
    parallel_for(s.rb * s.cb, double(A.size()) * double(r), [&](Index ij) {
      const Index i = ij / s.cb, j = ij % s.cb;
      const auto Bi = s.B.middleRows(i * p, p);
      const auto Cj = s.C.middleCols(j * q, q);
      const HostMatrix<T> Z = Bi.adjoint() * R.block(i * p, j * q, p, q);
      // grad_rho = -2 (B_i^H R_ij C_j^H)_{rho rho}.
      const Vector<T> grad = T(-2) * Z.cwiseProduct(Cj.conjugate()).rowwise().sum();
      // Gram of the rank-one pieces b_rho c_rho^T: (B^H B) ∘ conj(C C^H).
      HostMatrix<T> K = (Bi.adjoint() * Bi).cwiseProduct((Cj * Cj.adjoint()).conjugate());
      K.diagonal().array() += T(eps);
      d(i, j) -= T(eta) * Vector<T>(K.llt().solve(grad));
    });
  }
};

}  // namespace

template <class T>
void blast_iterate_cpu(const HostMatrix<T>& An, BlastState<T>& state,
                       const BlastFactorizeOptions& options, const BlastStepCallback& after_step) {
  Workspace<T> w{An,
                 state,
                 An.rows() / state.rb,
                 An.cols() / state.cb,
                 state.rank,
                 HostMatrix<T>(An.rows(), An.cols())};
  const double norm = std::max(double(An.norm()), 1e-300);
  double error = w.residual();
  for (Index t = 0; t < options.steps; ++t) {
    const double eta = blast_learning_rate(options, t);
    w.step_B(eta, options.delta * error);
    error = w.residual();
    w.step_C(eta, options.delta * error);
    error = w.residual();
    w.step_D(eta, options.delta * error);
    error = w.residual();
    require<NumericalError>(std::isfinite(error),
                            "factorize_blast: the iteration diverged at step ", t,
                            " (non-finite residual)");
    if (!after_step(t, error / norm, eta)) break;
  }
}

#define STROP_INSTANTIATE(T)                                            \
  template void blast_iterate_cpu(const HostMatrix<T>&, BlastState<T>&, \
                                  const BlastFactorizeOptions&, const BlastStepCallback&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
