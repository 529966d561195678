#pragma once
// DeviceCache<T>: the device copy of an operator's (immutable) parameters, uploaded on the
// first GPU application and reused afterwards (DESIGN.md section 4). Thread-safe.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "strop/core/buffer.hpp"

namespace strop {

template <class T>
class DeviceCache {
 public:
  // Device copy of host[0..count) on ctx's device (conjugated when `conjugate`).
  const T* get(const T* host, Index count, Context& ctx, bool conjugate = false) const {
    return get_or_make(
        count, ctx, [&] { return std::vector<T>(host, host + count); }, conjugate);
  }

  // Device copy of the `count` values that make() returns (called only on the first use
  // for this device and conjugation), for derived layouts of the parameters.
  const T* get_or_make(Index count, Context& ctx, const std::function<std::vector<T>()>& make,
                       bool conjugate = false) const {
    std::lock_guard lock(mutex_);
    auto key = std::make_pair(ctx.device(), conjugate);
    auto it = copies_.find(key);
    if (it == copies_.end()) {
      std::vector<T> host = make();
      require<ShapeError>(Index(host.size()) == count, "DeviceCache: made ", host.size(),
                          " values, expected ", count);
      if constexpr (Scalar<T>) {  // also caches index arrays, which have no conjugate
        if (conjugate) {
          for (auto& v : host)
            v = strop::conj(v);
        }
      }
      auto buffer = std::make_unique<Buffer<T>>(count, MemorySpace::Device, ctx);
      detail::copy_bytes(buffer->data(), MemorySpace::Device, host.data(), MemorySpace::Host,
                         sizeof(T) * count, ctx);
      // The copy serves every context of the device and outlives `ctx`: freed without it.
      buffer->detach_from_context();
      it = copies_.emplace(key, std::move(buffer)).first;
    }
    return it->second->data();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::pair<int, bool>, std::unique_ptr<Buffer<T>>> copies_;
};

}  // namespace strop
