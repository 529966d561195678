#pragma once
// What several benchmark programs share (a header beside them: bench/*.cpp are programs).
#include <algorithm>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "strop/strop.hpp"

namespace strop::bench {

// The median of a sample: the mean of the middle two for an even count (the upper middle
// alone would bias a summary of eight shapes upward), 0 when empty.
inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The flags every benchmark program takes, read the same way: --reps N (timed runs per
// measurement), --csv FILE (the rows) and --json FILE (the summary), into opt.reps, opt.csv
// and opt.json of the program's Options. value() returns the argument after the flag,
// consuming it. Returns whether `flag` was one of them (else the program reads its own).
template <class Options, class Value>
bool read_common_flag(const std::string& flag, const Value& value, Options& opt) {
  if (flag == "--reps") {
    opt.reps = std::stoi(value());
  } else if (flag == "--csv") {
    opt.csv = value();
  } else if (flag == "--json") {
    opt.json = value();
  } else {
    return false;
  }
  return true;
}

// The items of a comma-separated command-line list ("a,b,c"; none in "").
inline std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    items.push_back(item);
  return items;
}

// The integers of a comma-separated command-line list ("1,16,128"; std::stoll each).
inline std::vector<Index> index_list(const std::string& list) {
  std::vector<Index> values;
  for (const std::string& item : split_list(list))
    values.push_back(std::stoll(item));
  return values;
}

// How the helpers below time device work: each call between events, host enqueue included
// (Call, the default), the same with the L2 cache evicted before each call (Cold,
// median_cold_device_seconds_each: operands from DRAM), replays of a CUDA graph of 10 calls
// (Graph, median_graph_seconds_each: the GPU's time, without the host's enqueue and the gaps
// between launches), or the host's enqueue alone (Enqueue, median_enqueue_seconds_each).
enum class Timing { Call, Cold, Graph, Enqueue };
inline Timing& timing() {
  static Timing mode = Timing::Call;
  return mode;
}
inline const char* timing_name() {
  switch (timing()) {
    case Timing::Cold:
      return "cold";
    case Timing::Graph:
      return "graph";
    case Timing::Enqueue:
      return "enqueue";
    default:
      return "call";
  }
}

// Medians of the works timed in alternation, in the mode of timing().
inline std::vector<double> median_seconds_each(Context& ctx,
                                               const std::vector<std::function<void()>>& works,
                                               int reps) {
  switch (timing()) {
    case Timing::Graph:
      return median_graph_seconds_each(ctx, works, reps);
    case Timing::Enqueue:
      return median_enqueue_seconds_each(ctx, works, reps);
    case Timing::Cold:
      return median_cold_device_seconds_each(ctx, works, reps, 3);
    default:
      return median_device_seconds_each(ctx, works, reps, 3);
  }
}

// Medians of `work` with tuning off and with it on (strop/core/tuning.hpp), timed in
// alternation in the mode of timing(): {untuned, tuned}. The tuned work's first (warm-up) run
// measures what it tunes; tuning is left off.
inline std::vector<double> median_seconds_untuned_and_tuned(Context& ctx,
                                                            const std::function<void()>& work,
                                                            int reps) {
  auto with_tuning = [&](bool tuned) {
    return [&work, tuned] {
      set_tuning_enabled(tuned);
      work();
      set_tuning_enabled(false);
    };
  };
  return median_seconds_each(ctx, {with_tuning(false), with_tuning(true)}, reps);
}

// Median seconds of call(X, Y) on `batch` random device signals of `in` values in `layout`
// (X) into signals of `out` values (Y), of storage type T (3 warm-up runs), and with
// `with_memcpy` that of a cudaMemcpy of X's bytes, timed in alternation with the call (the
// memcpy reference of a short copy moves by up to 1.7x between runs; side by side, both see
// the same conditions).
struct CallAndMemcpy {
  double call = 0, memcpy = 0;
};
template <class T, class Call>
CallAndMemcpy time_device_call_and_memcpy(Index in, Index out, Index batch, Layout layout, int reps,
                                          Context& ctx, Call call, bool with_memcpy = true) {
  DeviceMatrix<T> x(in, batch, layout, ctx), y(out, batch, layout, ctx);
  fill_random_device(x.view(), 5, ctx);
  std::vector<std::function<void()>> works{[&] { call(ConstView<T>(x.view()), y.view()); }};
  std::optional<DeviceMatrix<T>> copy;
  if (with_memcpy) {
    copy.emplace(in, batch, layout, ctx);
    works.push_back([&] {
      detail::copy_bytes(copy->view().data, MemorySpace::Device, x.view().data, MemorySpace::Device,
                         sizeof(T) * std::size_t(in * batch), ctx);
    });
  }
  const std::vector<double> t = median_seconds_each(ctx, works, reps);
  return {t[0], with_memcpy ? t[1] : 0.0};
}

// Median seconds of call(X, Y) alone (time_device_call_and_memcpy without the memcpy).
template <class T, class Call>
double time_device_call(Index in, Index out, Index batch, Layout layout, int reps, Context& ctx,
                        Call call) {
  return time_device_call_and_memcpy<T>(in, out, batch, layout, reps, ctx, call, false).call;
}

// Median seconds of Y = A X on `batch` random device signals in `layout` (3 warm-up runs).
template <class T, class Operator>
double time_apply_device(const Operator& A, Index batch, Layout layout, int reps, Context& ctx) {
  return time_device_call<T>(
      A.cols(), A.rows(), batch, layout, reps, ctx,
      [&](ConstView<T> x, MatrixView<T> y) { apply(A, x, y, T(1), T(0), ctx); });
}

}  // namespace strop::bench
