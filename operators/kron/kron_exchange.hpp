#pragma once
// Internal: the exchange step of DistributedKron (strop/operators/kron_distributed.hpp), the
// row rotation that follows each local step, on the host and on the GPU
// (operators/kron/kron_exchange.cu).
#include "strop/core/context.hpp"
#include "strop/core/view.hpp"

#if defined(__CUDACC__)
#define STROP_KRON_HOST_DEVICE __host__ __device__
#else
#define STROP_KRON_HOST_DEVICE
#endif

namespace strop::detail {

// After a local step whose factors produce `tail` rows from each chunk, the global
// intermediate's row k = h*tail + t (h the chunk, t the row within it) moves to row
// t*heads + h, heads = K/tail: the factors just applied go to the front of the row index and
// the ones still to apply become trailing. Part p holds rows [p*part_rows, (p+1)*part_rows)
// before and after; tail divides part_rows.
struct KronRotation {
  Index part_rows = 0;
  Index tail = 1;
  Index heads = 0;

  // The global row that lands on global row n.
  STROP_KRON_HOST_DEVICE Index source_row(Index n) const { return (n % heads) * tail + n / heads; }
};

// The work spaces every part reads from: part p's rows (before the rotation) are
// part_data[p][i*row_stride + b*col_stride], i < part_rows; all parts share the strides.
template <class T>
struct KronPartSources {
  static constexpr int kMaxParts = 64;
  const T* part_data[kMaxParts] = {};
  int parts = 0;
  Index row_stride = 1;
  Index col_stride = 0;
};

// Part `part`'s rows after the rotation, read from every part's sources into `out`
// (part_rows x B, any strides), on the host.
template <class T>
void kron_rotation_pull_host(const KronRotation& rotation, int part,
                             const KronPartSources<T>& sources, MatrixView<T> out);

// The same on ctx's stream: the sources may live on other devices (peer access enabled by
// the caller). Signal-contiguous sources go through shared-memory tiles (reads along t,
// writes along h both coalesced), others element by element with the signals fastest.
template <class T>
void kron_rotation_pull_device(const KronRotation& rotation, int part,
                               const KronPartSources<T>& sources, MatrixView<T> out, Context& ctx);

// Makes memory of `owner` (cudaMalloc'd and its default pool's) readable by kernels on
// `reader`; once per pair in the process. DeviceError when the devices have no peer path.
void enable_peer_reads(int reader, int owner);

}  // namespace strop::detail
