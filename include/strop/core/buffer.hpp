#pragma once
// Owning storage for temporaries and device matrices: zero-filled host memory (from a
// per-thread cache of freed blocks, host_block_take) or stream-ordered device memory
// (cudaMallocAsync on the context's stream, so the driver's pool recycles it and no allocation
// blocks the host).
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include "strop/core/context.hpp"
#include "strop/core/host_memory.hpp"
#include "strop/core/view.hpp"

namespace strop {

namespace detail {
void* device_allocate(std::size_t bytes, Context& ctx);
void device_free(void* ptr, Context& ctx) noexcept;
// Frees device memory of `device` without a context (cudaFree: waits for the device's work).
void device_free_detached(void* ptr, int device) noexcept;
void copy_bytes(void* dst, MemorySpace dst_space, const void* src, MemorySpace src_space,
                std::size_t bytes, Context& ctx);
// rows * cols elements of a new matrix; refuses negative shapes and counts beyond Index.
inline Index checked_element_count(const char* what, Index rows, Index cols) {
  require<ShapeError>(rows >= 0 && cols >= 0, what, ": negative shape ", rows, "x", cols);
  Index count = 0;
  require<ShapeError>(!__builtin_mul_overflow(rows, cols, &count), what, ": ", rows, "x", cols,
                      " elements overflow a 64-bit count");
  return count;
}
}  // namespace detail

template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Index count, MemorySpace space, Context& ctx) : space_(space), count_(count), ctx_(&ctx) {
    require<ShapeError>(count >= 0, "Buffer: negative size ", count);
    require<ShapeError>(static_cast<std::size_t>(count) <= max_count(), "Buffer: ", count,
                        " elements of ", sizeof(T), " bytes exceed the address space");
    if (space == MemorySpace::Host) {
      detail::allocating_host("Buffer", count, "elements", sizeof(T), [&] {
        const auto [block, bytes] = detail::host_block_take(sizeof(T) * std::size_t(count));
        host_ = static_cast<T*>(block);
        host_bytes_ = bytes;
        std::uninitialized_value_construct_n(host_, count);  // zeros, as std::vector gave
      });
    } else if (count > 0) {
      device_ = static_cast<T*>(detail::device_allocate(sizeof(T) * count, ctx));
    }
  }
  ~Buffer() { release(); }
  // Frees without the context that allocated it (which may be destroyed first): for buffers
  // that outlive any one context, such as an operator's DeviceCache copies.
  void detach_from_context() noexcept {
    if (ctx_ != nullptr) detached_device_ = ctx_->device();
    ctx_ = nullptr;
  }
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      release();
      space_ = other.space_;
      count_ = other.count_;
      ctx_ = other.ctx_;
      detached_device_ = other.detached_device_;
      host_ = std::exchange(other.host_, nullptr);
      host_bytes_ = std::exchange(other.host_bytes_, 0);
      device_ = other.device_;
      other.device_ = nullptr;
      other.count_ = 0;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* data() { return space_ == MemorySpace::Host ? host_ : device_; }
  const T* data() const { return space_ == MemorySpace::Host ? host_ : device_; }
  Index size() const { return count_; }
  MemorySpace space() const { return space_; }
  // The context that allocated the buffer (nullptr for a default-constructed or detached one).
  Context* context() const { return ctx_; }

  // The most elements whose byte count a size_t holds.
  static constexpr std::size_t max_count() { return static_cast<std::size_t>(-1) / sizeof(T); }

 private:
  // Scalars only: host blocks are handed back without running destructors.
  static_assert(std::is_trivially_destructible_v<T>);
  void release() noexcept {
    detail::host_block_give(host_, host_bytes_);
    host_ = nullptr;
    host_bytes_ = 0;
    if (device_ != nullptr) {
      if (ctx_ != nullptr)
        detail::device_free(device_, *ctx_);
      else
        detail::device_free_detached(device_, detached_device_);
    }
    device_ = nullptr;
  }
  MemorySpace space_ = MemorySpace::Host;
  Index count_ = 0;
  Context* ctx_ = nullptr;
  int detached_device_ = 0;
  T* host_ = nullptr;
  std::size_t host_bytes_ = 0;
  T* device_ = nullptr;
};

// A temporary rows x cols matrix in the given space and layout, with its view.
template <class T>
struct TempMatrix {
  TempMatrix(Index rows, Index cols, Layout layout, MemorySpace space, Context& ctx)
      : buffer(detail::checked_element_count("temporary matrix", rows, cols), space, ctx),
        view(make_view(buffer.data(), rows, cols, layout, space)) {}
  Buffer<T> buffer;
  MatrixView<T> view;
};

// The layout temporaries take so that they match a view's memory order.
template <class T>
Layout layout_of(const MatrixView<T>& v) {
  return v.row_stride == 1 ? Layout::ColMajor : Layout::RowMajor;
}

}  // namespace strop
