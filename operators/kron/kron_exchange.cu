// DistributedKron's exchange on the GPU: each part pulls, from every part's work space, the
// rows it holds after the rotation (operators/kron/kron_exchange.hpp). Reads of other
// devices' memory go over the peer-to-peer path; a pull moves each element once.
#include <algorithm>
#include <bit>
#include <complex>
#include <mutex>
#include <set>
#include <type_traits>
#include <utility>

#include "operators/kron/kron_exchange.hpp"
#include "runtime/cuda_check.hpp"

namespace strop::detail {
namespace {

// Elements move as opaque words of their size and alignment (complex<float>: 8 bytes
// aligned to 4, so two 4-byte words).
struct Words8Align4 {
  unsigned int lo, hi;
};
struct Words16 {
  unsigned long long lo, hi;
};
template <class T>
using WordOf = std::conditional_t<
    sizeof(T) == 4, unsigned int,
    std::conditional_t<sizeof(T) == 8,
                       std::conditional_t<alignof(T) == 8, unsigned long long, Words8Align4>,
                       Words16>>;

constexpr int kTileElements = 1024;
constexpr int kThreads = 256;

// Signal-contiguous sources: a block moves a tile of tile_t x tile_h (t, h) pairs of one
// signal, the destination rows n = t*heads + h of this part (rows [first, first +
// part_rows)). Reads go along t (consecutive rows of a source chunk), writes along h
// (consecutive rows of this part); the shared tile turns one order into the other. Tile sides
// are powers of two (shifts and masks); the only divisions are one per h of a tile (which
// part holds chunk h), so the kernel moves data at the copy rate, not at the rate of 64-bit
// divisions.
template <class W>
__global__ void __launch_bounds__(kThreads)
    pull_tiles(KronRotation r, KronPartSources<W> src, W* out, Index out_rs, Index out_cs,
               Index first, Index t_first, Index t_tiles, Index h_tiles, int tile_t_log2,
               int tile_h_log2, Index signals) {
  __shared__ W tile[2 * kTileElements];
  __shared__ const W* chunk_start[kTileElements];  // source row (h, t = 0) of signal b
  const int tile_t = 1 << tile_t_log2, tile_h = 1 << tile_h_log2;
  const int stride = tile_h == 1 ? 1 : tile_h + 1;  // odd for tile_h > 1: no bank conflicts
  const int elements = tile_t * tile_h;
  const Index chunks_per_part = r.part_rows / r.tail;  // a part holds whole chunks
  const Index tiles_per_signal = t_tiles * h_tiles;
  const Index tiles = tiles_per_signal * signals;
  for (Index block = blockIdx.x; block < tiles; block += gridDim.x) {
    const Index b = block / tiles_per_signal, within = block % tiles_per_signal;
    const Index t0 = t_first + (within / h_tiles) * tile_t, h0 = (within % h_tiles) * tile_h;
    for (int j = threadIdx.x; j < tile_h; j += blockDim.x) {
      const Index h = h0 + j;
      const Index p = h < r.heads ? h / chunks_per_part : 0;
      chunk_start[j] = src.part_data[p] + (h - p * chunks_per_part) * r.tail * src.row_stride +
                       b * src.col_stride;
    }
    __syncthreads();
    const auto inside = [&](Index t, Index h, Index& n) {
      n = t * r.heads + h;
      return h < r.heads && t < r.tail && n >= first && n < first + r.part_rows;
    };
    for (int e = threadIdx.x; e < elements; e += blockDim.x) {
      const int t = e & (tile_t - 1), h = e >> tile_t_log2;
      Index n;
      if (inside(t0 + t, h0 + h, n))
        tile[t * stride + h] = chunk_start[h][(t0 + t) * src.row_stride];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < elements; e += blockDim.x) {
      const int h = e & (tile_h - 1), t = e >> tile_h_log2;
      Index n;
      if (inside(t0 + t, h0 + h, n)) out[(n - first) * out_rs + b * out_cs] = tile[t * stride + h];
    }
    __syncthreads();
  }
}

// Any other strides: a row of this part at a time (its source row found once), its signals
// spread over `lanes` threads (row-major data moves in contiguous runs).
template <class W>
__global__ void __launch_bounds__(kThreads)
    pull_rows(KronRotation r, KronPartSources<W> src, W* out, Index out_rs, Index out_cs,
              Index first, Index signals, int lanes_log2) {
  const int lanes = 1 << lanes_log2;
  const int lane = threadIdx.x & (lanes - 1);
  const Index rows_per_block = blockDim.x >> lanes_log2;
  for (Index o = blockIdx.x * rows_per_block + (threadIdx.x >> lanes_log2); o < r.part_rows;
       o += gridDim.x * rows_per_block) {
    const Index k = r.source_row(first + o);
    const W* from = src.part_data[k / r.part_rows] + (k % r.part_rows) * src.row_stride;
    W* to = out + o * out_rs;
    for (Index b = lane; b < signals; b += lanes)
      to[b * out_cs] = from[b * src.col_stride];
  }
}

Index pow2_at_least(Index v) {
  return std::bit_ceil(static_cast<unsigned long long>(std::max<Index>(v, 1)));
}

}  // namespace

template <class T>
void kron_rotation_pull_device(const KronRotation& r, int part, const KronPartSources<T>& sources,
                               MatrixView<T> out, Context& ctx) {
  using W = WordOf<T>;
  static_assert(sizeof(W) == sizeof(T) && alignof(W) <= alignof(T));
  const Index signals = out.cols;
  if (r.part_rows == 0 || signals == 0) return;
  KronPartSources<W> words;
  words.parts = sources.parts;
  words.row_stride = sources.row_stride;
  words.col_stride = sources.col_stride;
  for (int p = 0; p < sources.parts; ++p)
    words.part_data[p] = reinterpret_cast<const W*>(sources.part_data[p]);
  W* out_words = reinterpret_cast<W*>(out.data);
  const Index first = Index(part) * r.part_rows;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  const Index grid_cap = Index(multiprocessors()) * 16;
  if (sources.row_stride == 1) {
    // The part's rows n = t*heads + h cover t in [t_first, t_last] (partly at both ends).
    const Index t_first = first / r.heads, t_last = (first + r.part_rows - 1) / r.heads;
    const Index t_count = t_last - t_first + 1;
    Index tile_h = std::min<Index>(pow2_at_least(r.heads), 32);
    const Index tile_t = std::min<Index>(pow2_at_least(t_count), kTileElements / tile_h);
    tile_h = std::min<Index>(pow2_at_least(r.heads), kTileElements / tile_t);
    const Index t_tiles = (t_count + tile_t - 1) / tile_t;
    const Index h_tiles = (r.heads + tile_h - 1) / tile_h;
    const Index blocks = std::min(t_tiles * h_tiles * signals, grid_cap);
    pull_tiles<W><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        r, words, out_words, out.row_stride, out.col_stride, first, t_first, t_tiles, h_tiles,
        std::countr_zero(static_cast<unsigned long long>(tile_t)),
        std::countr_zero(static_cast<unsigned long long>(tile_h)), signals);
    check_launch("kron pull_tiles");
  } else {
    const Index lanes = std::min<Index>(pow2_at_least(signals), kThreads);
    const Index rows_per_block = kThreads / lanes;
    const Index blocks = std::min((r.part_rows + rows_per_block - 1) / rows_per_block, grid_cap);
    pull_rows<W><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        r, words, out_words, out.row_stride, out.col_stride, first, signals,
        std::countr_zero(static_cast<unsigned long long>(lanes)));
    check_launch("kron pull_rows");
  }
}

