#pragma once
// Timing and data helpers for benchmarks (no timing ever goes into tests).
#include <functional>
#include <vector>

#include "strop/core/context.hpp"
#include "strop/core/view.hpp"

namespace strop {

// Median seconds of `repeats` runs of `work` (which queues device work on ctx's stream),
// after `warmup` unmeasured runs, measured with CUDA events. DeviceError without CUDA.
double median_device_seconds(Context& ctx, const std::function<void()>& work, int repeats = 20,
                             int warmup = 3);

// The same for several works timed in alternation (one run of each per round, `repeats`
// rounds): their medians, in order. Ratios between them then see the same clocks and
// neighbours (a short copy's time moves by up to 1.7x between runs of a program).
std::vector<double> median_device_seconds_each(Context& ctx,
                                               const std::vector<std::function<void()>>& works,
                                               int repeats = 20, int warmup = 3);

// As median_device_seconds_each, with the device's L2 cache evicted before every run (untimed:
// a write over four times its size, then the device idle), so that the works' operands come
// from DRAM, as in a pass over a model whose weights exceed the cache (a layer's weights read
// once per token). Warm-up runs are not preceded by the eviction. DeviceError without CUDA.
std::vector<double> median_cold_device_seconds_each(Context& ctx,
                                                    const std::vector<std::function<void()>>& works,
                                                    int repeats = 20, int warmup = 3);

// Median seconds per call of each work replayed from a CUDA graph: the `calls_per_graph`
// calls of a work are captured once on ctx's stream, and each of the `repeats` replays is
// timed with events (works in alternation, as above). The host's enqueue and the gaps between
// launches stay out: this is the GPU's time for the work, what a caller that captures its
// calls in graphs sees. NaN for a work whose calls cannot be captured (the warm-up runs
// matter: an operator's first call on the device uploads its values synchronously, which a
// capture cannot hold). DeviceError without CUDA.
std::vector<double> median_graph_seconds_each(Context& ctx,
                                              const std::vector<std::function<void()>>& works,
                                              int repeats = 20, int calls_per_graph = 10,
                                              int warmup = 3);

// Median host seconds each work takes to return when the device is idle before it (its
// enqueue cost: argument checks, planning, allocations, launches), works in alternation as
// above. The device time of a short call is this plus what its kernels take, since the GPU
// waits for the first launch. DeviceError without CUDA.
std::vector<double> median_enqueue_seconds_each(Context& ctx,
                                                const std::vector<std::function<void()>>& works,
                                                int repeats = 20, int warmup = 3);

// Median wall-clock seconds of `repeats` runs of `work` after `warmup` unmeasured runs (host
// work, or device work that synchronises itself).
double median_host_seconds(const std::function<void()>& work, int repeats = 7, int warmup = 2);

// Fills a device view with uniform values in [-1, 1) from a counter-based hash of `seed`
// (benchmarks need non-zero data of many gigabytes without a host round trip).
template <class T>
void fill_random_device(MatrixView<T> view, unsigned long long seed, Context& ctx);

// Device-to-device copy bandwidth in bytes per second (bytes read + bytes written), the
// memory-traffic ceiling the benchmarks compare against.
double measure_copy_bandwidth(Context& ctx, std::size_t bytes = std::size_t(1) << 30);

}  // namespace strop
