#pragma once
// Internal: how a Kron-matmul is cut into kernel launches (which consecutive factors share
// one fused pass) and how much work space the intermediates need. Pure host arithmetic, so
// the CPU unit tests check it (tests/unit/test_kron_matmul.cpp).
#include <cstddef>
#include <span>
#include <vector>

#include "runtime/shared_memory.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/kron_matmul.hpp"

namespace strop::detail {

struct KronShape {
  Index P = 0;  // input extent of the factor (columns of G)
  Index Q = 0;  // output extent (rows of G)
};

// How a pass runs: our shared-memory kernel for several factors (Fused), our one-factor
// sliced-multiply kernel (Sliced), or one cuBLAS strided-batched GEMM whose strides make the
// permuted store (Gemm, kron_gemm_cublas.cpp).
enum class KronPassKind { Fused, Sliced, Gemm };

// Factors lo..hi (0-based, G_1 is 0) applied in one launch, hi first: lo < hi is a fused
// pass of our kernel, or one GEMM on G_lo ⊗ ... ⊗ G_hi materialised (the same sliced multiply
// on the run's prod P_f contiguous features).
struct KronPass {
  int lo = 0;
  int hi = 0;
  KronPassKind kind = KronPassKind::Sliced;
};

struct KronPlan {
  std::vector<KronPass> passes;  // in execution order (factors n-1 ... 0)
  std::vector<Index> extents;    // rows of the intermediate after each pass (last: Y's rows)
  int buffers = 0;               // ping-pong buffers of buffer_rows x batch elements
  Index buffer_rows = 0;
  Index factor_elements = 0;  // room for the GEMM passes' factors (packed or merged)
  std::size_t workspace_bytes = 0;
};

// The fused kernel keeps a chunk of every signal in shared memory, `chunks_per_block` chunks
// side by side, each padded (one element every 128 bytes against bank conflicts, an odd
// stride between chunks). These sizes are shared by the planner and the launcher.
inline constexpr int kKronMaxFused = 8;        // factors per fused pass
inline constexpr Index kKronMaxFusedDim = 32;  // P, Q of a fusable factor
// Auto may merge consecutive factors into one GEMM on their Kronecker product (a block of
// prod P x prod Q values, materialised in the work space) up to this many elements; on 16-bit
// data, whose GEMMs run on tensor cores, a run of small factors (P, Q <= kKronMaxFusedDim) up
// to 512 x 512: 8^6 as two GEMMs on 8^3 blocks instead of three on 8^2 blocks.
inline constexpr Index kKronMaxMergedElements = 256 * 256;
inline constexpr Index kKronMaxMergedSmall16 = 512 * 512;
inline Index kron_max_merged_elements(std::size_t element_bytes, bool small_factors) {
  return element_bytes == 2 && small_factors ? kKronMaxMergedSmall16 : kKronMaxMergedElements;
}
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

// log2 of v rounded up (the launchers' power-of-two extents).
inline int kron_log2(Index v) {
  int l = 0;
  while ((Index(1) << l) < v)
    ++l;
  return l;
}

// The fused kernel for runs of equal square factors (kron_fused_square.cu): G factors of
// one size P x P, P a power of two up to 32, chunk P^G <= kKronSquareMaxChunk, real
// batch-first data. A tile holds `chunks_per_block` consecutive chunks of one signal (so
// each output row gets a run of >= 16 bytes) and at least kKronSquareThreads x the thread's
// register tile of elements (so every thread has work in every step). Returns 0 when the kernel
// does not take the pass (other shapes, complex values, or K_in no multiple of a block's chunks).
inline constexpr Index kKronSquareMaxChunk = 4096;
inline constexpr int kKronSquareThreads = 256;
// The kernel's two forms. Single role: its kKronSquareThreads threads load a tile, apply the
// factors and store it, two tile buffers overlapping one tile's copies with the work on the
// one before. Two roles: those threads load and apply the factors while kKronSquareMovers more
// threads store, over a ring of three tile buffers, so that stores, loads and steps of three
// tiles proceed at once. Two roles measured 7-16 % faster on the H100 for P = 8 and 16 and
// 17-29 % slower for P = 32 (session 56, bench/NOTES-kron.md); they need three buffers' room.
inline constexpr int kKronSquareMovers = 128;
inline constexpr int kKronSquareMaxBuffers = 3;
inline constexpr Index kKronSquareMoversMaxP = 16;
// Multiply-adds in registers per thread: RS rows x QT outputs.
inline int kron_square_accumulators(std::size_t element_bytes) {
  return element_bytes == 4 ? 64 : 32;
}
Index kron_square_chunks_per_block(std::span<const KronShape> group, Index K_in,
                                   std::size_t element_bytes, bool complex_values);
// Its block's shared memory, in elements: [factors | tile buffer | tile buffer (| tile
// buffer)], each piece rounded up to 16 bytes; a buffer holds `chunks_per_block` chunks of
// P^count features, padded (kron_padded) with an odd stride `ld` (the store reads a column of
// chunks). The two-role form where P allows it and its three buffers fit `shared_per_block`,
// else the single-role form. The planner prices the kernel only where `bytes` fits the device
// (132-206 KB for most runs; an sm_86/89 device has 99 KB), the launcher sizes its buffers
// from the same numbers.
struct KronSquareLayout {
  int ld = 0;
  int movers = 0;  // 0: single role, two tile buffers; kKronSquareMovers: two roles, three
  int buffer_offset = 0;
  int buffer_elements = 0;
  std::size_t bytes = 0;
};
KronSquareLayout kron_square_layout(Index P, int count, Index chunks_per_block,
                                    std::size_t element_bytes, std::size_t shared_per_block);

// The 16-bit path's fused pass (kron_fused_pair16.cu): two consecutive 32 x 32 factors on
// packed batch-first data, tiles of kKronPair16Tile chunks of 32 x 32 features (a 64-byte
// run per output row and tile; 128 bytes where a cluster pairs two tiles), so K_in must be a
// multiple of 32768.
inline constexpr Index kKronPair16Dim = 32;
inline constexpr Index kKronPair16Tile = 32;
inline constexpr Index kKronPair16TileFeatures = kKronPair16Dim * kKronPair16Dim * kKronPair16Tile;
// Its blocks' shared memory: two tiles and a staging tile of 16-bit values (192 KB: sm_90
// only; elsewhere 16-bit plans take GEMM passes).
inline constexpr std::size_t kKronPair16SharedBytes = 2 * 3 * std::size_t(kKronPair16TileFeatures);
bool kron_pair16_fits(std::span<const KronShape> run, Index K_in);
// Whether a cluster of two CTAs pairs neighbouring tiles (an even number of tiles per signal).
bool kron_pair16_clustered(Index K_in);

// The 16-bit path's fused pass for three consecutive 16 x 16 factors
// (kron_fused_triple16.cu): tiles of kKronTriple16Tile chunks of 16^3 features (a 16-byte
// piece per output row and tile), so K_in must be a multiple of 32768; a cluster of up to
// 2^kKronTriple16MaxLogCluster CTAs takes neighbouring tiles so that each output row gets a
// longer run (pairs measured fastest on an H100: half 16^5 3.86 ms with pairs, 4.10 with
// clusters of 4, 4.16 of 8; session 57). Shared memory: two tiles and a staging tile (192 KB:
// sm_90 only).
inline constexpr Index kKronTriple16Dim = 16;
inline constexpr Index kKronTriple16Tile = 8;
inline constexpr Index kKronTriple16TileFeatures =
    kKronTriple16Dim * kKronTriple16Dim * kKronTriple16Dim * kKronTriple16Tile;
inline constexpr int kKronTriple16MaxLogCluster = 1;
inline constexpr std::size_t kKronTriple16SharedBytes =
    2 * 3 * std::size_t(kKronTriple16TileFeatures);
bool kron_triple16_fits(std::span<const KronShape> run, Index K_in);
// log2 of the cluster: the largest power of two up to 2^kKronTriple16MaxLogCluster that
// divides the tiles of a signal (the kernel also takes clusters of 4 and 8).
int kron_triple16_log_cluster(Index K_in);

// `element_bytes`: the signals' scalar size (2 for the half/bfloat16 path, which runs Gemm
// passes, pair passes (kron_pair16_fits) and triple passes (kron_triple16_fits) and needs room
// for float and 16-bit copies of the GEMM passes' factors). `shared_per_block`: the device's shared
// memory per block (shared_memory_for_plans), which decides whether the 16-bit fused kernels run
// there.
KronPlan plan_kron(std::span<const KronShape> shapes, Index batch, Layout layout,
                   KronAlgorithm algorithm, std::size_t element_bytes, bool complex_values = false,
                   std::size_t shared_per_block = kSm90SharedMemoryPerBlock);

// Auto's passes (also the 16-bit path's: GEMMs, pairs of 32 x 32 factors and triples of 16 x
// 16 factors): the cheapest by a time model.
std::vector<KronPass> plan_auto_passes(std::span<const KronShape> shapes, Index batch,
                                       Layout layout, std::size_t element_bytes,
                                       bool complex_values,
                                       std::size_t shared_per_block = kSm90SharedMemoryPerBlock);

}  // namespace strop::detail
