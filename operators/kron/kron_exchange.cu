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
// (consecutive rows of this part); the shared tile turns one order into the other.
template <class W>
__global__ void __launch_bounds__(kThreads)
    pull_tiles(KronRotation r, KronPartSources<W> src, W* out, Index out_rs, Index out_cs,
               Index first, Index t_first, Index t_tiles, Index h_tiles, int tile_t, int tile_h,
               Index signals) {
  __shared__ W tile[2 * kTileElements];
  const int stride = tile_h == 1 ? 1 : tile_h + 1;  // odd for tile_h > 1: no bank conflicts
  const int elements = tile_t * tile_h;
  const Index tiles_per_signal = t_tiles * h_tiles;
  const Index tiles = tiles_per_signal * signals;
  const auto destination = [&](Index t, Index h, Index& n) {
    n = t * r.heads + h;
    return h < r.heads && t < r.tail && n >= first && n < first + r.part_rows;
  };
  for (Index block = blockIdx.x; block < tiles; block += gridDim.x) {
    const Index b = block / tiles_per_signal, within = block % tiles_per_signal;
    const Index t0 = t_first + (within / h_tiles) * tile_t, h0 = (within % h_tiles) * tile_h;
    for (int e = threadIdx.x; e < elements; e += blockDim.x) {
      const int t = e % tile_t, h = e / tile_t;
      Index n;
      if (destination(t0 + t, h0 + h, n)) {
        const Index k = (h0 + h) * r.tail + (t0 + t);
        const Index p = k / r.part_rows, i = k % r.part_rows;
        tile[t * stride + h] = src.part_data[p][i * src.row_stride + b * src.col_stride];
      }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < elements; e += blockDim.x) {
      const int h = e % tile_h, t = e / tile_h;
      Index n;
      if (destination(t0 + t, h0 + h, n))
        out[(n - first) * out_rs + b * out_cs] = tile[t * stride + h];
    }
    __syncthreads();
  }
}

// Any other strides: element by element, the signals fastest (row-major data moves in runs).
template <class W>
__global__ void __launch_bounds__(kThreads)
    pull_elements(KronRotation r, KronPartSources<W> src, W* out, Index out_rs, Index out_cs,
                  Index first, Index signals) {
  const Index total = r.part_rows * signals;
  for (Index e = blockIdx.x * Index(blockDim.x) + threadIdx.x; e < total;
       e += Index(gridDim.x) * blockDim.x) {
    const Index o = e / signals, b = e % signals;
    const Index k = r.source_row(first + o);
    out[o * out_rs + b * out_cs] =
        src.part_data[k / r.part_rows][(k % r.part_rows) * src.row_stride + b * src.col_stride];
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
  if (sources.row_stride == 1 && signals > 0) {
    // The part's rows n = t*heads + h cover t in [t_first, t_last] (partly at both ends).
    const Index t_first = first / r.heads, t_last = (first + r.part_rows - 1) / r.heads;
    const Index t_count = t_last - t_first + 1;
    int tile_h = static_cast<int>(std::min<Index>(pow2_at_least(r.heads), 32));
    const int tile_t =
        static_cast<int>(std::min<Index>(pow2_at_least(t_count), kTileElements / tile_h));
    tile_h = static_cast<int>(std::min<Index>(pow2_at_least(r.heads), kTileElements / tile_t));
    const Index t_tiles = (t_count + tile_t - 1) / tile_t;
    const Index h_tiles = (r.heads + tile_h - 1) / tile_h;
    const Index blocks = std::min(t_tiles * h_tiles * signals, grid_cap);
    pull_tiles<W><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        r, words, out_words, out.row_stride, out.col_stride, first, t_first, t_tiles, h_tiles,
        tile_t, tile_h, signals);
    check_launch("kron pull_tiles");
  } else {
    const Index blocks = std::min((r.part_rows * signals + kThreads - 1) / kThreads, grid_cap);
    pull_elements<W><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        r, words, out_words, out.row_stride, out.col_stride, first, signals);
    check_launch("kron pull_elements");
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
STROP_INSTANTIATE(float)
STROP_INSTANTIATE(double)
STROP_INSTANTIATE(std::complex<float>)
STROP_INSTANTIATE(std::complex<double>)
#undef STROP_INSTANTIATE

}  // namespace strop::detail
