#include "factorize/svd/block_svd.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>

#include "factorize/svd/jacobi_svd.hpp"
#include "factorize/svd/leading_svd.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

// JacobiSVD for tiny blocks (and complex ones, see truncated_svd_cpu); BDCSVD (divide and
// conquer) is faster from 16 on (2.2x at 32, 2.6x at 64 on an EPYC core). When few triples of a
// larger block are kept, leading_svd avoids the full SVD (about 10x faster for rank 1 of 64 x 64,
// the blocks of a 4096 butterfly's first split and of a b = 64 Monarch).
constexpr Index kJacobiMaxSide = 16;
constexpr Index kLeadingMinSide = 16;
bool use_leading_svd(Index rows, Index cols, Index rank) {
  const Index side = std::min(rows, cols);
  return side >= kLeadingMinSide && 4 * rank <= side;
}

}  // namespace

template <class T>
double truncated_svd_cpu(const T* block, Index rows, Index cols, Index rank, T* u, RealOf<T>* s,
                         T* vh) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<RealOf<T>, Eigen::Dynamic, 1>;
  const Eigen::Map<const Matrix> a(block, rows, cols);
  Eigen::Map<Matrix> U(u, rows, rank);
  Eigen::Map<Matrix> VH(vh, rank, cols);
  Eigen::Map<Vector> S(s, rank);
  // Every SVD runs in double precision: float blocks get double's accuracy (a float Gram
  // loses the directions whose sigma^2 is below float rounding, and its truncation error
  // was up to 20x the optimum), and the build instantiates Eigen's two SVDs and leading_svd
  // for two types instead of four (this file alone took ~5 of CI's 25 minutes).
  using Wide = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;
  if constexpr (!std::is_same_v<T, Wide>) {
    using WideMatrix = Eigen::Matrix<Wide, Eigen::Dynamic, Eigen::Dynamic>;
    const WideMatrix wide = a.template cast<Wide>();
    WideMatrix wide_u(rows, rank), wide_vh(rank, cols);
    Eigen::VectorXd wide_s(rank);
    const double dropped = truncated_svd_cpu(wide.data(), rows, cols, rank, wide_u.data(),
                                             wide_s.data(), wide_vh.data());
    U = wide_u.template cast<T>();
    S = wide_s.template cast<RealOf<T>>();
    VH = wide_vh.template cast<T>();
    return dropped;
  } else {
    U.setZero();
    VH.setZero();
    S.setZero();
    const double total = a.squaredNorm();
    if (rank == 0 || total == 0) return total;
    if (use_leading_svd(rows, cols, rank)) {
      if (const auto dropped = leading_svd(block, rows, cols, rank, u, s, vh)) return *dropped;
    }
    const unsigned options = Eigen::ComputeThinU | Eigen::ComputeThinV;
    auto take = [&](const auto& svd) {
      const Index k = std::min<Index>(rank, svd.singularValues().size());
      U.leftCols(k) = svd.matrixU().leftCols(k);
      S.head(k) = svd.singularValues().head(k);
      VH.topRows(k) = svd.matrixV().leftCols(k).adjoint();
      return svd.singularValues().tail(svd.singularValues().size() - k).squaredNorm();
    };
    // Eigen 3.4's BDCSVD returns NaNs (and indexes past an array in its deflation) for some
    // complex blocks with repeated singular values, e.g. rank-one blocks of +-1 of side 33
    // (test complex_blocks_with_repeated_singular_values): complex blocks take JacobiSVD.
    if constexpr (!is_complex_v<T>) {
      if (std::min(rows, cols) > kJacobiMaxSide) return take(Eigen::BDCSVD<Matrix>(a, options));
    }
    return take(Eigen::JacobiSVD<Matrix>(a, options));
  }
}

template <class T>
BlockSvd<T> empty_block_svd(Index count, Index rows, Index cols, Index rank) {
  BlockSvd<T> out;
  out.count = count;
  out.rows = rows;
  out.cols = cols;
  out.rank = rank;
  out.u.assign(static_cast<std::size_t>(count * rows * rank), T(0));
  out.s.assign(static_cast<std::size_t>(count * rank), RealOf<T>(0));
  out.vh.assign(static_cast<std::size_t>(count * rank * cols), T(0));
  out.dropped.assign(static_cast<std::size_t>(count), 0.0);
  return out;
}

template <class T>
std::optional<BlockSvd<T>> block_svd_in_place(const StridedBlocks<T>& blocks, Index rank,
                                              double& covered, Context& ctx) {
#if STROP_HAVE_CUDA
  require<DeviceError>(cuda_available(), "factorize: Device::cuda requested, no CUDA device");
  if (!jacobi_svd_fits(blocks.rows, blocks.cols, sizeof(T))) return std::nullopt;
  const Index count = static_cast<Index>(blocks.row0.size());
  BlockSvd<T> out = empty_block_svd<T>(count, blocks.rows, blocks.cols, rank);
  covered = jacobi_block_svd_from_host(blocks, out, ctx);
  return out;
#else
  (void)blocks;
  (void)rank;
  (void)covered;
  (void)ctx;
  throw DeviceError("factorize: Device::cuda requested, but strop was built without CUDA");
#endif
}

template <class T>
BlockSvd<T> block_svd(const std::vector<T>& blocks, Index count, Index rows, Index cols, Index rank,
                      Device device, Context& ctx) {
  require<ShapeError>(static_cast<Index>(blocks.size()) == count * rows * cols,
                      "block_svd: ", count, " blocks of ", rows, "x", cols, " need ",
                      count * rows * cols, " values, got ", blocks.size());
  BlockSvd<T> out = empty_block_svd<T>(count, rows, cols, rank);
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
  // Tiny blocks are handed out 16 at a time to save scheduling; large ones one at a time, or
  // 16 blocks of 1024 x 1024 (a b = 4 Monarch of 4096) would all go to one thread.
  const int chunk =
      static_cast<int>(std::clamp<Index>(4096 / std::max<Index>(rows * cols, 1), 1, 16));
  const bool threaded = count > 1 && double(count * rows * cols) > 1e4;
#pragma omp parallel for schedule(dynamic, chunk) if (threaded)
#endif
  for (Index q = 0; q < count; ++q) {
    out.dropped[static_cast<std::size_t>(q)] =
        truncated_svd_cpu(data + q * rows * cols, rows, cols, rank, out.u_block(q),
                          out.s.data() + q * rank, out.vh_block(q));
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

#define STROP_INSTANTIATE(T)                                                                      \
  template double truncated_svd_cpu(const T*, Index, Index, Index, T*, RealOf<T>*, T*);           \
  template BlockSvd<T> block_svd(const std::vector<T>&, Index, Index, Index, Index, Device,       \
                                 Context&);                                                       \
  template void distribute_singular_values(BlockSvd<T>&, double);                                 \
  template BlockSvd<T> empty_block_svd<T>(Index, Index, Index, Index);                            \
  template std::optional<BlockSvd<T>> block_svd_in_place(const StridedBlocks<T>&, Index, double&, \
                                                         Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
