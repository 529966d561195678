#pragma once
// Internal: the tile configurations of the tensor-core KS kernel (ks_mma.cu), chosen by a
// heuristic or, with tuning on, by measurement (the choice is cached with the algorithm,
// ks_factor_reduced.cpp). Host code only: the rules are tested on the CPU.
//
// A thread block of 256 threads (8 warps) owns tj groups side by side x tk outputs x tn
// signals of one i; warps_k x warps_n warps per group, each 16 mf outputs x 8 nf signals.
// `pipelined` tiles run ks_mma_pipelined.cu instead of ks_mma.cu: batch-first signals only,
// 64 x 64 warp tiles, tj = 2, 4 or 8 dividing d.
#include <optional>
#include <string>
#include <vector>

#include "runtime/shared_memory.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

inline constexpr int kMmaThreads = 256;
inline constexpr int kMmaWarps = kMmaThreads / 32;
inline constexpr int kMmaChunk = 32;           // values of l per chunk (two k16 steps)
inline constexpr int kMmaRow = kMmaChunk + 8;  // shared row of a chunk, padded for ldmatrix

// Shared memory of the pipelined kernel (ks_mma_pipelined.cu asserts that its layout has
// this size): three stages of X ([tn][chunk][tj]), two of W ([tj][tk][chunk]) and two of the
// transposed X ([tj][tn][chunk]), whose space holds a tile's 16-bit outputs ([tj][tk][tn])
// after its products.
constexpr std::size_t ks_mma_pipelined_shared_bytes(int tj, int warps_k) {
  const std::size_t tk = 64 * warps_k, tn = 64 * (kMmaWarps / tj / warps_k);
  const std::size_t transposed = 2 * tj * tn * kMmaChunk, outputs = tj * tk * tn;
  return 2 * (3 * tn * kMmaChunk * tj + 2 * tj * tk * kMmaChunk +
              (transposed > outputs ? transposed : outputs));
}

struct KSMmaTile {
  int tj = 1, warps_k = 1, warps_n = 1, mf = 2, nf = 4;
  bool pipelined = false;
  int tk() const { return warps_k * 16 * mf; }
  int tn() const { return warps_n * 8 * nf; }
  // Dynamic shared memory of a block: the chunk tiles, or the fp32 output tile after the loop.
  std::size_t shared_bytes() const;
  bool operator==(const KSMmaTile&) const = default;
};

// "tj8.k64x1.n64x1" (groups, outputs x warps along them, signals x warps along them; ".pipe"
// after it for the pipelined kernel): the name tuning stores.
std::string to_string(const KSMmaTile& tile);
// The tile a name of to_string stands for; none if the name is not one (or not supported).
std::optional<KSMmaTile> parse_ks_mma_tile(const std::string& name);

// Whether ks_mma.cu has a kernel for this tile (warp shapes 16x32, 32x32, 32x64, 64x64;
// powers of two; 8 warps; fits the shared memory of sm_90), or ks_mma_pipelined.cu for a
// pipelined one (64x64 warps, tj 8 with one warp per group, tj 4 with two, tj 2 with 2 x 2).
bool ks_mma_tile_supported(const KSMmaTile& tile);

// `shared_per_block` below: the device's shared memory per block (shared_memory_for_plans).
// The pipelined tiles take 144-224 KB and ks_mma.cu's 64 x 64 warp tiles 128-130 KB: devices
// with less (sm_80: 163 KB, sm_86/89: 99 KB) get the next tile in the heuristic's order.

// ks_mma.cu's tile in place of `tile` (a pipelined one whose kernel does not take the views,
// or one the device cannot hold): the same geometry where it fits, otherwise the largest warp
// shape of its groups that fits.
KSMmaTile ks_mma_fitting_tile(KSMmaTile tile, Index out, Index batch, std::size_t shared_per_block);

// The heuristic's tile for `out` outputs per group, d groups per i and `batch` signals in the
// given memory order: for batch-first signals with more than 32 outputs and signals and
// d % 4 == 0 up to 48, or d = 2, 6 with more than 64 outputs, the pipelined kernel (tj = 8,
// 4 or 2: the largest dividing d); otherwise ks_mma.cu with tj = d (up to 8) groups side by
// side where batch-first signals need them for contiguous runs of features, and with few
// warps per group (tj >= 4) 64 x 64 warp tiles so that X and W are re-read from L2 half as
// often.
KSMmaTile ks_mma_heuristic_tile(Index out, Index d, Index batch, bool batch_contiguous,
                                std::size_t shared_per_block = kSm90SharedMemoryPerBlock);

// What tuning measures: the heuristic's tile first, then ks_mma.cu's warp shapes and, for
// batch-first signals with an even d, the pipelined tiles (distinct, all fitting).
std::vector<KSMmaTile> ks_mma_tile_candidates(
    Index out, Index d, Index batch, bool batch_contiguous,
    std::size_t shared_per_block = kSm90SharedMemoryPerBlock);

// A tile forced on this thread's tensor-core KS applications (tuning, benchmarks).
std::optional<KSMmaTile> forced_ks_mma_tile();
class KSMmaTileGuard {
 public:
  explicit KSMmaTileGuard(std::optional<KSMmaTile> tile);
  ~KSMmaTileGuard();
  KSMmaTileGuard(const KSMmaTileGuard&) = delete;
  KSMmaTileGuard& operator=(const KSMmaTileGuard&) = delete;

 private:
  std::optional<KSMmaTile> previous_;
};

}  // namespace strop::detail
