#include "strop/core/timing.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "strop/core/buffer.hpp"
#include "strop/core/reduced_precision.hpp"

namespace strop {

namespace {

using Work = std::function<void()>;

// Each work's median of `seconds_of` (one timed run) over `repeats` rounds that run the works
// in alternation, after `warmup` untimed rounds.
std::vector<double> medians_in_alternation(const std::vector<Work>& works, int repeats, int warmup,
                                           const std::function<double(const Work&)>& seconds_of) {
  require<ShapeError>(repeats >= 1 && warmup >= 0, "timing: needs at least one timed run and",
                      " no negative warm-up, got repeats = ", repeats, ", warmup = ", warmup);
  for (int i = 0; i < warmup; ++i)
    for (const auto& work : works)
      work();
  std::vector<std::vector<double>> times(works.size());
  for (int i = 0; i < repeats; ++i)
    for (std::size_t w = 0; w < works.size(); ++w)
      times[w].push_back(seconds_of(works[w]));
  std::vector<double> medians;
  for (auto& t : times) {
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

double wall_seconds(const Work& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

double median_host_seconds(const std::function<void()>& work, int repeats, int warmup) {
  return medians_in_alternation({work}, repeats, warmup, wall_seconds)[0];
}

#if STROP_HAVE_CUDA
namespace {

// Each work's median time between events on ctx's stream, with `before` (untimed; may be
// empty) ahead of every timed run.
std::vector<double> medians_between_events(Context& ctx, const std::vector<Work>& works,
                                           int repeats, int warmup,
                                           const std::function<void()>& before) {
  const detail::DeviceScope device_scope;  // events and work on ctx's device
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  cudaEvent_t start, stop;
  detail::check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  detail::check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  const std::vector<double> medians =
      medians_in_alternation(works, repeats, warmup, [&](const Work& work) {
        if (before) before();
        detail::check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
        work();
        detail::check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
        detail::check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        detail::check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        return ms * 1e-3;
      });
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return medians;
}

}  // namespace

std::vector<double> median_device_seconds_each(Context& ctx,
                                               const std::vector<std::function<void()>>& works,
                                               int repeats, int warmup) {
  return medians_between_events(ctx, works, repeats, warmup, {});
}

std::vector<double> median_cold_device_seconds_each(Context& ctx,
                                                    const std::vector<std::function<void()>>& works,
                                                    int repeats, int warmup) {
  const detail::DeviceScope device_scope;
  auto stream = static_cast<cudaStream_t>(ctx.stream());  // makes ctx's device current
  int l2_bytes = 0;
  detail::check_cuda(
      cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, detail::current_device()),
      "cudaDeviceGetAttribute(L2CacheSize)");
  // Four times the cache: its lines are spread over partitions and replaced by an unpublished
  // policy, so twice its size may leave some of a work's lines in place.
  const std::size_t bytes = std::max<std::size_t>(4 * std::size_t(l2_bytes), std::size_t(64) << 20);
  Buffer<char> evict(Index(bytes), MemorySpace::Device, ctx);
  int round = 0;
  return medians_between_events(ctx, works, repeats, warmup, [&] {
    detail::check_cuda(cudaMemsetAsync(evict.data(), ++round & 0xff, bytes, stream),
                       "cudaMemsetAsync");
    ctx.synchronize();  // the device idle before the timed call, as in median_device_seconds_each
  });
}

std::vector<double> median_enqueue_seconds_each(Context& ctx,
                                                const std::vector<std::function<void()>>& works,
                                                int repeats, int warmup) {
  const detail::DeviceScope device_scope;  // events and work on ctx's device
  // The stream exists only with a visible device (DeviceError otherwise): without one the
  // synchronizations below did nothing and host timings came back as enqueue costs.
  (void)ctx.stream();
  const std::vector<double> medians =
      medians_in_alternation(works, repeats, warmup, [&](const Work& work) {
        ctx.synchronize();  // the device idle before the call
        return wall_seconds(work);
      });
  ctx.synchronize();
  return medians;
}

namespace {

// The graph of `calls` consecutive calls of `work` on `stream`, or null if capturing fails
// (the capture is ended and the error cleared, so later calls run normally).
cudaGraphExec_t capture_calls(cudaStream_t stream, const std::function<void()>& work, int calls) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  bool thrown = false;
  try {
    for (int i = 0; i < calls; ++i)
      work();
  } catch (const Error&) {
    thrown = true;  // a call that cannot be captured (an invalidated capture fails it)
  } catch (...) {
    cudaGraph_t partial = nullptr;  // leave the stream out of capture mode, then pass it on
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
    (void)cudaGetLastError();
    throw;
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  if (!thrown && ended == cudaSuccess &&
      cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch) != cudaSuccess)
    exec = nullptr;
  if (graph) cudaGraphDestroy(graph);
  (void)cudaGetLastError();
  return exec;
}

}  // namespace

std::vector<double> median_graph_seconds_each(Context& ctx,
                                              const std::vector<std::function<void()>>& works,
                                              int repeats, int calls_per_graph, int warmup) {
  const detail::DeviceScope device_scope;  // events and work on ctx's device
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  for (int i = 0; i < warmup; ++i)
    for (const auto& work : works)
      work();
  detail::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<cudaGraphExec_t> graphs;
  std::vector<std::function<void()>> replays;
  for (const auto& work : works) {
    cudaGraphExec_t g = capture_calls(stream, work, calls_per_graph);
    graphs.push_back(g);
    replays.push_back([g, stream] {
      if (g) detail::check_cuda(cudaGraphLaunch(g, stream), "cudaGraphLaunch");
    });
  }
  // One unmeasured replay of each uploads the graphs.
  const std::vector<double> medians = median_device_seconds_each(ctx, replays, repeats, 1);
  std::vector<double> per_call;
  for (std::size_t w = 0; w < works.size(); ++w)
    per_call.push_back(graphs[w] ? medians[w] / calls_per_graph
                                 : std::numeric_limits<double>::quiet_NaN());
  for (cudaGraphExec_t g : graphs)
    if (g) cudaGraphExecDestroy(g);
  return per_call;
}

double measure_copy_bandwidth(Context& ctx, std::size_t bytes) {
  const detail::DeviceScope device_scope;  // events and work on ctx's device
  Buffer<char> src(Index(bytes), MemorySpace::Device, ctx),
      dst(Index(bytes), MemorySpace::Device, ctx);
  detail::check_cuda(cudaMemsetAsync(src.data(), 1, bytes, static_cast<cudaStream_t>(ctx.stream())),
                     "cudaMemset");
  const double t = median_device_seconds(ctx, [&] {
    detail::copy_bytes(dst.data(), MemorySpace::Device, src.data(), MemorySpace::Device, bytes,
                       ctx);
  });
  return 2.0 * double(bytes) / t;
}
#else
std::vector<double> median_device_seconds_each(Context&, const std::vector<std::function<void()>>&,
                                               int, int) {
  throw DeviceError("median_device_seconds: strop was built without CUDA");
}
std::vector<double> median_cold_device_seconds_each(Context&,
                                                    const std::vector<std::function<void()>>&, int,
                                                    int) {
  throw DeviceError("median_cold_device_seconds: strop was built without CUDA");
}
std::vector<double> median_enqueue_seconds_each(Context&, const std::vector<std::function<void()>>&,
                                                int, int) {
  throw DeviceError("median_enqueue_seconds: strop was built without CUDA");
}
std::vector<double> median_graph_seconds_each(Context&, const std::vector<std::function<void()>>&,
                                              int, int, int) {
  throw DeviceError("median_graph_seconds: strop was built without CUDA");
}
double measure_copy_bandwidth(Context&, std::size_t) {
  throw DeviceError("measure_copy_bandwidth: strop was built without CUDA");
}
template <class T>
void fill_random_device(MatrixView<T>, unsigned long long, Context&) {
  throw DeviceError("fill_random_device: strop was built without CUDA");
}
#define STROP_INSTANTIATE(T) \
  template void fill_random_device(MatrixView<T> view, unsigned long long seed, Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)
#endif

double median_device_seconds(Context& ctx, const std::function<void()>& work, int repeats,
                             int warmup) {
  return median_device_seconds_each(ctx, {work}, repeats, warmup).front();
}

}  // namespace strop
