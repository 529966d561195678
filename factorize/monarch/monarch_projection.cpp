// Monarch projection: block-wise truncated SVD (optimal block by block, hence overall).
#include <chrono>
#include <cmath>

#include "factorize/common/checks.hpp"
#include "factorize/svd/block_svd.hpp"
#include "strop/factorize/monarch.hpp"

namespace strop {

template <class T>
MonarchFactorization<T> factorize_monarch(const HostMatrix<T>& A, Index row_blocks,
                                          Index col_blocks, Index rank,
                                          const MonarchFactorizeOptions& options, Context& ctx) {
  detail::require_finite_matrix("factorize_monarch", A);
  const BlockGrid g = detail::make_block_grid("factorize_monarch", A.rows(), A.cols(), row_blocks,
                                              col_blocks, rank);
  require<ShapeError>(rank >= 1, "factorize_monarch: rank must be >= 1, got ", rank);
  detail::require_device("factorize_monarch", options.device);

  const auto start = std::chrono::steady_clock::now();
  const Index h = g.block_height(), w = g.block_width();
  // Blocks in [k][l] order, so that the SVD factors land in Monarch's storage order as is.
  std::vector<T> blocks(static_cast<std::size_t>(A.size()));
  for (Index k = 0; k < row_blocks; ++k)
    for (Index l = 0; l < col_blocks; ++l)
      Eigen::Map<HostMatrix<T>>(blocks.data() + (k * col_blocks + l) * h * w, h, w) =
          A.block(k * h, l * w, h, w);
  detail::BlockSvd<T> svd =
      detail::block_svd(blocks, g.block_count(), h, w, rank, options.device, ctx);
  detail::distribute_singular_values(svd, 0.5);
  double dropped = 0;
  for (double d : svd.dropped)
    dropped += d;
  Monarch<T> monarch(A.rows(), A.cols(), row_blocks, col_blocks, rank, std::move(svd.u),
                     std::move(svd.vh));
  FactorReport report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.parameters = monarch.parameter_count();
  report.method = "monarch projection";
  report.bound = report.lower_bound = std::sqrt(dropped) / std::max(double(A.norm()), 1e-300);
  if (options.compute_error) report.relative_error = detail::relative_error(A, monarch);
  return {std::move(monarch), report};
}

#define STROP_INSTANTIATE(T)                                                                    \
  template MonarchFactorization<T> factorize_monarch(const HostMatrix<T>&, Index, Index, Index, \
                                                     const MonarchFactorizeOptions&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
