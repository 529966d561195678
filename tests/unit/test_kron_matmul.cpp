// The host side of the Kron-matmul engine: work-space sizes of each plan, input
// validation, and the clear errors without a device (the kernels are in tests/gpu).
#include <algorithm>
#include <limits>
#include <random>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "operators/kron/kron_plan.hpp"
#include "reference.hpp"

using namespace strop;
using namespace strop::testing;

namespace {
std::vector<KronFactorRef<float>> square_factors(Index p, int n) {
  // Fake non-null device pointers: the planner never dereferences them.
  static const float dummy = 0;
  return std::vector<KronFactorRef<float>>(
      n, KronFactorRef<float>::column_major(&dummy, p, p, Op::NoTrans));
}
}  // namespace

BOOST_AUTO_TEST_SUITE(kron_matmul_host)

// Signals of 2^40 rows in a batch of 2^23 need 2^65 bytes per buffer: the count wrapped
// (8.8e12 bytes were promised), now refused.
BOOST_AUTO_TEST_CASE(a_workspace_past_a_byte_count_is_refused) {
  const Index n = Index(1) << 20;
  const std::vector<KronFactorRef<float>> f = {KronFactorRef<float>::identity(n),
                                               KronFactorRef<float>::identity(n)};
  BOOST_CHECK_NO_THROW(
      kron_matmul_workspace_bytes<float>(f, 1, Layout::ColMajor, KronAlgorithm::Gemm));
  BOOST_CHECK_THROW(
      kron_matmul_workspace_bytes<float>(f, Index(1) << 23, Layout::ColMajor, KronAlgorithm::Gemm),
      ShapeError);
}

BOOST_AUTO_TEST_CASE(workspace_follows_the_plan) {
  const auto f = square_factors(8, 6);  // FastKron's 8^6
  const Index K = 262144, B = 1024;
  const std::size_t one = sizeof(float) * std::size_t(K * B);
  // Auto runs 8^6 as two fused passes: one intermediate buffer.
  const std::size_t automatic = kron_matmul_workspace_bytes<float>(f, B, Layout::ColMajor);
  BOOST_TEST(automatic >= one);
  BOOST_TEST(automatic < 2 * one);
  // Fused: 8^3 chunks, two passes, one intermediate buffer.
  const std::size_t fused =
      kron_matmul_workspace_bytes<float>(f, B, Layout::ColMajor, KronAlgorithm::Fused);
  BOOST_TEST(fused >= one);
  BOOST_TEST(fused < 2 * one);
  // One factor per launch: two ping-pong buffers.
  const std::size_t sliced =
      kron_matmul_workspace_bytes<float>(f, B, Layout::ColMajor, KronAlgorithm::Sliced);
  BOOST_TEST(sliced >= 2 * one);
  BOOST_TEST(sliced < 3 * one);
  // Gemm: one GEMM per factor, two ping-pong buffers and room for each factor packed.
  const std::size_t gemm =
      kron_matmul_workspace_bytes<float>(f, B, Layout::RowMajor, KronAlgorithm::Gemm);
  BOOST_TEST(gemm >= 2 * one + 6 * 64 * sizeof(float));
  BOOST_TEST(gemm < 3 * one);
  // The 16-bit path: two GEMM passes on 512 x 512 blocks, so one buffer of 16-bit values (half
  // the bytes of a float one) and the merged blocks in float and in 16 bits.
  const std::size_t half_bytes = kron_matmul_workspace_bytes<half>(f, B, Layout::ColMajor);
  BOOST_TEST(half_bytes >= one / 2 + 2 * 512 * 512 * (sizeof(float) + 2));
  BOOST_TEST(half_bytes < one);
  // Shuffle: ping, pong and the transpose temporary.
  BOOST_TEST(kron_matmul_workspace_bytes<float>(f, B, Layout::ColMajor, KronAlgorithm::Shuffle) >=
             3 * one);
  // 16-bit data has no shuffle path: every algorithm but Gemm takes Auto's plan, which the
  // 16-bit launcher runs with at most two intermediate buffers.
  for (KronAlgorithm a : {KronAlgorithm::Shuffle, KronAlgorithm::Fused, KronAlgorithm::Sliced}) {
    BOOST_TEST(kron_matmul_workspace_bytes<half>(f, B, Layout::ColMajor, a) == half_bytes);
    const std::vector<detail::KronShape> shapes(6, detail::KronShape{8, 8});
    BOOST_TEST(detail::plan_kron(shapes, B, Layout::ColMajor, a, 2).buffers <= 2);
  }
  // A single factor writes Y directly (at most the factor is packed).
  BOOST_TEST(kron_matmul_workspace_bytes<float>(square_factors(8, 1), B, Layout::ColMajor) <
             std::size_t(2048));
}

