#pragma once
// Run-time scalar names ("float32", ...) to compile-time types: the CLI reads files whose
// scalar type it learns only when it opens them.
#include <complex>
#include <string>

#include "strop/core/error.hpp"

namespace strop::cli {

inline constexpr const char* kScalarNames = "float32, float64, complex64 or complex128";

// Calls f.template operator()<T>() with T named by `scalar_type`; Error for other names.
template <class F>
decltype(auto) with_scalar_type(const std::string& scalar_type, F&& f) {
  if (scalar_type == "float32") return f.template operator()<float>();
  if (scalar_type == "float64") return f.template operator()<double>();
  if (scalar_type == "complex64") return f.template operator()<std::complex<float>>();
  if (scalar_type == "complex128") return f.template operator()<std::complex<double>>();
  throw Error("unknown scalar type '" + scalar_type + "' (expected " + kScalarNames + ")");
}

}  // namespace strop::cli
