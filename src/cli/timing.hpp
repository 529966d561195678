#pragma once
// Wall-clock medians for the CLI's short benchmarks (device work is synchronised first).
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace strop::cli {

// Median seconds of `repeats` runs of `work` after `warmup` unmeasured runs.
inline double median_seconds(const std::function<void()>& work, int repeats = 7, int warmup = 2) {
  for (int i = 0; i < warmup; ++i)
    work();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace strop::cli
