// Monarch projection: block-wise truncated SVD (optimal block by block, hence overall).
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>

#include "factorize/common/checks.hpp"
#include "factorize/common/scaling.hpp"
#include "factorize/svd/block_svd.hpp"
#include "operators/blr/blr_support.hpp"
#include "strop/factorize/monarch.hpp"

namespace strop {

template <class T>
MonarchFactorization<T> factorize_monarch(const HostMatrix<T>& A, Index row_blocks,
                                          Index col_blocks, Index rank,
                                          const MonarchFactorizeOptions& options, Context& ctx) {
  // On the GPU the kernel reads every entry and reports NaN/Inf itself: the host scan (a
  // fifth of the whole projection at 4096 x 4096) runs only to name the entry, or when the
  // matrix must be scaled.
  const bool checked_on_device = options.device == Device::cuda;
  RealOf<T> largest = 1;  // no scaling, unless the host scan says otherwise
  if (checked_on_device) {
    detail::require_nonempty("factorize_monarch", A);
  } else {
    largest = detail::require_finite_matrix("factorize_monarch", A);
  }
  const BlockGrid g = detail::make_block_grid("factorize_monarch", A.rows(), A.cols(), row_blocks,
                                              col_blocks, rank);
  require<ShapeError>(rank >= 1, "factorize_monarch: rank must be >= 1, got ", rank);
  detail::require_device("factorize_monarch", options.device);
  const detail::DeviceScope device_scope(options.device == Device::cuda);

  const auto start = std::chrono::steady_clock::now();
  const Index h = g.block_height(), w = g.block_width();
  // Blocks in [k][l] order, so that the SVD factors land in Monarch's storage order as is.
  auto block_origin = [&](Index kl) {
    return std::pair<Index, Index>{(kl / col_blocks) * h, (kl % col_blocks) * w};
  };
  std::optional<detail::BlockSvd<T>> svd;
  if (options.device == Device::cuda) {
    // The GPU reads the blocks in place: no host gather.
    detail::StridedBlocks<T> in_place{A.data(), A.rows(), A.cols(), {}, {}, h, w, 1, 1};
    for (Index kl = 0; kl < g.block_count(); ++kl) {
      const auto [r0, c0] = block_origin(kl);
      in_place.row0.push_back(r0);
      in_place.col0.push_back(c0);
    }
    double covered = 0;
    try {
      svd = detail::block_svd_in_place(in_place, rank, covered, ctx);
    } catch (const NumericalError&) {
      detail::require_finite_matrix("factorize_monarch", A);  // names the entry
      throw;
    }
    // Squares of extreme entries over- or underflowed on the device: redone from a scaled
    // copy below. cuSOLVER (blocks too large to read in place) does not check NaN/Inf.
    if (!svd || !detail::squares_within_window<T>(covered, A.size())) {
      svd.reset();
      largest = detail::require_finite_matrix("factorize_monarch", A);
    }
  }
  const detail::UnitScaled<T> scaled(A, largest);
  const HostMatrix<T>& W = scaled.matrix();
  if (!svd) {
    std::vector<T> blocks(static_cast<std::size_t>(W.size()));
    detail::parallel_for(g.block_count(), double(W.size()), [&](Index kl) {
      const auto [r0, c0] = block_origin(kl);
      Eigen::Map<HostMatrix<T>>(blocks.data() + kl * h * w, h, w) = W.block(r0, c0, h, w);
    });
    svd = detail::block_svd(blocks, g.block_count(), h, w, rank, options.device, ctx);
  }
  detail::distribute_singular_values(*svd, 0.5);
  double dropped = 0;
  for (double d : svd->dropped)
    dropped += d;
  const int e = scaled.exponent();
  detail::scale_by_power_of_two(svd->u.data(), Index(svd->u.size()),
                                detail::exponent_share(e, 0, 2));
  detail::scale_by_power_of_two(svd->vh.data(), Index(svd->vh.size()),
                                detail::exponent_share(e, 1, 2));
  Monarch<T> monarch(A.rows(), A.cols(), row_blocks, col_blocks, rank, std::move(svd->u),
                     std::move(svd->vh));
  FactorReport report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.parameters = monarch.parameter_count();
  report.method = "monarch projection";
  report.bound = report.lower_bound = std::sqrt(dropped) / std::max(double(W.norm()), 1e-300);
  if (options.compute_error) report.relative_error = detail::relative_error(A, monarch);
  return {std::move(monarch), report};
}

#define STROP_INSTANTIATE(T)                                                                    \
  template MonarchFactorization<T> factorize_monarch(const HostMatrix<T>&, Index, Index, Index, \
                                                     const MonarchFactorizeOptions&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
