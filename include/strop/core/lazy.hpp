#pragma once
// Lazy<V>: a value built on its first use and kept, thread-safe. For forms derived from an
// immutable operator on demand, such as the Kronecker-sparse form its GPU path applies.
#include <functional>
#include <mutex>
#include <optional>

namespace strop {

template <class V>
class Lazy {
 public:
  const V& get(const std::function<V()>& make) const {
    std::lock_guard lock(mutex_);
    if (!value_) value_.emplace(make());
    return *value_;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::optional<V> value_;
};

}  // namespace strop
