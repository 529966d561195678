// Which factors share a launch, and the work space that follows.
//
// A pass over device memory costs reading the intermediate and writing the next one, so for
// small factors (arithmetic intensity about P flops per element) the number of passes, not
// the arithmetic, sets the time. FastKron's fusion applies several consecutive factors to a
// chunk of prod(P_f) contiguous features held in shared memory; the chunk must fit (two
// buffers and the factors). A chunk may be as large as shared memory allows with one chunk
// per block (8^4, 16^3, 32^2 in float), so 8^6 and 8^8 take two fused passes.
//
// The other kind of pass is one strided-batched cuBLAS GEMM (the permuted store in the
// output strides, no transposes: one pass over memory at cuBLAS's rate, tensor cores for
// double and 16-bit data), on one factor or on the Kronecker product of a run of small
// factors materialised (8 x 8 becomes one 64 x 64 factor; blocks of 256 x 256 values).
// Auto picks among these by a time model (plan_auto_passes); fused passes only on
// batch-first (ColMajor) data, where the chunks are contiguous in memory.
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

Index kron_square_chunks_per_block(std::span<const KronShape> group, Index K_in,
                                   std::size_t element_bytes, bool complex_values) {
  if (complex_values || (element_bytes != 4 && element_bytes != 8) || group.empty()) return 0;
  const Index P = group.front().P;
  if (P < 2 || P > 32 || (P & (P - 1)) != 0) return 0;
  Index chunk = 1;
  for (const KronShape& s : group) {
    if (s.P != P || s.Q != P) return 0;
    chunk *= P;
    if (chunk > kKronSquareMaxChunk) return 0;
  }
  const Index vector = Index(16 / element_bytes);
  const Index least = kKronSquareThreads * kron_square_accumulators(element_bytes);
  const Index per_block = std::max(vector, least / std::min(chunk, least));
  return K_in % (chunk * per_block) == 0 ? per_block : 0;
}

KronSquareLayout kron_square_layout(Index P, int count, Index chunks_per_block,
                                    std::size_t element_bytes, std::size_t shared_per_block) {
  Index chunk = 1;
  for (int i = 0; i < count; ++i)
    chunk *= P;
  const Index vector = Index(16 / element_bytes);
  auto round16 = [&](Index v) { return int((v + vector - 1) / vector * vector); };
  KronSquareLayout l;
  l.ld = int(kron_padded(chunk, element_bytes) + 1);
  l.buffer_offset = round16(Index(count) * P * P);
  l.buffer_elements = round16(Index(l.ld) * chunks_per_block);
  auto bytes = [&](int buffers) {
    return element_bytes * std::size_t(l.buffer_offset + buffers * l.buffer_elements);
  };
  const bool roles = P <= kKronSquareMoversMaxP && bytes(kKronSquareMaxBuffers) <= shared_per_block;
  l.movers = roles ? kKronSquareMovers : 0;
  l.bytes = bytes(roles ? kKronSquareMaxBuffers : 2);
  return l;
}

namespace {

// Whether `run` is `count` factors of dim x dim and K_in whole tiles of `tile_features`: what
// the 16-bit fused kernels take.
bool square_run_on_tiles(std::span<const KronShape> run, std::size_t count, Index dim, Index K_in,
                         Index tile_features) {
  if (run.size() != count) return false;
  for (const KronShape& s : run)
    if (s.P != dim || s.Q != dim) return false;
  return K_in % tile_features == 0;
}

}  // namespace

bool kron_pair16_fits(std::span<const KronShape> run, Index K_in) {
  return square_run_on_tiles(run, 2, kKronPair16Dim, K_in, kKronPair16TileFeatures);
}

bool kron_pair16_clustered(Index K_in) {
  return K_in / kKronPair16TileFeatures % 2 == 0;
}

bool kron_triple16_fits(std::span<const KronShape> run, Index K_in) {
  return square_run_on_tiles(run, 3, kKronTriple16Dim, K_in, kKronTriple16TileFeatures);
}

int kron_triple16_log_cluster(Index K_in) {
  const Index tiles = K_in / kKronTriple16TileFeatures;
  int l = kKronTriple16MaxLogCluster;
  while (l > 0 && tiles % (Index(1) << l) != 0)
    --l;
  return l;
}

