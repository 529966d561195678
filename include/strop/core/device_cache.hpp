#pragma once
// DeviceCache<T>: the device copy of an operator's (immutable) parameters, uploaded on the
// first GPU application and reused afterwards (DESIGN.md section 4). Thread-safe.
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "strop/core/buffer.hpp"

namespace strop {

template <class T>
class DeviceCache {
 public:
  // Device copy of host[0..count) on ctx's device (conjugated when `conjugate`).
  const T* get(const T* host, Index count, Context& ctx, bool conjugate = false) const {
    std::lock_guard lock(mutex_);
    auto key = std::make_pair(ctx.device(), conjugate);
    auto it = copies_.find(key);
    if (it == copies_.end()) {
      auto buffer = std::make_unique<Buffer<T>>(count, MemorySpace::Device, ctx);
      if (conjugate) {
        std::vector<T> conj_host(host, host + count);
        for (auto& v : conj_host)
          v = strop::conj(v);
        detail::copy_bytes(buffer->data(), MemorySpace::Device, conj_host.data(), MemorySpace::Host,
                           sizeof(T) * count, ctx);
      } else {
        detail::copy_bytes(buffer->data(), MemorySpace::Device, host, MemorySpace::Host,
                           sizeof(T) * count, ctx);
      }
      it = copies_.emplace(key, std::move(buffer)).first;
    }
    return it->second->data();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::pair<int, bool>, std::unique_ptr<Buffer<T>>> copies_;
};

}  // namespace strop
