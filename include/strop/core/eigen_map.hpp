#pragma once
// Bridges between Eigen matrices and strop views (host memory only).
#include <Eigen/Core>

#include "strop/core/view.hpp"

namespace strop {

// Views of Eigen matrices (host memory).
template <class Derived>
auto view(Eigen::PlainObjectBase<Derived>& m) {
  using T = typename Derived::Scalar;
  constexpr bool row_major = Derived::IsRowMajor;
  return make_view<T>(m.data(), m.rows(), m.cols(),
                      row_major ? Layout::RowMajor : Layout::ColMajor);
}
template <class Derived>
auto view(const Eigen::PlainObjectBase<Derived>& m) {
  using T = typename Derived::Scalar;
  constexpr bool row_major = Derived::IsRowMajor;
  return make_view<const T>(m.data(), m.rows(), m.cols(),
                            row_major ? Layout::RowMajor : Layout::ColMajor);
}

// Eigen's view of a host MatrixView with arbitrary strides. Eigen's products copy a
// non-unit-inner-stride operand into packed panels, so these stay correct for any stride.
template <class T>
using StridedMap = Eigen::Map<Eigen::Matrix<std::remove_const_t<T>, Eigen::Dynamic, Eigen::Dynamic>,
                              Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
template <class T>
using ConstStridedMap =
    Eigen::Map<const Eigen::Matrix<std::remove_const_t<T>, Eigen::Dynamic, Eigen::Dynamic>,
               Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

template <class T>
StridedMap<T> eigen_map(const MatrixView<T>& v) {
  return StridedMap<T>(v.data, v.rows, v.cols,
                       Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(v.col_stride, v.row_stride));
}
template <class T>
ConstStridedMap<T> eigen_map(const MatrixView<const T>& v) {
  return ConstStridedMap<T>(
      v.data, v.rows, v.cols,
      Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(v.col_stride, v.row_stride));
}

}  // namespace strop