void enable_peer_reads(int reader, int owner) {
  if (reader == owner) return;
  static std::mutex mutex;
  static std::set<std::pair<int, int>> enabled;
  const std::lock_guard lock(mutex);
  if (enabled.count({reader, owner}) != 0) return;
  int possible = 0;
  check_cuda(cudaDeviceCanAccessPeer(&possible, reader, owner), "cudaDeviceCanAccessPeer");
  require<DeviceError>(possible != 0, "DistributedKron: device ", reader, " cannot read device ",
                       owner, "'s memory (no peer-to-peer path between them); put the parts on",
                       " devices with peer access (NVLink or PCIe)");
  int previous = 0;
  check_cuda(cudaGetDevice(&previous), "cudaGetDevice");
  check_cuda(cudaSetDevice(reader), "cudaSetDevice");
  const cudaError_t status = cudaDeviceEnablePeerAccess(owner, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled)
    cudaGetLastError();  // enabled by someone else: not an error, clear it
  else
    check_cuda(status, "cudaDeviceEnablePeerAccess");
  // Work spaces come from the owner's stream-ordered pool, which peer access does not cover.
  cudaMemPool_t pool = nullptr;
  check_cuda(cudaDeviceGetDefaultMemPool(&pool, owner), "cudaDeviceGetDefaultMemPool");
  cudaMemAccessDesc access{};
  access.location.type = cudaMemLocationTypeDevice;
  access.location.id = reader;
  access.flags = cudaMemAccessFlagsProtReadWrite;
  check_cuda(cudaMemPoolSetAccess(pool, &access, 1), "cudaMemPoolSetAccess");
  check_cuda(cudaSetDevice(previous), "cudaSetDevice");
  enabled.insert({reader, owner});
}

#define STROP_INSTANTIATE(T)                                                                      \
  template void kron_rotation_pull_device<T>(const KronRotation&, int, const KronPartSources<T>&, \
                                             MatrixView<T>, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
#undef STROP_INSTANTIATE

}  // namespace strop::detail
