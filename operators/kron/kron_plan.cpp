// Which factors share a launch, and the work space that follows.
//
// A pass over device memory costs reading the intermediate and writing the next one, so for
// small factors (arithmetic intensity about P flops per element) the number of passes, not
// the arithmetic, sets the time. FastKron's fusion applies several consecutive factors to a
// chunk of prod(P_f) contiguous features held in shared memory; the chunk must fit (two
// buffers and the factors). Auto fuses only on batch-first (ColMajor) data, where the chunks
// are contiguous in memory, and only factors up to 32 in float, 16 in wider types: on an
// H100 (bench/NOTES-kron.md) fusing 32^4 and 32^5 won in float and lost in double. A chunk
// may be as large as shared memory allows with one chunk per block (8^4, 16^3, 32^2 in
// float), so 8^6, 8^8, 16^5 and 16^6 take two passes.
#include "operators/kron/kron_plan.hpp"

#include <algorithm>

namespace strop::detail {

int kron_fused_rq(std::size_t element_bytes) {
  return element_bytes == 4 ? 8 : element_bytes == 16 ? 2 : 4;
}

std::size_t kron_fused_shared_bytes(std::span<const KronShape> group, Index chunks_per_block,
                                    std::size_t element_bytes, int rq) {
  Index len = 1, max_len = 1;
  for (const KronShape& s : group)
    len *= s.P;
  max_len = len;
  Index g_elems = 0;
  // Applied last factor first, as in the plan.
  for (auto it = group.rbegin(); it != group.rend(); ++it) {
    len = len / it->P * it->Q;
    max_len = std::max(max_len, len);
    g_elems += it->P * ((it->Q + rq - 1) / rq * rq);
  }
  const Index stride = kron_chunk_stride(max_len, element_bytes);
  // + 64: the buffers are rounded up to 16 bytes.
  return element_bytes * std::size_t(2 * chunks_per_block * stride + g_elems) + 64;
}

namespace {
bool fusable(const KronShape& s, Index max_dim) {
  return s.P <= max_dim && s.Q <= max_dim && s.P >= 1 && s.Q >= 1;
}
}  // namespace

KronPlan plan_kron(std::span<const KronShape> shapes, Index batch, Layout layout,
                   KronAlgorithm algorithm, std::size_t element_bytes) {
  KronPlan plan;
  const int n = int(shapes.size());
  Index K = 1;
  for (const KronShape& s : shapes)
    K *= s.P;
  Index largest = K;

  if (algorithm == KronAlgorithm::Shuffle) {
    // One pass per factor; three buffers (ping, pong, the GEMM/transpose temporary) of the
    // largest extent, plus the factors packed column-major for cuBLAS.
    Index g_elems = 0;
    for (int f = n - 1; f >= 0; --f) {
      plan.passes.push_back({f, f});
      K = K / shapes[f].P * shapes[f].Q;
      plan.extents.push_back(K);
      largest = std::max(largest, K);
      g_elems += shapes[f].P * shapes[f].Q;
    }
    plan.buffers = 3;
    plan.buffer_rows = largest;
    plan.workspace_bytes =
        element_bytes * std::size_t(3 * largest * batch + g_elems) + 256 * std::size_t(4 + n);
    return plan;
  }

  // Auto: small factors on batch-first data; up to 32 in float, 16 in wider types (the
  // H100 run of bench/NOTES-kron.md: fusing 32^4 and 32^5 won in float, lost in double).
  const Index auto_dim = element_bytes == 4 ? kKronMaxFusedDim : 16;
  const Index max_dim = algorithm == KronAlgorithm::Sliced  ? 0
                        : algorithm == KronAlgorithm::Fused ? kKronMaxFusedDim
                        : layout == Layout::ColMajor        ? auto_dim
                                                            : 0;
  const int rq = kron_fused_rq(element_bytes);
  int hi = n - 1;
  while (hi >= 0) {
    int lo = hi;
    if (fusable(shapes[hi], max_dim)) {
      while (lo - 1 >= 0 && hi - (lo - 1) + 1 <= kKronMaxFused &&
             fusable(shapes[lo - 1], max_dim) &&
             kron_fused_shared_bytes(shapes.subspan(lo - 1, hi - lo + 2), 1, element_bytes, rq) <=
                 kKronFusedSharedBudget)
        --lo;
    }
    plan.passes.push_back({lo, hi});
    for (int f = hi; f >= lo; --f)
      K = K / shapes[f].P * shapes[f].Q;
    plan.extents.push_back(K);
    hi = lo - 1;
  }
  const int m = int(plan.passes.size());
  plan.buffers = std::min(m - 1, 2);
  for (int i = 0; i + 1 < m; ++i)
    plan.buffer_rows = std::max(plan.buffer_rows, plan.extents[i]);
  plan.workspace_bytes =
      element_bytes * std::size_t(plan.buffers * plan.buffer_rows * batch) + 256 * 3;
  return plan;
}

}  // namespace strop::detail