namespace {

bool fusable(const KronShape& s, Index max_dim) {
  return s.P <= max_dim && s.Q <= max_dim && s.P >= 1 && s.Q >= 1;
}

// A time model of one pass, fitted to the H100 runs of bench/NOTES-kron.md (only the
// ratios between the options matter):
//   GEMM pass   max(memory, flops at the GEMM rate) times an efficiency factor that grows
//               for small inner sizes P (cuBLAS's tiles waste work on k = 8), plus about
//               10 us of launches (cuBLAS, and the merge kernel for a merged run);
//   fused pass  1.2 x memory + the run's multiply-adds at our fused kernel's rate;
//   square pass 1.1 x memory + its multiply-adds at the in-place kernel's rate; 1.0 x memory
//               in its two-role form, whose stores overlap the steps (H100, session 56: float
//               8^6 as two square passes 1.96 ms against 2.16 with a GEMM for 8^2);
//   one-factor  1.1 x memory + its multiply-adds at our one-factor kernel's rate, plus
//               about 15 us (measured on small problems);
//   16-bit pair 1.25 x memory (two 32 x 32 factors on tensor cores, kron_fused_pair16.cu),
//               1.75 x where its tiles are not clustered (H100, session 23);
//   16-bit triple 1.7 x memory (three 16 x 16 factors, kron_fused_triple16.cu; H100, session
//               57: half 16^5 as a triple and a GEMM 3.86 ms, 4.78 as three GEMMs; 16^6 on 16
//               signals 1.34 ms as two triples, 1.17 as three GEMMs), 1.8 x unclustered.
struct PassCost {
  double bandwidth = 3e12;  // bytes/s
  std::size_t element_bytes = 4;
  double gemm_rate = 0;    // multiply-adds per second: cuBLAS
  double fused_rate = 0;   // our fused kernel
  double sliced_rate = 0;  // our one-factor kernel
  double square_rate = 0;  // our in-place kernel for equal square factors (real types)

  double memory(Index K_in, Index K_out, Index batch) const {
    return double(element_bytes) * double(K_in + K_out) * double(batch) / bandwidth;
  }
  double gemm(double memory, double macs, Index P) const {
    const double small_k = 8.0 / double(std::max<Index>(P, 1));
    const double efficiency = (element_bytes == 4 ? 1.35 : 1.05) + 1.5 * small_k * small_k;
    return efficiency * std::max(memory, macs / gemm_rate) + 10e-6;
  }
  double fused(double memory, double macs) const { return 1.2 * memory + macs / fused_rate + 4e-6; }
  double square(double memory, double macs, bool roles) const {
    return (roles ? 1.0 : 1.1) * memory + macs / square_rate + 4e-6;
  }
  // The 16-bit pair kernel: bound by memory (its tensor-core work is a few percent of it).
  double pair16(double memory, bool clustered) const {
    return (clustered ? 1.25 : 1.75) * memory + 4e-6;
  }
  // The 16-bit triple kernel: bound by memory and by its latency (one warp per chunk).
  double triple16(double memory, int log_cluster) const {
    return (log_cluster >= 1 ? 1.7 : 1.8) * memory + 4e-6;
  }
  double sliced(double memory, double macs) const {
    return 1.1 * memory + macs / sliced_rate + 15e-6;
  }
};

PassCost pass_cost(std::size_t element_bytes, bool complex_values) {
  PassCost c;
  c.element_bytes = element_bytes;
  // A complex multiply-add is four real ones.
  const double complex_factor = complex_values ? 0.25 : 1.0;
  if (element_bytes == 2) {
    c.gemm_rate = 300e12;  // tensor cores, fp32 accumulation
  } else if (element_bytes == 4 || (complex_values && element_bytes == 8)) {
    c.gemm_rate = 25e12 * complex_factor;  // SGEMM (no TF32), CGEMM
    c.fused_rate = 5.2e12 * complex_factor;
    c.sliced_rate = 7.6e12 * complex_factor;
    c.square_rate = 20e12;
  } else {
    c.gemm_rate = 28e12 * complex_factor;  // DGEMM (FP64 tensor cores), ZGEMM
    c.fused_rate = 3e12 * complex_factor;
    c.sliced_rate = 11e12 * complex_factor;
    c.square_rate = 10e12;
  }
  return c;
}

}  // namespace