namespace {
// K before factor f: its own and earlier inputs, later factors' outputs.
std::vector<Index> features_before(const std::vector<detail::KronShape>& shapes) {
  const int n = int(shapes.size());
  std::vector<Index> K_before(n);
  for (int f = 0; f < n; ++f) {
    K_before[f] = 1;
    for (int g = 0; g < n; ++g)
      K_before[f] *= g <= f ? shapes[g].P : shapes[g].Q;
  }
  return K_before;
}

// Auto's contract on these shapes for every element size and layout: every factor applied
// exactly once, last factor first, in runs of up to kKronMaxFused; GEMM passes on one factor
// or on a merged run of up to kron_max_merged_elements values (any sizes: cuBLAS's 64-bit
// interface takes those beyond an int); one-factor passes of our kernel only on one factor
// and never on 16-bit data, whose passes are all GEMMs or tensor-core passes on a pair of 32 x
// 32 factors (kron_pair16_fits) or a triple of 16 x 16 (kron_triple16_fits); fused passes only
// on batch-first data.
void check_auto_plans(const std::vector<detail::KronShape>& shapes, Index batch) {
  const int n = int(shapes.size());
  const std::vector<Index> K_before = features_before(shapes);
  for (std::size_t bytes : {2u, 4u, 8u, 16u})
    for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
      BOOST_TEST_CONTEXT(bytes << " bytes, " << to_string(layout) << ", batch " << batch) {
        const auto passes = detail::plan_auto_passes(shapes, batch, layout, bytes, bytes == 16);
        int next = n - 1;
        for (const detail::KronPass& p : passes) {
          BOOST_TEST(p.hi == next);
          BOOST_TEST(p.lo <= p.hi);
          BOOST_TEST(p.hi - p.lo < detail::kKronMaxFused);
          if (p.hi != next || p.lo > p.hi || p.lo < 0) break;
          Index P = 1, Q = 1;
          for (int f = p.lo; f <= p.hi; ++f) {
            P *= shapes[f].P;
            Q *= shapes[f].Q;
          }
          bool small = true;
          for (int f = p.lo; f <= p.hi; ++f)
            small = small && shapes[f].P <= detail::kKronMaxFusedDim &&
                    shapes[f].Q <= detail::kKronMaxFusedDim;
          if (p.kind == detail::KronPassKind::Gemm)
            BOOST_TEST((p.lo == p.hi || P * Q <= detail::kron_max_merged_elements(bytes, small)));
          if (p.kind == detail::KronPassKind::Sliced) {
            BOOST_TEST(p.lo == p.hi);
            BOOST_TEST(bytes != 2u, "a one-factor pass of our kernel on 16-bit data (factor "
                                        << p.hi << "), which has none");
          }
          if (p.kind == detail::KronPassKind::Fused) BOOST_TEST((layout == Layout::ColMajor));
          if (bytes == 2 && p.kind == detail::KronPassKind::Fused) {
            const auto run = std::span(shapes).subspan(p.lo, p.hi - p.lo + 1);
            BOOST_TEST((detail::kron_pair16_fits(run, K_before[p.hi]) ||
                        detail::kron_triple16_fits(run, K_before[p.hi])));
          }
          next = p.lo - 1;
        }
        BOOST_TEST(next == -1);
      }
    }
}

// The largest ldc = (K_in / P) * batch of the GEMM passes Auto plans for batch-last 16-bit
// data (what exceeded cuBLAS's 32-bit sizes before its 64-bit interface was used).
Index widest_ldc16(const std::vector<detail::KronShape>& shapes, Index batch) {
  const std::vector<Index> K_before = features_before(shapes);
  Index widest = 0;
  for (const detail::KronPass& p :
       detail::plan_auto_passes(shapes, batch, Layout::RowMajor, 2, false)) {
    BOOST_TEST((p.kind == detail::KronPassKind::Gemm));
    Index P = 1;
    for (int f = p.lo; f <= p.hi; ++f)
      P *= shapes[f].P;
    widest = std::max(widest, K_before[p.hi] / P * batch);
  }
  return widest;
}
}  // namespace

