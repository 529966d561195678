#pragma once
// Internal: the measurement behind tuning (strop/core/tuning.hpp), shared by the engines
// that have candidates (Kron-matmul plans, KS algorithms). The cached choice for `key` if
// there is one; otherwise each candidate is run a few times on the caller's stream (by
// `run`, into scratch memory: never the caller's output), the fastest is stored and
// returned. A candidate that throws (an unsupported case) is skipped.
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "strop/core/error.hpp"
#include "strop/core/timing.hpp"
#include "strop/core/tuning.hpp"

namespace strop::detail {

// Changes whenever the tuning cache's choices do (stored, loaded or cleared): a memo of
// resolved choices is valid while this stays the same.
std::uint64_t tuning_generation();

template <class Candidate, class Name>
Candidate tuned_choice_by_measurement(const std::string& key, std::span<const Candidate> candidates,
                                      Name name, const std::function<void(Candidate)>& run,
                                      Context& ctx) {
  if (const auto cached = tuned_choice(key))
    for (const Candidate& c : candidates)
      if (std::string(name(c)) == *cached) return c;
  Candidate best = candidates.front();
  double best_seconds = -1;
  for (const Candidate& c : candidates) {
    double seconds = 0;
    try {
      seconds = median_device_seconds(
          ctx, [&] { run(c); }, 3, 1);
    } catch (const DeviceError&) {
      throw;  // a device failure is not a slow candidate
    } catch (const Error&) {
      continue;
    }
    if (best_seconds < 0 || seconds < best_seconds) {
      best = c;
      best_seconds = seconds;
    }
  }
  store_tuned_choice(key, std::string(name(best)));
  return best;
}

}  // namespace strop::detail
