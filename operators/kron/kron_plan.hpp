#pragma once
// Internal: how a Kron-matmul is cut into kernel launches (which consecutive factors share
// one fused pass) and how much work space the intermediates need. Pure host arithmetic, so
// the CPU unit tests check it (tests/unit/test_kron_plan.cpp).
#include <cstddef>
#include <span>
#include <vector>

#include "strop/core/view.hpp"
#include "strop/operators/kron_matmul.hpp"

namespace strop::detail {

struct KronShape {
  Index P = 0;  // input extent of the factor (columns of G)
  Index Q = 0;  // output extent (rows of G)
};

// Factors lo..hi (0-based, G_1 is 0) applied in one launch, hi first. lo == hi is the
// one-factor sliced-multiply kernel; lo < hi the shared-memory fused kernel.
struct KronPass {
  int lo = 0;
  int hi = 0;
};

struct KronPlan {
  std::vector<KronPass> passes;  // in execution order (factors n-1 ... 0)
  std::vector<Index> extents;    // rows of the intermediate after each pass (last: Y's rows)
  int buffers = 0;               // ping-pong buffers of buffer_rows x batch elements
  Index buffer_rows = 0;
  std::size_t workspace_bytes = 0;
};

// The fused kernel keeps a chunk of every signal in shared memory, `chunks_per_block` chunks
// side by side, each padded (one element every 128 bytes against bank conflicts, an odd
// stride between chunks). These sizes are shared by the planner and the launcher.
inline constexpr int kKronMaxFused = 8;        // factors per fused pass
inline constexpr Index kKronMaxFusedDim = 32;  // P, Q of a fusable factor
inline constexpr std::size_t kKronFusedSharedBudget = 96 * 1024;

inline Index kron_padded(Index elements, std::size_t element_bytes) {
  const Index every = Index(128 / element_bytes);
  return elements + elements / every;
}
// Elements between two chunks of one block (odd, so that a warp reading one element of each
// of 32 chunks hits 32 banks).
inline Index kron_chunk_stride(Index max_len, std::size_t element_bytes) {
  const Index padded = kron_padded(max_len, element_bytes) + 1;
  return padded % 2 == 0 ? padded + 1 : padded;
}
// Shared memory of a fused block: two chunk buffers plus every factor of the group.
std::size_t kron_fused_shared_bytes(std::span<const KronShape> group, Index chunks_per_block,
                                    std::size_t element_bytes, int rq);
// Register tile along Q of the fused kernel for this element size.
int kron_fused_rq(std::size_t element_bytes);

KronPlan plan_kron(std::span<const KronShape> shapes, Index batch, Layout layout,
                   KronAlgorithm algorithm, std::size_t element_bytes);

}  // namespace strop::detail