// Auto's planner (check_auto_plans), on fixed shapes and on random ones from a generator of
// its own (the shared one's state depends on which tests ran before).
BOOST_AUTO_TEST_CASE(auto_plans_cover_every_factor_once) {
  using S = std::vector<detail::KronShape>;
  // Batch-last 16-bit data beyond cuBLAS's 32-bit sizes: G_1 alone needs ldc = S*B =
  // 4105728 * 1107 > 2^31 - 1, merged with G_2 2052864 * 1107, and G_1..G_3 merged is a block of
  // 384 x 192 > 256 x 256 values. kron_matmul's 16-bit path refused it (no pass ending at G_1
  // fitted an int); now every pass is a GEMM. Since 16-bit runs of small factors merge up to
  // 512 x 512, its plan stays within 32-bit sizes at B = 1107; at 4 x 1107 one pass is past them.
  const S reported = {{8, 8}, {8, 2}, {6, 12}, {10, 12}, {8, 11}, {6, 9}, {4, 12}, {7, 12}};
  const Index int_max = std::numeric_limits<int>::max();
  check_auto_plans(reported, 1107);
  check_auto_plans(reported, 4 * 1107);
  BOOST_TEST(widest_ldc16(reported, 4 * 1107) > int_max);
  check_auto_plans(reported, 1000);
  // More batch-last shapes whose plans go past 32-bit sizes (found by sweeping random shapes of
  // 7-8 factors up to 12 x 12 on 1000-3000 signals).
  for (const auto& [shapes, batch] : std::vector<std::pair<S, Index>>{
           {{{11, 5}, {10, 5}, {11, 9}, {11, 6}, {5, 8}, {12, 4}, {10, 11}, {11, 10}}, 2308},
           {{{8, 8}, {10, 5}, {7, 12}, {12, 12}, {10, 11}, {11, 6}, {7, 5}, {2, 5}}, 2968},
           {{{11, 9}, {12, 12}, {12, 11}, {8, 11}, {12, 8}, {9, 11}, {6, 9}}, 2731}}) {
    check_auto_plans(shapes, batch);
    BOOST_TEST(widest_ldc16(shapes, batch) > int_max);
  }
  // A 2 x 2 factor after a 256 x 256 one (too large to merge with) on 2^23 batch-last signals:
  // its GEMM's ldc is 256 * 2^23 = 2^31 (tests/gpu's bf16 case past 32-bit sizes).
  const S wide = {{256, 256}, {2, 2}};
  check_auto_plans(wide, Index(1) << 23);
  BOOST_TEST(widest_ldc16(wide, Index(1) << 23) == Index(1) << 31);
  // One GEMM per factor is one GEMM per factor at any size (it was our one-factor kernel past
  // 32-bit sizes, which the 16-bit path does not have).
  for (std::size_t bytes : {2u, 4u})
    for (const auto& p :
         detail::plan_kron(wide, Index(1) << 23, Layout::RowMajor, KronAlgorithm::Gemm, bytes)
             .passes)
      BOOST_TEST((p.kind == detail::KronPassKind::Gemm && p.lo == p.hi));
  std::mt19937 gen(11);
  auto random = [&gen](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(gen);
  };
  for (int trial = 0; trial < 200; ++trial) {
    // Up to 8 factors of up to 12, or up to 3 of up to 300 (products within the engine's
    // sizes).
    const bool large = trial % 4 == 0;
    const int n = int(random(1, large ? 3 : 8));
    S shapes(n);
    for (auto& s : shapes)
      s = {random(1, large ? 300 : 12), random(1, large ? 300 : 12)};
    check_auto_plans(shapes, random(1, 3000));
  }
  // 8^6 on 1024 signals: two passes in float, at least one of them fused (the square kernel
  // takes chunks of up to 8^4); two GEMMs on merged 512 x 512 blocks in 16 bits.
  const std::vector<detail::KronShape> eights(6, {8, 8});
  const auto passes = detail::plan_auto_passes(eights, 1024, Layout::ColMajor, 4, false);
  BOOST_TEST(passes.size() == 2u);
  BOOST_TEST(std::any_of(passes.begin(), passes.end(), [](const detail::KronPass& p) {
    return p.kind == detail::KronPassKind::Fused;
  }));
  const auto reduced = detail::plan_auto_passes(eights, 1024, Layout::ColMajor, 2, false);
  BOOST_TEST(reduced.size() == 2u);
  for (const auto& p : reduced) {
    BOOST_TEST((p.kind == detail::KronPassKind::Gemm));
    BOOST_TEST(p.hi - p.lo == 2);
  }
  // 32^4 in 16 bits: two tensor-core pair passes on batch-first data (four GEMMs would each
  // cost a pass over memory), GEMMs on batch-last data; 32^3 is a pair and a GEMM.
  const std::vector<detail::KronShape> thirty_twos(4, {32, 32});
  const auto pairs = detail::plan_auto_passes(thirty_twos, 1024, Layout::ColMajor, 2, false);
  BOOST_TEST(pairs.size() == 2u);
  for (const auto& p : pairs) {
    BOOST_TEST((p.kind == detail::KronPassKind::Fused));
    BOOST_TEST(p.hi - p.lo == 1);
  }
  for (const auto& p : detail::plan_auto_passes(thirty_twos, 1024, Layout::RowMajor, 2, false))
    BOOST_TEST((p.kind == detail::KronPassKind::Gemm));
  const std::vector<detail::KronShape> three(3, {32, 32});
  const auto mixed = detail::plan_auto_passes(three, 5, Layout::ColMajor, 2, false);
  BOOST_TEST(mixed.size() == 2u);
  BOOST_TEST(std::count_if(mixed.begin(), mixed.end(), [](const detail::KronPass& p) {
               return p.kind == detail::KronPassKind::Fused;
             }) == 1);
  // A device whose blocks cannot hold the pair kernel's 192 KB (an A100's 163 KB): GEMMs only,
  // with the work space their factors need.
  for (const auto& p :
       detail::plan_auto_passes(thirty_twos, 1024, Layout::ColMajor, 2, false, 163 * 1024))
    BOOST_TEST((p.kind == detail::KronPassKind::Gemm));
  for (const auto& p : detail::plan_auto_passes(thirty_twos, 1024, Layout::ColMajor, 2, false,
                                                detail::kKronPair16SharedBytes))
    BOOST_TEST((p.kind == detail::KronPassKind::Fused));
  BOOST_TEST(detail::plan_kron(thirty_twos, 1024, Layout::ColMajor, KronAlgorithm::Auto, 2, false,
                               163 * 1024)
                 .factor_elements > 0);
  // 16^5 in 16 bits: a triple pass and one GEMM on a merged 256 x 256 block of two factors,
  // instead of three GEMM passes; 16^6 on 16 signals stays three GEMMs on 256 x 256 blocks
  // (measured faster than two triples); GEMMs where the triple kernel's 192 KB do not fit.
  const auto sixteens = [](int n) { return std::vector<detail::KronShape>(n, {16, 16}); };
  const auto five = detail::plan_auto_passes(sixteens(5), 1024, Layout::ColMajor, 2, false);
  BOOST_TEST(five.size() == 2u);
  for (const auto& p : five)
    BOOST_TEST(p.hi - p.lo == (p.kind == detail::KronPassKind::Fused ? 2 : 1));
  BOOST_TEST((five.front().kind != five.back().kind));
  const auto six = detail::plan_auto_passes(sixteens(6), 16, Layout::ColMajor, 2, false);
  BOOST_TEST(six.size() == 3u);
  for (const auto& p : six)
    BOOST_TEST((p.kind == detail::KronPassKind::Gemm));
  for (const auto& p :
       detail::plan_auto_passes(sixteens(5), 1024, Layout::ColMajor, 2, false, 163 * 1024))
    BOOST_TEST((p.kind == detail::KronPassKind::Gemm));
}

