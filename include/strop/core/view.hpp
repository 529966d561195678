#pragma once
// Non-owning views of N x B batches of signals, on the host or on a device.
//
// A view is (data, rows, cols, row_stride, col_stride, space). The two layouts of
// DESIGN.md are the two unit-stride cases: ColMajor (row_stride 1: each signal contiguous,
// PyTorch's batch-size-first) and RowMajor (col_stride 1: each feature's B values
// contiguous, the KS paper's batch-size-last). General strides exist because structured
// operators apply their pieces to strided sub-blocks of a batch (KS row groups, Kronecker
// slices) without copying. Eigen views of host views are in eigen_map.hpp; this header
// stays free of Eigen so that CUDA kernels can include it.
#include <functional>
#include <type_traits>

#include "strop/core/error.hpp"
#include "strop/core/scalar.hpp"

namespace strop {

enum class Layout { ColMajor, RowMajor };
enum class MemorySpace { Host, Device };

inline const char* to_string(Layout layout) {
  return layout == Layout::ColMajor ? "ColMajor" : "RowMajor";
}

template <class T>
struct MatrixView {
  T* data = nullptr;
  Index rows = 0;
  Index cols = 0;
  Index row_stride = 1;
  Index col_stride = 0;
  MemorySpace space = MemorySpace::Host;

  T* ptr(Index r, Index c) const { return data + r * row_stride + c * col_stride; }
  T& operator()(Index r, Index c) const { return *ptr(r, c); }

  bool is_col_major() const { return row_stride == 1 || rows == 1; }
  bool is_row_major() const { return col_stride == 1 || cols == 1; }

  // Rows [first, first + count).
  MatrixView row_block(Index first, Index count) const {
    return {ptr(first, 0), count, cols, row_stride, col_stride, space};
  }
  // Columns [first, first + count).
  MatrixView col_block(Index first, Index count) const {
    return {ptr(0, first), rows, count, row_stride, col_stride, space};
  }
  // Rows first, first + step, ..., count of them.
  MatrixView row_slice(Index first, Index count, Index step) const {
    return {ptr(first, 0), count, cols, row_stride * step, col_stride, space};
  }
  // A read-only view of the same memory.
  operator MatrixView<const T>() const  // NOLINT: views convert like pointers do
      requires(!std::is_const_v<T>) {
    return {data, rows, cols, row_stride, col_stride, space};
  }
};

template <class T>
using ConstView = MatrixView<const T>;

// Packed views of a buffer in one of the two layouts.
template <class T>
MatrixView<T> make_view(T* data, Index rows, Index cols, Layout layout,
                        MemorySpace space = MemorySpace::Host) {
  if (layout == Layout::ColMajor) return {data, rows, cols, 1, rows, space};
  return {data, rows, cols, cols, 1, space};
}

// True when the two views may touch the same memory (conservative: address ranges).
template <class T, class U>
bool may_overlap(const MatrixView<T>& a, const MatrixView<U>& b) {
  if (a.rows == 0 || a.cols == 0 || b.rows == 0 || b.cols == 0) return false;
  auto last = [](const auto& v) { return v.ptr(v.rows - 1, v.cols - 1); };
  const void* a0 = a.data;
  const void* a1 = last(a) + 1;
  const void* b0 = b.data;
  const void* b1 = last(b) + 1;
  std::less<const void*> before;
  return a.space == b.space && before(a0, b1) && before(b0, a1);
}

// True when no two elements of the view share an address. Exact for the packed layouts and
// their blocks and slices; conservative otherwise (the smaller stride times its extent must
// not pass the larger one, so some interleaved views with distinct elements are refused too).
template <class T>
bool elements_are_distinct(const MatrixView<T>& v) {
  if (v.rows == 0 || v.cols == 0 || (v.rows == 1 && v.cols == 1)) return true;
  if (v.rows <= 1) return v.col_stride != 0;
  if (v.cols <= 1) return v.row_stride != 0;
  const bool rows_inner = v.row_stride <= v.col_stride;
  const Index inner = rows_inner ? v.row_stride : v.col_stride;
  const Index outer = rows_inner ? v.col_stride : v.row_stride;
  const Index inner_extent = rows_inner ? v.rows : v.cols;
  return inner >= 1 && outer / inner_extent >= inner;
}

// The view rules of every application: nonnegative extents, data behind a nonempty view, no
// negative strides (kernels and Eigen maps walk forward), and distinct output elements (two
// results written to one address would race on the GPU and depend on the order of writes on
// the CPU). A host X may repeat elements (stride 0), a device X may not.
template <class T, class U>
void check_signal_strides(const char* name, const MatrixView<T>& X, const MatrixView<U>& Y) {
  // A view made by hand: a negative extent was read as an empty batch by some paths and
  // became a temporary's shape error in others; null data was dereferenced.
  auto well_formed = [&](const auto& v, const char* which) {
    require<ShapeError>(v.rows >= 0 && v.cols >= 0, name, ": ", which, " has a negative shape ",
                        v.rows, "x", v.cols);
    require<ShapeError>(v.data != nullptr || v.rows == 0 || v.cols == 0, name, ": ", which,
                        " is a ", v.rows, "x", v.cols, " view of null data");
  };
  well_formed(X, "X");
  well_formed(Y, "Y");
  auto forward = [](const auto& v) {
    return v.rows == 0 || v.cols == 0 || (v.row_stride >= 0 && v.col_stride >= 0);
  };
  require<ShapeError>(forward(X), name, ": X has a negative stride (", X.row_stride, ", ",
                      X.col_stride, "); views must have nonnegative strides");
  require<ShapeError>(forward(Y), name, ": Y has a negative stride (", Y.row_stride, ", ",
                      Y.col_stride, "); views must have nonnegative strides");
  require<ShapeError>(elements_are_distinct(Y), name, ": the strides (", Y.row_stride, ", ",
                      Y.col_stride, ") of the ", Y.rows, "x", Y.cols,
                      " output view Y make two of its elements share memory");
  // GPU kernels and cuBLAS address X through a leading dimension, which cannot express a
  // repeated element; on the host any forward strides are read as they are.
  require<DeviceError>(X.space == MemorySpace::Host || elements_are_distinct(X), name,
                       ": the strides (", X.row_stride, ", ", X.col_stride, ") of the ", X.rows,
                       "x", X.cols, " device view X make two of its elements share memory;",
                       " GPU kernels need distinct elements (copy X into a packed matrix)");
}

}  // namespace strop
