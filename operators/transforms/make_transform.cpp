// The run-time choice of a transform (the CLI's entry).
#include "strop/core/error.hpp"
#include "strop/operators/transforms.hpp"

namespace strop {

template <class T>
AnyOperator<T> make_transform(TransformKind kind, Index n, bool inverse,
                              const TransformOptions& options) {
  switch (kind) {
    case TransformKind::Hadamard:
      return inverse ? inverse_hadamard<T>(n, options) : hadamard<T>(n, options);
    case TransformKind::Dft:
      if constexpr (is_complex_v<T>) {
        return inverse ? AnyOperator<T>(inverse_dft<T>(n, options))
                       : AnyOperator<T>(dft<T>(n, options));
      } else {
        throw PatternError(detail::concat("dft: the DFT of ", ScalarTraits<T>::name,
                                          " signals has no real chain; promote the signals to "
                                          "complex (imaginary part zero)"));
      }
    case TransformKind::Dct:
      return inverse ? AnyOperator<T>(inverse_dct<T>(n, options))
                     : AnyOperator<T>(dct<T>(n, options));
  }
  throw PatternError("make_transform: unknown transform kind");
}

#define STROP_INSTANTIATE(T) \
  template AnyOperator<T> make_transform<T>(TransformKind, Index, bool, const TransformOptions&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