// The pair pass needs two 32 x 32 factors and whole tiles of 32 chunks of 1024 features.
BOOST_AUTO_TEST_CASE(pair16_pass_takes_two_32_by_32_factors) {
  using S = std::vector<detail::KronShape>;
  BOOST_TEST(detail::kron_pair16_fits(S(2, {32, 32}), 1 << 15));
  BOOST_TEST(detail::kron_pair16_fits(S(2, {32, 32}), 5 << 15));
  BOOST_TEST(!detail::kron_pair16_fits(S(2, {32, 32}), 1 << 14));  // half a tile
  BOOST_TEST(!detail::kron_pair16_fits(S(3, {32, 32}), 1 << 15));  // three factors
  BOOST_TEST(!detail::kron_pair16_fits(S{{32, 32}, {32, 16}}, 1 << 15));
  BOOST_TEST(!detail::kron_pair16_fits(S(2, {16, 16}), 1 << 15));
  // Two CTAs pair up where a signal has an even number of tiles.
  BOOST_TEST(detail::kron_pair16_clustered(1 << 20));
  BOOST_TEST(detail::kron_pair16_clustered(2 << 15));
  BOOST_TEST(!detail::kron_pair16_clustered(1 << 15));
  BOOST_TEST(!detail::kron_pair16_clustered(3 << 15));
}

