#pragma once
// DeviceMatrix<T>: a rows x cols matrix in device memory, in either layout, with explicit
// host <-> device copies. Never managed memory (DESIGN.md section 4).
#include <Eigen/Core>
#include <utility>

#include "strop/core/buffer.hpp"
#include "strop/core/eigen_map.hpp"

namespace strop {

template <class T>
using HostMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

template <class T>
class DeviceMatrix {
 public:
  DeviceMatrix() = default;
  DeviceMatrix(Index rows, Index cols, Layout layout = Layout::ColMajor,
               Context& ctx = default_context())
      : rows_(rows),
        cols_(cols),
        layout_(layout),
        buffer_(detail::checked_element_count("DeviceMatrix", rows, cols), MemorySpace::Device,
                ctx) {}
  // A moved-from matrix is empty (0 x 0), not a shape over freed memory.
  DeviceMatrix(DeviceMatrix&& other) noexcept { *this = std::move(other); }
  DeviceMatrix& operator=(DeviceMatrix&& other) noexcept {
    if (this != &other) {
      rows_ = std::exchange(other.rows_, 0);
      cols_ = std::exchange(other.cols_, 0);
      layout_ = other.layout_;
      buffer_ = std::move(other.buffer_);
    }
    return *this;
  }
  DeviceMatrix(const DeviceMatrix&) = delete;
  DeviceMatrix& operator=(const DeviceMatrix&) = delete;

  // Uploads a host matrix (stored in the requested layout on the device).
  static DeviceMatrix from_host(const HostMatrix<T>& host, Layout layout = Layout::ColMajor,
                                Context& ctx = default_context()) {
    DeviceMatrix m(host.rows(), host.cols(), layout, ctx);
    m.upload(host, ctx);
    return m;
  }

  // The context whose stream allocated the matrix; copies without an explicit context run on
  // its stream, so they are ordered after the work that context queued on the matrix.
  Context& context() const {
    Context* ctx = buffer_.context();
    return ctx != nullptr ? *ctx : default_context();
  }

  // Copies a host matrix of the same shape into this one.
  void upload(const HostMatrix<T>& host) { upload(host, context()); }
  void upload(const HostMatrix<T>& host, Context& ctx) {
    require<ShapeError>(host.rows() == rows_ && host.cols() == cols_, "DeviceMatrix::upload: host ",
                        host.rows(), "x", host.cols(), " into device ", rows_, "x", cols_);
    if (layout_ == Layout::ColMajor) {
      detail::copy_bytes(buffer_.data(), MemorySpace::Device, host.data(), MemorySpace::Host,
                         bytes(), ctx);
    } else {
      Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = host;
      detail::copy_bytes(buffer_.data(), MemorySpace::Device, row_major.data(), MemorySpace::Host,
                         bytes(), ctx);
    }
  }

  // Downloads into a (column-major) host matrix; waits for the copy.
  HostMatrix<T> to_host() const { return to_host(context()); }
  HostMatrix<T> to_host(Context& ctx) const {
    if (layout_ == Layout::ColMajor) {
      HostMatrix<T> host(rows_, cols_);
      detail::copy_bytes(host.data(), MemorySpace::Host, buffer_.data(), MemorySpace::Device,
                         bytes(), ctx);
      return host;
    }
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major(rows_, cols_);
    detail::copy_bytes(row_major.data(), MemorySpace::Host, buffer_.data(), MemorySpace::Device,
                       bytes(), ctx);
    return row_major;
  }

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Layout layout() const { return layout_; }
  T* data() { return buffer_.data(); }
  const T* data() const { return buffer_.data(); }

  MatrixView<T> view() { return make_view(data(), rows_, cols_, layout_, MemorySpace::Device); }
  ConstView<T> view() const {
    return make_view(data(), rows_, cols_, layout_, MemorySpace::Device);
  }

 private:
  std::size_t bytes() const { return sizeof(T) * static_cast<std::size_t>(rows_ * cols_); }
  Index rows_ = 0;
  Index cols_ = 0;
  Layout layout_ = Layout::ColMajor;
  Buffer<T> buffer_;
};

template <class T>
DeviceMatrix<T> to_device(const HostMatrix<T>& host, Layout layout = Layout::ColMajor,
                          Context& ctx = default_context()) {
  return DeviceMatrix<T>::from_host(host, layout, ctx);
}

template <class T>
auto view(DeviceMatrix<T>& m) {
  return m.view();
}
template <class T>
auto view(const DeviceMatrix<T>& m) {
  return m.view();
}

}  // namespace strop
