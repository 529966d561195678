// Names of transform kinds and normalizations (CLI and error messages), and which sizes
// have a chain.
#include "operators/transforms/radix_plan.hpp"
#include "strop/core/error.hpp"
#include "strop/operators/transforms.hpp"

namespace strop {

std::string_view to_string(TransformKind kind) {
  switch (kind) {
    case TransformKind::Hadamard:
      return "hadamard";
    case TransformKind::Dft:
      return "dft";
    case TransformKind::Dct:
      return "dct";
  }
  return "?";
}

TransformKind parse_transform_kind(std::string_view name) {
  for (TransformKind kind : {TransformKind::Hadamard, TransformKind::Dft, TransformKind::Dct})
    if (name == to_string(kind)) return kind;
  throw PatternError(
      detail::concat("unknown transform kind '", name, "' (expected hadamard, dft or dct)"));
}

std::string_view to_string(Normalization normalization) {
  switch (normalization) {
    case Normalization::Backward:
      return "backward";
    case Normalization::Orthonormal:
      return "ortho";
    case Normalization::None:
      return "none";
  }
  return "?";
}

Normalization parse_normalization(std::string_view name) {
  for (Normalization n : {Normalization::Backward, Normalization::Orthonormal, Normalization::None})
    if (name == to_string(n)) return n;
  throw PatternError(
      detail::concat("unknown normalization '", name, "' (expected backward, ortho or none)"));
}

bool hadamard_size_supported(Index n) {
  if (n < 1) return false;
  for (Index m : {Index(1), Index(12), Index(20), Index(28)}) {
    if (n % m != 0) continue;
    const Index rest = n / m;
    if ((rest & (rest - 1)) == 0) return true;
  }
  return false;
}

bool fourier_size_supported(Index n) {
  return n >= 1 && transforms::split_odd(n).leading <= kMaxOddRadix;
}

}  // namespace strop