// The triple pass needs three 16 x 16 factors and whole tiles of 8 chunks of 4096 features;
// its cluster is the largest power of two up to its limit that divides the tiles of a signal.
BOOST_AUTO_TEST_CASE(triple16_pass_takes_three_16_by_16_factors) {
  using S = std::vector<detail::KronShape>;
  BOOST_TEST(detail::kron_triple16_fits(S(3, {16, 16}), 1 << 15));
  BOOST_TEST(detail::kron_triple16_fits(S(3, {16, 16}), 3 << 15));
  BOOST_TEST(!detail::kron_triple16_fits(S(3, {16, 16}), 1 << 14));  // half a tile
  BOOST_TEST(!detail::kron_triple16_fits(S(2, {16, 16}), 1 << 15));  // two factors
  BOOST_TEST(!detail::kron_triple16_fits(S{{16, 16}, {16, 16}, {16, 8}}, 1 << 15));
  BOOST_TEST(!detail::kron_triple16_fits(S(3, {32, 32}), 1 << 15));
  BOOST_TEST(detail::kron_triple16_log_cluster(1 << 15) == 0);
  BOOST_TEST(detail::kron_triple16_log_cluster(3 << 15) == 0);
  BOOST_TEST(detail::kron_triple16_log_cluster(6 << 15) == 1);
  BOOST_TEST(detail::kron_triple16_log_cluster(1 << 20) == detail::kKronTriple16MaxLogCluster);
}

// Which passes the in-place kernel for equal square factors takes, and its chunks per block:
// >= 16 bytes per output row and >= 256 threads x 64 (float) or x 32 (double) elements.
BOOST_AUTO_TEST_CASE(square_kernel_takes_equal_power_of_two_factors) {
  using S = std::vector<detail::KronShape>;
  auto tile = [](const S& group, Index K, std::size_t bytes, bool complex_values = false) {
    return detail::kron_square_chunks_per_block(group, K, bytes, complex_values);
  };
  const S sixteen3(3, {16, 16}), thirty_two2(2, {32, 32}), two(1, {2, 2});
  BOOST_TEST(tile(sixteen3, 1 << 20, 4) == 4);             // 4096 features: 4 chunks (16 bytes)
  BOOST_TEST(tile(sixteen3, 1 << 20, 8) == 2);             // double: 2 chunks (16 bytes)
  BOOST_TEST(tile(thirty_two2, 1 << 20, 4) == 16);         // 1024 features: 16384 elements per tile
  BOOST_TEST(tile(two, 1 << 20, 4) == 8192);               // one factor of 2: 16384 elements
  BOOST_TEST(tile(sixteen3, 4096 * 2, 4) == 0);            // fewer chunks than a block holds
  BOOST_TEST(tile(sixteen3, 1 << 20, 8, true) == 0);       // complex<float>
  BOOST_TEST(tile(sixteen3, 1 << 20, 16) == 0);            // complex<double>
  BOOST_TEST(tile(S{{16, 16}, {8, 8}}, 1 << 20, 4) == 0);  // unequal factors
  BOOST_TEST(tile(S{{16, 8}, {16, 16}}, 1 << 20, 4) == 0);  // rectangular
  BOOST_TEST(tile(S(1, {64, 64}), 1 << 20, 4) == 0);        // P > 32
  BOOST_TEST(tile(S(1, {12, 12}), 12 * 4096, 4) == 0);      // not a power of two
  BOOST_TEST(tile(S(4, {16, 16}), 1 << 24, 4) == 0);        // chunk 65536 > 4096
}

