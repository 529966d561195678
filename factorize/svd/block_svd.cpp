#include "factorize/svd/block_svd.hpp"

#include <Eigen/SVD>
#include <cmath>

#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

// JacobiSVD is the most accurate and fastest for small blocks; BDCSVD (divide and conquer)
// wins once both sides are large.
constexpr Index kJacobiMaxSide = 48;

template <class T>
void svd_one(const T* block, Index rows, Index cols, Index rank, T* u, RealOf<T>* s, T* vh,
             double& dropped) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  const Eigen::Map<const Matrix> a(block, rows, cols);
  Eigen::Map<Matrix> U(u, rows, rank);
  Eigen::Map<Matrix> VH(vh, rank, cols);
  Eigen::Map<Eigen::Matrix<RealOf<T>, Eigen::Dynamic, 1>> S(s, rank);
  U.setZero();
  VH.setZero();
  S.setZero();
  const double total = double(a.squaredNorm());
  if (rank == 0 || total == 0) {
    dropped = total;
    return;
  }
  const unsigned options = Eigen::ComputeThinU | Eigen::ComputeThinV;
  auto take = [&](const auto& svd) {
    const Index k = std::min<Index>(rank, svd.singularValues().size());
    U.leftCols(k) = svd.matrixU().leftCols(k);
    S.head(k) = svd.singularValues().head(k);
    VH.topRows(k) = svd.matrixV().leftCols(k).adjoint();
    double tail = 0;
    for (Index i = k; i < svd.singularValues().size(); ++i)
      tail += double(svd.singularValues()(i)) * double(svd.singularValues()(i));
    dropped = tail;
  };
  if (std::min(rows, cols) <= kJacobiMaxSide) {
    take(Eigen::JacobiSVD<Matrix>(a, options));
  } else {
    take(Eigen::BDCSVD<Matrix>(a, options));
  }
}

}  // namespace

template <class T>
BlockSvd<T> block_svd(const std::vector<T>& blocks, Index count, Index rows, Index cols, Index rank,
                      Device device, Context& ctx) {
  require<ShapeError>(static_cast<Index>(blocks.size()) == count * rows * cols,
                      "block_svd: ", count, " blocks of ", rows, "x", cols, " need ",
                      count * rows * cols, " values, got ", blocks.size());
  BlockSvd<T> out;
  out.count = count;
  out.rows = rows;
  out.cols = cols;
  out.rank = rank;
  out.u.assign(static_cast<std::size_t>(count * rows * rank), T(0));
  out.s.assign(static_cast<std::size_t>(count * rank), RealOf<T>(0));
  out.vh.assign(static_cast<std::size_t>(count * rank * cols), T(0));
  out.dropped.assign(static_cast<std::size_t>(count), 0.0);
  if (device == Device::cuda) {
#if STROP_HAVE_CUDA
    block_svd_cuda(blocks, out, ctx);
    return out;
#else
    (void)ctx;
    throw DeviceError("factorize: Device::cuda requested, but strop was built without CUDA");
#endif
  }
  const T* data = blocks.data();
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) if (count > 1 && double(count * rows * cols) > 1e4)
#endif
  for (Index q = 0; q < count; ++q) {
    svd_one(data + q * rows * cols, rows, cols, rank, out.u_block(q), out.s.data() + q * rank,
            out.vh_block(q), out.dropped[static_cast<std::size_t>(q)]);
  }
  return out;
}

template <class T>
void distribute_singular_values(BlockSvd<T>& svd, double beta) {
  using Real = RealOf<T>;
  for (Index q = 0; q < svd.count; ++q) {
    for (Index t = 0; t < svd.rank; ++t) {
      const Real sigma = svd.s[static_cast<std::size_t>(q * svd.rank + t)];
      const Real left = beta == 1.0 ? Real(1) : Real(std::pow(double(sigma), 1.0 - beta));
      const Real right = beta == 1.0 ? sigma : Real(std::pow(double(sigma), beta));
      T* u = svd.u_block(q) + t * svd.rows;
      for (Index i = 0; i < svd.rows; ++i)
        u[i] *= left;
      T* vh = svd.vh_block(q);
      for (Index j = 0; j < svd.cols; ++j)
        vh[t + j * svd.rank] *= right;
    }
  }
}

#define STROP_INSTANTIATE(T)                                                                \
  template BlockSvd<T> block_svd(const std::vector<T>&, Index, Index, Index, Index, Device, \
                                 Context&);                                                 \
  template void distribute_singular_values(BlockSvd<T>&, double);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