// The cheapest sequence of passes by the time model: at each step, a run of factors (last
// first) is either one GEMM on their Kronecker product materialised (merging small factors
// into a block of up to kron_max_merged_elements cuts passes at the price of flops), a fused
// pass of our kernel (batch-first data, factors up to 32 that fit in shared memory), or
// one factor through our one-factor kernel (16-bit data: GEMMs, and the tensor-core passes for
// a pair of 32 x 32 factors and a triple of 16 x 16 factors). Dynamic programming over the factor
// positions.
std::vector<KronPass> plan_auto_passes(std::span<const KronShape> shapes, Index batch,
                                       Layout layout, std::size_t element_bytes,
                                       bool complex_values, std::size_t shared_per_block) {
  const int n = int(shapes.size());
  const PassCost cost = pass_cost(element_bytes, complex_values);
  const bool reduced = element_bytes == 2;
  const int rq = kron_fused_rq(element_bytes);
  // K before factor f is applied: its own and earlier inputs, later factors' outputs.
  std::vector<Index> K_before(n);
  for (int f = 0; f < n; ++f) {
    Index K = 1;
    for (int g = 0; g < n; ++g)
      K *= g <= f ? shapes[g].P : shapes[g].Q;
    K_before[f] = K;
  }
  // best[h + 1]: the cheapest plan for factors 0..h (what remains with h the next one).
  std::vector<double> best(n + 1, 1e300);
  std::vector<KronPass> choice(n + 1);
  best[0] = 0;
  for (int hi = 0; hi < n; ++hi) {
    Index P = 1, Q = 1, macs_chain = 0;
    bool all_fusable = true;
    for (int lo = hi; lo >= 0 && hi - lo < kKronMaxFused; --lo) {
      P *= shapes[lo].P;
      Q *= shapes[lo].Q;
      all_fusable = all_fusable && fusable(shapes[lo], kKronMaxFusedDim);
      const Index K_in = K_before[hi];
      const Index K_out = K_in / P * Q;
      // Multiply-adds of the run applied factor by factor (the fused kernel's work).
      {
        Index K = K_in;
        macs_chain = 0;
        for (int f = hi; f >= lo; --f) {
          macs_chain += K / shapes[f].P * shapes[f].Q * shapes[f].P;
          K = K / shapes[f].P * shapes[f].Q;
        }
      }
      const double memory = cost.memory(K_in, K_out, batch);
      auto consider = [&](double t, KronPassKind kind) {
        if (best[lo] + t < best[hi + 1]) {
          best[hi + 1] = best[lo] + t;
          choice[hi + 1] = {lo, hi, kind};
        }
      };
      // One factor by one GEMM is always an option (strided_batched_gemm's sizes are 64-bit),
      // so every factor ends some pass, on every path.
      if (lo == hi || P * Q <= kron_max_merged_elements(element_bytes, all_fusable))
        consider(cost.gemm(memory, double(K_in) * double(Q) * double(batch), P),
                 KronPassKind::Gemm);
      const std::span<const KronShape> run = shapes.subspan(lo, hi - lo + 1);
      if (reduced) {
        if (layout == Layout::ColMajor && kron_pair16_fits(run, K_in) &&
            kKronPair16SharedBytes <= shared_per_block)
          consider(cost.pair16(memory, kron_pair16_clustered(K_in)), KronPassKind::Fused);
        if (layout == Layout::ColMajor && kron_triple16_fits(run, K_in) &&
            kKronTriple16SharedBytes <= shared_per_block)
          consider(cost.triple16(memory, kron_triple16_log_cluster(K_in)), KronPassKind::Fused);
        continue;
      }
      const double kernel_macs = double(macs_chain) * double(batch);
      if (lo == hi) consider(cost.sliced(memory, kernel_macs), KronPassKind::Sliced);
      // Where the square kernel's blocks do not fit the device, the launcher hands the run to
      // the general fused kernel, priced below.
      if (layout == Layout::ColMajor) {
        const Index tl = kron_square_chunks_per_block(run, K_in, element_bytes, complex_values);
        if (tl > 0) {
          const KronSquareLayout square = kron_square_layout(run.front().P, int(run.size()), tl,
                                                             element_bytes, shared_per_block);
          if (square.bytes <= shared_per_block)
            consider(cost.square(memory, kernel_macs, square.movers > 0), KronPassKind::Fused);
        }
      }
      if (lo < hi && layout == Layout::ColMajor && all_fusable &&
          kron_fused_shared_bytes(run, 1, element_bytes, rq) <= kKronFusedSharedBudget)
        consider(cost.fused(memory, kernel_macs), KronPassKind::Fused);
    }
  }
  std::vector<KronPass> passes;
  for (int h = n; h > 0; h = choice[h].lo)
    passes.push_back(choice[h]);
  return passes;  // execution order: the last factors first
}