// The square kernel's blocks: 16^3 in float, 4 chunks of 4096 features padded to 4225 (one
// element every 32, one more for an odd stride), after the three 16 x 16 factors: 135 KB
// with two tile buffers (single role), more than an sm_86/89 block holds, and 202 KB with
// three (two roles), which only an sm_90 block holds; 32 x 32 factors keep the single role.
// On such a device every fused pass of a plan is one a kernel can run there: the square
// kernel where its blocks fit, else the general fused kernel (which the planner gives runs of
// two or more factors within kKronFusedSharedBudget).
BOOST_AUTO_TEST_CASE(fused_passes_fit_the_device_shared_memory) {
  using S = std::vector<detail::KronShape>;
  const std::size_t a100 = 163 * 1024, h100 = detail::kSm90SharedMemoryPerBlock;
  const auto l = detail::kron_square_layout(16, 3, 4, 4, a100);
  BOOST_TEST(l.ld == 4225);
  BOOST_TEST(l.buffer_offset == 3 * 256);
  BOOST_TEST(l.buffer_elements == 4 * 4225);
  BOOST_TEST(l.movers == 0);
  BOOST_TEST(l.bytes == 4u * (768 + 2 * 16900));
  const auto roles = detail::kron_square_layout(16, 3, 4, 4, h100);
  BOOST_TEST(roles.movers == detail::kKronSquareMovers);
  BOOST_TEST(roles.bytes == 4u * (768 + 3 * 16900));
  BOOST_TEST(detail::kron_square_layout(32, 2, 16, 4, h100).movers == 0);
  BOOST_TEST(detail::kron_square_layout(16, 3, 2, 8, a100).bytes ==
             8u * (768 + 2 * 2 * 4353));  // double: padded every 16
  for (const std::size_t shared : {std::size_t(99 * 1024), a100, h100}) {
    for (const S& shapes :
         {S(3, {16, 16}), S(3, {32, 32}), S(6, {8, 8}), S(14, {2, 2}), S(7, {4, 4}), S(5, {16, 16}),
          // a lone 32 x 32 pass: the square kernel or another one-factor pass
          S{{32, 32}, {512, 512}}}) {
      for (const std::size_t bytes : {std::size_t(4), std::size_t(8)}) {
        Index K = 1;
        for (const auto& s : shapes)
          K *= s.P;
        for (const auto& p :
             detail::plan_auto_passes(shapes, 64, Layout::ColMajor, bytes, false, shared)) {
          if (p.kind != detail::KronPassKind::Fused) continue;
          const std::span<const detail::KronShape> run(shapes.data() + p.lo, p.hi - p.lo + 1);
          // Square factors: every pass sees K features.
          const Index tl = detail::kron_square_chunks_per_block(run, K, bytes, false);
          const bool square_fits =
              tl > 0 &&
              detail::kron_square_layout(run.front().P, int(run.size()), tl, bytes, shared).bytes <=
                  shared;
          const bool general_fits =
              p.hi > p.lo &&
              detail::kron_fused_shared_bytes(run, 1, bytes, detail::kron_fused_rq(bytes)) <=
                  std::min(shared, detail::kKronFusedSharedBudget);
          BOOST_TEST((square_fits || general_fits),
                     shapes.size() << " factors of " << shapes[0].P << ", " << bytes << " bytes, "
                                   << shared << " B: pass " << p.lo << ".." << p.hi);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_factors_and_host_views_are_rejected) {
  std::vector<KronFactorRef<float>> none;
  BOOST_CHECK_THROW(kron_matmul_workspace_bytes<float>(none, 4, Layout::ColMajor), ShapeError);
  std::vector<KronFactorRef<float>> rect_identity = {{nullptr, 2, 3, 0, 0, false}};
  BOOST_CHECK_THROW(kron_matmul_workspace_bytes<float>(rect_identity, 4, Layout::ColMajor),
                    ShapeError);
  const auto f = square_factors(2, 2);
  HostMatrix<float> x = HostMatrix<float>::Random(4, 3), y(4, 3), bad(5, 3);
  BOOST_CHECK_THROW(kron_matmul<float>(f, view(bad), view(y), 1.0f, 0.0f, default_context()),
                    ShapeError);
  BOOST_CHECK_THROW(kron_matmul<float>(f, view(x), view(y), 1.0f, 0.0f, default_context()),
                    DeviceError);
  BOOST_TEST(to_string(KronAlgorithm::Shuffle) == "shuffle");
  BOOST_TEST(to_string(KronAlgorithm::Gemm) == "gemm");
  HostMatrix<half> xh(4, 3), yh(4, 3);
  BOOST_CHECK_THROW(kron_matmul<half>(f, view(xh), view(yh), 1.0f, 0.0f, default_context()),
                    DeviceError);
  {
    KronAlgorithmGuard guard(KronAlgorithm::Sliced);
    BOOST_TEST((kron_algorithm() == KronAlgorithm::Sliced));
  }
  BOOST_TEST((kron_algorithm() == KronAlgorithm::Auto));
}

// Extents whose products wrap around 64 bits, or whose intermediates (inputs of the first
// factors times outputs of the last) pass the engine's 2^40, are refused before planning (a
// wrapped product passed the check and divided by zero in the planner).
BOOST_AUTO_TEST_CASE(overflowing_extents_are_rejected) {
  using Ref = KronFactorRef<float>;
  const std::vector<Ref> wrapping = {Ref::identity(Index(1) << 40), Ref::identity(Index(1) << 24)};
  BOOST_CHECK_THROW(kron_matmul_workspace_bytes<float>(wrapping, 4, Layout::ColMajor), ShapeError);
  static const float dummy = 0;
  // 1 x 2^40 and 2^40 x 1: X and Y have 2^40 rows, the intermediate 2^80.
  const std::vector<Ref> wide = {Ref::column_major(&dummy, 1, Index(1) << 40, Op::NoTrans),
                                 Ref::column_major(&dummy, Index(1) << 40, 1, Op::NoTrans)};
  for (KronAlgorithm a : {KronAlgorithm::Auto, KronAlgorithm::Sliced, KronAlgorithm::Shuffle})
    BOOST_CHECK_THROW(kron_matmul_workspace_bytes<float>(wide, 4, Layout::ColMajor, a), ShapeError);
}

BOOST_AUTO_TEST_CASE(a_work_space_that_overlaps_the_signals_is_rejected) {
  // Checked before the device is touched (the pointers stand for device memory and are never
  // read), so this holds with and without a GPU.
  using Ref = KronFactorRef<float>;
  const std::vector<Ref> factors = {Ref::identity(4), Ref::identity(8)};
  std::vector<float> memory(256);
  const auto X =
      make_view<const float>(memory.data(), 32, 2, Layout::ColMajor, MemorySpace::Device);
  const auto Y = make_view(memory.data() + 64, 32, 2, Layout::ColMajor, MemorySpace::Device);
  Context ctx;
  for (float* workspace : {memory.data() + 32, memory.data() + 100}) {
    try {
      kron_matmul<float>(factors, X, Y, 1.0f, 0.0f, ctx, workspace, 64 * sizeof(float));
      BOOST_FAIL("a work space overlapping X or Y was accepted");
    } catch (const ShapeError& e) {
      BOOST_TEST(std::string(e.what()).find("work space") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// KronSolver on the host: against the materialised product.
BOOST_AUTO_TEST_SUITE(kron_solve_host)

namespace {
// A well-conditioned random factor (diagonally dominant), Hermitian positive definite when
// `hpd`.
template <class T>
HostMatrix<T> well_conditioned(Index n, bool hpd) {
  HostMatrix<T> f = random_matrix<T>(n, n);
  if (hpd) f = (f * f.adjoint()).eval();
  f.diagonal().array() += T(RealOf<T>(n));
  return f;
}
}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(solves_match_the_dense_solve, T, ScalarTypes) {
  for (KronSolveMethod method : {KronSolveMethod::LU, KronSolveMethod::Cholesky}) {
    const bool hpd = method == KronSolveMethod::Cholesky;
    std::vector<AnyOperator<T>> factors;
    HostMatrix<T> dense = HostMatrix<T>::Ones(1, 1);
    for (Index n : {3, 4, 5}) {
      const HostMatrix<T> f = well_conditioned<T>(n, hpd);
      factors.emplace_back(Dense<T>(f));
      dense = kron_dense(dense, f);
    }
    const KronSolver<T> solver(Kron<T>(factors), method);
    BOOST_TEST(solver.size() == 60);
    BOOST_TEST(solver.min_factor_rcond() > 0.01);
    const HostMatrix<T> b = random_matrix<T>(60, 7);
    for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
      HostMatrix<T> x(60, 7);
      solver.solve(op, view(b), view(x));
      BOOST_TEST_CONTEXT(to_string(op) << (hpd ? " Cholesky" : " LU")) {
        // The residual of the materialised system (well-conditioned factors: a small
        // residual means a small error).
        BOOST_TEST(relative_error(HostMatrix<T>(op_of(dense, op) * x), b) <= tolerance<T>(60));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(any_square_operator_may_be_a_factor) {
  // A diagonal factor next to a dense one: factorized through its dense matrix.
  const HostMatrix<double> f = well_conditioned<double>(4, false);
  const Eigen::VectorXd d = Eigen::VectorXd::LinSpaced(3, 1.0, 3.0);
  const KronSolver<double> solver(kron(Diagonal<double>(d), Dense<double>(f)));
  const HostMatrix<double> dense = kron_dense<double>(HostMatrix<double>(d.asDiagonal()), f);
  const HostMatrix<double> b = random_matrix<double>(12, 2);
  HostMatrix<double> x(12, 2);
  solver.solve(view(b), view(x));
  BOOST_TEST(relative_error(HostMatrix<double>(dense * x), b) <= tolerance<double>(12));
}

BOOST_AUTO_TEST_CASE(bad_factors_are_rejected_clearly) {
  const Dense<double> good(well_conditioned<double>(3, true));
  BOOST_CHECK_THROW(KronSolver<double>(kron(good, Dense<double>(HostMatrix<double>::Ones(2, 3)))),
                    ShapeError);
  HostMatrix<double> singular = HostMatrix<double>::Ones(3, 3);
  BOOST_CHECK_THROW(KronSolver<double>(kron(good, Dense<double>(singular))), NumericalError);
  HostMatrix<double> nan = well_conditioned<double>(3, false);
  nan(1, 2) = std::nan("");
  BOOST_CHECK_THROW(KronSolver<double>(kron(Dense<double>(nan), good)), NumericalError);
  // Cholesky: an indefinite and a non-symmetric factor.
  HostMatrix<double> indefinite = HostMatrix<double>::Identity(3, 3);
  indefinite(2, 2) = -1;
  BOOST_CHECK_THROW(
      KronSolver<double>(kron(good, Dense<double>(indefinite)), KronSolveMethod::Cholesky),
      NumericalError);
  HostMatrix<double> nonsymmetric = well_conditioned<double>(3, true);
  nonsymmetric(0, 2) += 1;
  BOOST_CHECK_THROW(
      KronSolver<double>(kron(good, Dense<double>(nonsymmetric)), KronSolveMethod::Cholesky),
      NumericalError);
  // Right-hand sides of the wrong size.
  const KronSolver<double> solver(kron(good, good));
  HostMatrix<double> b(8, 2), x(9, 2);
  BOOST_CHECK_THROW(solver.solve(view(b), view(x)), ShapeError);
  // Solving in place is refused, in the solver's name (the message said "kron").
  HostMatrix<double> bx = HostMatrix<double>::Ones(9, 2);
  check_error_mentions<ShapeError>([&] { solver.solve(view(bx), view(bx)); },
                                   "KronSolver: Y overlaps X");
  BOOST_TEST((bx.array() == 1.0).all());  // B is untouched
}

// The reported condition is the worst factor's (it was always 1: the member was initialised
// after the inverses that recorded it).
BOOST_AUTO_TEST_CASE(min_factor_rcond_is_the_worst_factors) {
  HostMatrix<double> poor = HostMatrix<double>::Identity(2, 2);
  poor(1, 1) = 1e-6;  // 1-norm reciprocal condition 1e-6
  const KronSolver<double> solver(
      kron(Dense<double>(well_conditioned<double>(3, false)), Dense<double>(poor)));
  BOOST_TEST(solver.min_factor_rcond() < 2e-6);
  BOOST_TEST(solver.min_factor_rcond() > 5e-7);
}

// An identity factor is its own inverse: I_n (n = 50000) was made a dense n x n matrix
// (20 GB) to factor.
BOOST_AUTO_TEST_CASE(identity_factors_are_not_factorized) {
  const Index n = 50000;
  const HostMatrix<double> f = well_conditioned<double>(3, false);
  const KronSolver<double> solver(kron(Identity<double>(n), Dense<double>(f)));
  BOOST_TEST(solver.size() == 3 * n);
  const HostMatrix<double> b = random_matrix<double>(3 * n, 2);
  HostMatrix<double> x(3 * n, 2);
  solver.solve(view(b), view(x));
  // I ⊗ F is block diagonal: F x_i = b_i for each block of 3 rows.
  HostMatrix<double> residual(3 * n, 2);
  for (Index i = 0; i < n; ++i)
    residual.middleRows(3 * i, 3) = f * x.middleRows(3 * i, 3) - b.middleRows(3 * i, 3);
  BOOST_TEST(residual.norm() <= tolerance<double>(12) * b.norm());
}

// Factors that each pass the singularity check can make a product that does not: the solve
// returned errors of order 1 (float, cond 1e4 per factor, 1e8 in all).
BOOST_AUTO_TEST_CASE_TEMPLATE(a_product_singular_to_working_precision_is_refused, T, RealTypes) {
  HostMatrix<T> poor = HostMatrix<T>::Identity(2, 2);
  poor(1, 1) = T(1e-4);  // 1-norm reciprocal condition 1e-4, far above either epsilon
  const Dense<T> F(poor);
  const auto make = [&] { return KronSolver<T>(kron(F, F)); };
  if constexpr (std::is_same_v<T, float>) {
    BOOST_CHECK_THROW(make(), NumericalError);  // 1e-8 < 1.2e-7
  } else {
    BOOST_TEST(make().min_factor_rcond() == 1e-4, boost::test_tools::tolerance(1e-12));
  }
}

// An empty factor makes an empty system (Cholesky crashed on it, LU called it singular).
BOOST_AUTO_TEST_CASE(empty_factor_makes_an_empty_system) {
  const Dense<double> good(well_conditioned<double>(3, true));
  for (KronSolveMethod method : {KronSolveMethod::LU, KronSolveMethod::Cholesky}) {
    const KronSolver<double> solver(kron(good, Dense<double>(HostMatrix<double>(0, 0))), method);
    BOOST_TEST(solver.size() == 0);
    HostMatrix<double> b(0, 2), x(0, 2);
    solver.solve(view(b), view(x));
  }
}

BOOST_AUTO_TEST_SUITE_END()
