// The tile rules of the tensor-core KS kernel (see ks_mma_tile.hpp).
#include "operators/ks/ks_mma_tile.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "strop/core/error.hpp"

namespace strop::detail {
namespace {
thread_local std::optional<KSMmaTile> forced_tile;

struct WarpShape {
  int mf, nf;
};
constexpr WarpShape kWarpShapes[] = {{1, 4}, {2, 4}, {2, 8}, {4, 8}};

// tj groups side by side, the warp shape given; the group's warps go to the outputs first
// (up to what the group has), then to the signals; few signals give warps back to the
// outputs.
KSMmaTile with_warps(int tj, WarpShape shape, Index out, Index batch) {
  KSMmaTile t{tj, 1, 1, shape.mf, shape.nf};
  const int warps = kMmaWarps / tj;
  const Index warp_out = 16 * shape.mf, warp_signals = 8 * shape.nf;
  while (t.warps_k * 2 <= warps && t.warps_k * warp_out < out &&
         (t.warps_k * 2 <= 2 || warps / (t.warps_k * 2) * warp_signals >= batch))
    t.warps_k *= 2;
  t.warps_n = warps / t.warps_k;
  return t;
}

int groups_side_by_side(Index d, bool batch_contiguous) {
  if (batch_contiguous || d == 1) return 1;
  return d >= 8 ? 8 : (d >= 4 ? 4 : 2);
}

// The pipelined kernel's tiles for batch-first signals: tj = 8 (one warp per group) where
// it divides d; tj = 4 with its two warps along the outputs (128 per tile) or the signals;
// tj = 2 (d = 2, 6, 10, ...) with 2 x 2 warps per group (128 x 128 tiles). For tj = 4, along
// the outputs measured 8-21 % faster on an H100 where the group has more than 64 of them,
// except where a 128-output tile would leave half of the last one idle (out = 192: 12-19 %
// slower).
std::vector<KSMmaTile> pipelined_tiles(Index out, Index d) {
  if (d % 8 == 0) return {KSMmaTile{8, 1, 1, 4, 8, true}};
  if (d % 2 != 0) return {};
  if (d % 4 != 0) return {KSMmaTile{2, 2, 2, 4, 8, true}};
  const KSMmaTile along_k{4, 2, 1, 4, 8, true}, along_n{4, 1, 2, 4, 8, true};
  if (out > 64 && out % 128 != 64) return {along_k, along_n};
  return {along_n, along_k};
}
}  // namespace

std::size_t KSMmaTile::shared_bytes() const {
  if (pipelined) return ks_mma_pipelined_shared_bytes(tj, warps_k);
  const std::size_t inputs = std::size_t(tj) * (tn() + 2 * tk()) * kMmaRow * 2;
  const std::size_t outputs = std::size_t(tj) * tk() * (tn() + 1) * 4;
  return std::max(inputs, outputs);
}

std::string to_string(const KSMmaTile& t) {
  return detail::concat("tj", t.tj, ".k", 16 * t.mf, "x", t.warps_k, ".n", 8 * t.nf, "x", t.warps_n,
                        t.pipelined ? ".pipe" : "");
}

std::optional<KSMmaTile> parse_ks_mma_tile(const std::string& name) {
  int tj = 0, k = 0, warps_k = 0, n = 0, warps_n = 0, end = 0;
  if (std::sscanf(name.c_str(), "tj%d.k%dx%d.n%dx%d%n", &tj, &k, &warps_k, &n, &warps_n, &end) !=
          5 ||
      k % 16 != 0 || n % 8 != 0)
    return std::nullopt;
  const bool pipelined = name.compare(end, std::string::npos, ".pipe") == 0;
  if (!pipelined && end != int(name.size())) return std::nullopt;
  const KSMmaTile t{tj, warps_k, warps_n, k / 16, n / 8, pipelined};
  if (!ks_mma_tile_supported(t) || to_string(t) != name) return std::nullopt;
  return t;
}

bool ks_mma_tile_supported(const KSMmaTile& t) {
  if (t.pipelined)
    return t.mf == 4 && t.nf == 8 &&
           ((t.tj == 8 && t.warps_k == 1 && t.warps_n == 1) ||
            (t.tj == 4 && t.warps_k * t.warps_n == 2) ||
            (t.tj == 2 && t.warps_k == 2 && t.warps_n == 2));
  const bool shape = std::any_of(std::begin(kWarpShapes), std::end(kWarpShapes),
                                 [&](WarpShape s) { return s.mf == t.mf && s.nf == t.nf; });
  const auto power_of_two = [](int v) { return v > 0 && std::has_single_bit(unsigned(v)); };
  return shape && power_of_two(t.tj) && power_of_two(t.warps_k) && power_of_two(t.warps_n) &&
         t.tj * t.warps_k * t.warps_n == kMmaWarps && t.shared_bytes() <= kSm90SharedMemoryPerBlock;
}

KSMmaTile ks_mma_fitting_tile(KSMmaTile tile, Index out, Index batch,
                              std::size_t shared_per_block) {
  tile.pipelined = false;
  if (tile.shared_bytes() <= shared_per_block) return tile;
  // Smaller warp tiles, largest first (kWarpShapes grows).
  for (auto shape = std::rbegin(kWarpShapes); shape != std::rend(kWarpShapes); ++shape) {
    const KSMmaTile t = with_warps(tile.tj, *shape, out, batch);
    if (t.shared_bytes() <= shared_per_block) return t;
  }
  return with_warps(tile.tj, kWarpShapes[0], out, batch);  // 40 KB at most
}

KSMmaTile ks_mma_heuristic_tile(Index out, Index d, Index batch, bool batch_contiguous,
                                std::size_t shared_per_block) {
  // Above a d = 48 every X unit of the pipelined kernel's copies sits in its own 128-byte
  // line, and it measured 1.1-2.3x slower than ks_mma.cu there on an H100 (bench/NOTES-ks.md).
  // Its tj = 2 tiles (128 outputs) were measured at d = 2 and 6 only, where ks_mma.cu was
  // 2-6x slower.
  const bool measured = d % 4 == 0 ? d <= 48 : d <= 6 && out > 64;
  if (!batch_contiguous && measured && out > 32 && batch > 32) {
    for (const KSMmaTile& t : pipelined_tiles(out, d))
      if (t.shared_bytes() <= shared_per_block) return t;
  }
  const int tj = groups_side_by_side(d, batch_contiguous);
  const WarpShape shape = tj >= 4 && out > 32 && batch > 32 ? WarpShape{4, 8}
                          : out <= 16                       ? WarpShape{1, 4}
                                                            : WarpShape{2, 4};
  return ks_mma_fitting_tile(with_warps(tj, shape, out, batch), out, batch, shared_per_block);
}

std::vector<KSMmaTile> ks_mma_tile_candidates(Index out, Index d, Index batch,
                                              bool batch_contiguous, std::size_t shared_per_block) {
  std::vector<KSMmaTile> tiles = {
      ks_mma_heuristic_tile(out, d, batch, batch_contiguous, shared_per_block)};
  auto add = [&](const KSMmaTile& t) {
    if (ks_mma_tile_supported(t) && t.shared_bytes() <= shared_per_block &&
        std::find(tiles.begin(), tiles.end(), t) == tiles.end())
      tiles.push_back(t);
  };
  const int tj = groups_side_by_side(d, batch_contiguous);
  for (const WarpShape shape : kWarpShapes)
    add(with_warps(tj, shape, out, batch));
  if (!batch_contiguous)
    for (const KSMmaTile& t : pipelined_tiles(out, d))
      add(t);
  return tiles;
}

std::optional<KSMmaTile> forced_ks_mma_tile() {
  return forced_tile;
}

KSMmaTileGuard::KSMmaTileGuard(std::optional<KSMmaTile> tile) : previous_(forced_tile) {
  require<DeviceError>(!tile || ks_mma_tile_supported(*tile), "ks mma kernel: unsupported tile ",
                       tile ? to_string(*tile) : "");
  forced_tile = tile;
}
KSMmaTileGuard::~KSMmaTileGuard() {
  forced_tile = previous_;
}

}  // namespace strop::detail