KronPlan plan_kron(std::span<const KronShape> shapes, Index batch, Layout layout,
                   KronAlgorithm algorithm, std::size_t element_bytes, bool complex_values,
                   std::size_t shared_per_block) {
  KronPlan plan;
  const int n = int(shapes.size());
  Index K = 1;
  for (const KronShape& s : shapes)
    K *= s.P;
  const Index K_in = K;
  Index largest = K;
  Index g_elems = 0;
  for (const KronShape& s : shapes)
    g_elems += s.P * s.Q;

  if (algorithm == KronAlgorithm::Shuffle && element_bytes != 2) {
    // (16-bit data has no shuffle path: it takes Auto's plan below.) One pass per factor; three
    // buffers (ping, pong, the GEMM/transpose temporary) of the largest extent, plus the factors
    // packed column-major for cuBLAS.
    for (int f = n - 1; f >= 0; --f) {
      plan.passes.push_back({f, f, KronPassKind::Gemm});
      K = K / shapes[f].P * shapes[f].Q;
      plan.extents.push_back(K);
      largest = std::max(largest, K);
    }
    plan.buffers = 3;
    plan.buffer_rows = largest;
    plan.factor_elements = g_elems;
    plan.workspace_bytes =
        element_bytes * std::size_t(3 * largest * batch + g_elems) + 256 * std::size_t(4 + n);
    return plan;
  }

  // 16-bit data: Auto's plan unless one GEMM per factor is asked for.
  if (algorithm == KronAlgorithm::Auto ||
      (element_bytes == 2 && algorithm != KronAlgorithm::Gemm)) {
    plan.passes =
        plan_auto_passes(shapes, batch, layout, element_bytes, complex_values, shared_per_block);
  } else {
    // Fused: greedy runs of factors up to 32 (the rest one per launch of our kernel);
    // Sliced: our one-factor kernel throughout; Gemm: one cuBLAS GEMM per factor.
    const Index max_dim = algorithm == KronAlgorithm::Fused ? kKronMaxFusedDim : 0;
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
      KronPassKind kind = lo < hi ? KronPassKind::Fused : KronPassKind::Sliced;
      if (algorithm == KronAlgorithm::Gemm) kind = KronPassKind::Gemm;
      plan.passes.push_back({lo, hi, kind});
      hi = lo - 1;
    }
  }
  K = K_in;
  for (const KronPass& pass : plan.passes) {
    for (int f = pass.hi; f >= pass.lo; --f)
      K = K / shapes[f].P * shapes[f].Q;
    plan.extents.push_back(K);
  }
  const int m = int(plan.passes.size());
  // Strided X or Y on a GEMM pass are staged through a temporary of their own (rare: the
  // work space covers packed data); the factors may need packing for cuBLAS (in float and
  // in 16 bits on the reduced path).
  for (const KronPass& pass : plan.passes)
    if (pass.kind == KronPassKind::Gemm) {
      Index P = 1, Q = 1;
      for (int f = pass.lo; f <= pass.hi; ++f) {
        P *= shapes[f].P;
        Q *= shapes[f].Q;
      }
      plan.factor_elements += P * Q;
    }
  plan.buffers = std::min(m - 1, 2);
  for (int i = 0; i + 1 < m; ++i)
    plan.buffer_rows = std::max(plan.buffer_rows, plan.extents[i]);
  const std::size_t factor_bytes =
      std::size_t(plan.factor_elements) *
      (element_bytes == 2 ? element_bytes + sizeof(float) : element_bytes);
  // The signals' buffers grow with the batch: a count that wraps would promise a workspace
  // far smaller than the passes write.
  std::size_t buffer_bytes = 0;
  require<ShapeError>(!__builtin_mul_overflow(std::size_t(plan.buffers * plan.buffer_rows),
                                              std::size_t(batch), &buffer_bytes) &&
                          !__builtin_mul_overflow(buffer_bytes, element_bytes, &buffer_bytes),
                      "kron_matmul: the workspace for a batch of ", batch, " signals of up to ",
                      plan.buffer_rows, " rows overflows a 64-bit byte count");
  plan.workspace_bytes = buffer_bytes + factor_bytes + 256 * std::size_t(4 + 2 * n);
  return plan;
}

}  // namespace strop::detail
