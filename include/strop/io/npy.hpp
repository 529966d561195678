#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0): 1-D and 2-D arrays of float32,
// float64, complex64 and complex128, little- or big-endian ('|' and '=' read as this
// machine's order, as numpy does), C or Fortran order. A 1-D array of shape (n,) is read as
// an n x 1 column; 0-d and 3-d or higher arrays are refused.
//
// Every problem raises IoError naming the file: missing file, bad magic, unsupported
// version, malformed header dict, unsupported dtype (integers, float16, strings, objects,
// structured arrays), data that is shorter or longer than the shape says, and absurd
// shapes. The data size is checked against the file size before anything is allocated.
// NaN and infinite values are data, not errors, at this layer.
#include <string>

#include "strop/expr/operator_base.hpp"

namespace strop::io {

// Reads a 2-D (or 1-D) array as T. Only exact conversions happen: a file's values are
// loaded if T holds every one of them, so float32 loads as any T, float64 as double or
// complex<double>, complex64 as either complex type, complex128 as complex<double>.
// Anything else (float64 -> float32, complex -> real, complex128 -> complex64) is an
// IoError naming both types.
template <class T>
HostMatrix<T> load_npy(const std::string& path);

// Writes m as a C-order, little-endian 2-D array: numpy sees shape (rows, cols) and the
// dtype of T. Version 1.0 (2.0 only if the header would not fit), data aligned to 64 bytes.
// The file is written beside `path` under a temporary name and renamed over it at the end,
// so a failed save never destroys an existing file; IoError if the directory is not
// writable or the rename fails.
template <class T>
void save_npy(const std::string& path, const HostMatrix<T>& m);

// The dtype a file stores, as "float32", "float64", "complex64" or "complex128". Checks the
// whole header and the data size like load_npy, without reading the data.
std::string npy_scalar_type(const std::string& path);

}  // namespace strop::io
