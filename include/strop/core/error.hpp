#pragma once
// The typed errors every public entry throws (DESIGN.md section 6). Messages name the
// offending values so that a user can fix the call without reading our code.
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace strop {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Operand shapes that do not fit together (rows/cols/batch mismatch, aliasing outputs).
class ShapeError : public Error {
 public:
  using Error::Error;
};
// An invalid Kronecker-sparse pattern or a chain whose patterns do not connect.
class PatternError : public Error {
 public:
  using Error::Error;
};
// No CUDA device, CUDA/cuBLAS failures, out of device memory, no GPU path for an operator.
class DeviceError : public Error {
 public:
  using Error::Error;
};
// HDF5/file problems: missing, truncated, malformed or inconsistent files.
class IoError : public Error {
 public:
  using Error::Error;
};
// Non-finite scalars or parameters where they would poison results; failed convergence.
class NumericalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
// Builds a message from streamable pieces: concat("rows ", 3, " != ", 4).
template <class... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Parts>(parts));
  return os.str();
}
}  // namespace detail

// Throws ErrorType with the concatenated message unless the condition holds.
template <class ErrorType, class... Parts>
void require(bool condition, Parts&&... parts) {
  if (!condition) throw ErrorType(detail::concat(std::forward<Parts>(parts)...));
}

}  // namespace strop
