// The Kron-matmul engine's entry: validation, the plan, the work space, and the sequence of
// launches (operators/kron/kron_kernels.cu) or the shuffle baseline (kron_shuffle_cublas.cpp).
#include <limits>

#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/kron_matmul.hpp"

namespace strop {
namespace {

thread_local KronAlgorithm current_algorithm = KronAlgorithm::Auto;

template <class T>
std::vector<detail::KronShape> validated_shapes(std::span<const KronFactorRef<T>> factors) {
  require<ShapeError>(!factors.empty(), "kron_matmul: needs at least one factor");
  std::vector<detail::KronShape> shapes;
  Index in = 1, out = 1;
  const Index limit = Index(1) << 40;
  for (std::size_t f = 0; f < factors.size(); ++f) {
    const KronFactorRef<T>& g = factors[f];
    require<ShapeError>(g.P >= 1 && g.Q >= 1, "kron_matmul: factor ", f, " is ", g.Q, "x", g.P,
                        "; factors need at least one row and one column");
    require<ShapeError>(g.data != nullptr || g.P == g.Q, "kron_matmul: factor ", f,
                        " has no values but is not square (", g.Q, "x", g.P,
                        "); only the identity may omit its values");
    in *= g.P;
    out *= g.Q;
    require<ShapeError>(in <= limit && out <= limit,
                        "kron_matmul: the product of the factors "
                        "exceeds 2^40 rows or columns at factor ",
                        f);
    shapes.push_back({g.P, g.Q});
  }
  return shapes;
}

template <class T>
KronAlgorithm resolved(KronAlgorithm algorithm, std::span<const KronFactorRef<T>> factors) {
  if (algorithm != KronAlgorithm::Auto) return algorithm;
  // Very large factors are plain GEMMs; cuBLAS's tuned tiles (and tensor cores for double)
  // beat our SIMT tile there even with the transposes.
  for (const auto& g : factors)
    if (std::min(g.P, g.Q) < 256) return KronAlgorithm::Auto;
  return KronAlgorithm::Shuffle;
}

}  // namespace

std::string_view to_string(KronAlgorithm algorithm) {
  switch (algorithm) {
    case KronAlgorithm::Auto:
      return "auto";
    case KronAlgorithm::Fused:
      return "fused";
    case KronAlgorithm::Sliced:
      return "sliced";
    case KronAlgorithm::Shuffle:
      return "shuffle";
  }
  return "?";
}

KronAlgorithm kron_algorithm() {
  return current_algorithm;
}
void set_kron_algorithm(KronAlgorithm algorithm) {
  current_algorithm = algorithm;
}

template <class T>
std::size_t kron_matmul_workspace_bytes(std::span<const KronFactorRef<T>> factors, Index batch,
                                        Layout layout, KronAlgorithm algorithm) {
  require<ShapeError>(batch >= 0, "kron_matmul_workspace_bytes: negative batch ", batch);
  const auto shapes = validated_shapes(factors);
  return detail::plan_kron(shapes, batch, layout, resolved(algorithm, factors), sizeof(T))
      .workspace_bytes;
}

template <class T>
void kron_matmul(std::span<const KronFactorRef<T>> factors, ConstView<T> X, MatrixView<T> Y,
                 T alpha, T beta, Context& ctx, void* workspace, std::size_t workspace_bytes,
                 KronAlgorithm algorithm) {
  const auto shapes = validated_shapes(factors);
  Index in = 1, out = 1;
  for (const auto& s : shapes) {
    in *= s.P;
    out *= s.Q;
  }
  require<ShapeError>(X.rows == in && Y.rows == out && X.cols == Y.cols, "kron_matmul: the ", out,
                      "x", in, " product maps ", in, " x B to ", out, " x B, got X ", X.rows, "x",
                      X.cols, " and Y ", Y.rows, "x", Y.cols);
  require<DeviceError>(X.space == MemorySpace::Device && Y.space == MemorySpace::Device,
                       "kron_matmul: X and Y must be device views (to_device)");
  require<ShapeError>(!may_overlap(X, ConstView<T>(Y)), "kron_matmul: Y overlaps X");
  require<NumericalError>(is_finite(alpha) && is_finite(beta),
                          "kron_matmul: alpha and beta must be finite");
  if (Y.rows == 0 || Y.cols == 0) return;

  const Layout layout = layout_of(Y);
  algorithm = resolved(algorithm, factors);
  const detail::KronPlan plan = detail::plan_kron(shapes, X.cols, layout, algorithm, sizeof(T));
  Buffer<char> owned;
  if (workspace == nullptr && plan.workspace_bytes > 0) {
    owned = Buffer<char>(Index(plan.workspace_bytes), MemorySpace::Device, ctx);
    workspace = owned.data();
    workspace_bytes = plan.workspace_bytes;
  }
  require<ShapeError>(workspace_bytes >= plan.workspace_bytes, "kron_matmul: work space of ",
                      workspace_bytes, " bytes, ", plan.workspace_bytes, " needed (",
                      to_string(algorithm), ", batch ", X.cols, ")");

  if (algorithm == KronAlgorithm::Shuffle)
    return detail::kron_shuffle(factors, X, Y, alpha, beta, workspace, workspace_bytes, ctx);

  // Ping-pong intermediates in Y's layout, packed, 256-byte aligned.
  T* buffers[2] = {nullptr, nullptr};
  {
    auto base = (reinterpret_cast<std::uintptr_t>(workspace) + 255) / 256 * 256;
    for (int i = 0; i < plan.buffers; ++i) {
      buffers[i] = reinterpret_cast<T*>(base);
      base += (sizeof(T) * std::size_t(plan.buffer_rows * X.cols) + 255) / 256 * 256;
    }
  }
  ConstView<T> current = X;
  const int m = int(plan.passes.size());
  for (int i = 0; i < m; ++i) {
    const detail::KronPass pass = plan.passes[i];
    const bool last = i + 1 == m;
    MatrixView<T> next =
        last ? Y : make_view(buffers[i % 2], plan.extents[i], X.cols, layout, MemorySpace::Device);
    if (pass.lo == pass.hi) {
      detail::kron_step(factors[pass.hi], current, next, alpha, beta, last, ctx);
    } else {
      detail::kron_fused(factors.subspan(pass.lo, pass.hi - pass.lo + 1), current, next, alpha,
                         beta, last, ctx);
    }
    current = next;
  }
}

#if !STROP_HAVE_CUDA
namespace detail {
namespace {
[[noreturn]] void no_cuda() {
  throw DeviceError("kron_matmul: GPU application requested but strop was built without CUDA");
}
}  // namespace
template <class T>
void kron_step(const KronFactorRef<T>&, ConstView<T>, MatrixView<T>, T, T, bool, Context&) {
  no_cuda();
}
template <class T>
void kron_fused(std::span<const KronFactorRef<T>>, ConstView<T>, MatrixView<T>, T, T, bool,
                Context&) {
  no_cuda();
}
template <class T>
void kron_shuffle(std::span<const KronFactorRef<T>>, ConstView<T>, MatrixView<T>, T, T, void*,
                  std::size_t, Context&) {
  no_cuda();
}
}  // namespace detail
#endif

#define STROP_INSTANTIATE(T)                                                                      \
  template std::size_t kron_matmul_workspace_bytes(std::span<const KronFactorRef<T>>, Index,      \
                                                   Layout, KronAlgorithm);                        \
  template void kron_matmul(std::span<const KronFactorRef<T>>, ConstView<T>, MatrixView<T>, T, T, \
                            Context&, void*, std::size_t, KronAlgorithm);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
