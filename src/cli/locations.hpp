#pragma once
// Where the strop tool reads and writes matrices and operators:
//   matrices:  "file.npy" or "file.h5:/dataset" (a 2-D dataset, rows x cols as numpy shows
//              it; a 1-D array is one column)
//   operators: "file.h5" (the only operator in it) or "file.h5:name"
// Reading converts the stored scalar type to the requested one when no value changes
// (float32 -> float64, real -> complex, or values that round-trip exactly), and refuses
// otherwise unless the caller allows lossy casts.
#include <string>

#include "strop/expr/operator_base.hpp"
#include "strop/io/hdf5.hpp"

namespace strop::cli {

// Whether `file` ends in `extension` (given in lower case, such as ".wav") in any case:
// "A.WAV" and "a.Wav" are WAV files too.
bool has_extension(const std::string& file, const std::string& extension);

// Whether `file` exists; IoError with the system's reason when that cannot be told (a loop
// of symbolic links, a name too long, a directory that may not be searched).
bool file_exists(const std::string& file);

// What saving operators to `file` would refuse, refused before any long computation: an
// existing file that is not HDF5, or a directory that does not exist.
void require_operator_output(const std::string& file);

// Whether two paths name the same file (also through links, or before the output exists).
bool same_file(const std::string& a, const std::string& b);

struct MatrixLocation {
  std::string file;
  std::string dataset;  // "/signals" for HDF5; empty for .npy
  bool is_npy() const { return dataset.empty(); }
  std::string text() const { return is_npy() ? file : file + ":" + dataset; }
};

// IoError naming the text when it is neither form.
MatrixLocation parse_matrix_location(const std::string& text);

// "float32", ... as stored; IoError when the file or dataset is missing or not a matrix.
std::string stored_scalar_type(const MatrixLocation& location);

enum class Cast { lossless, any };

// IoError on a lossy conversion with Cast::lossless (the message says what would be lost),
// and always on complex -> real with non-zero imaginary parts.
template <class T>
HostMatrix<T> read_matrix(const MatrixLocation& location, Cast cast = Cast::lossless);

template <class T>
void write_matrix(const MatrixLocation& location, const HostMatrix<T>& matrix);

// --batch-rows reads a matrix as B x N, one signal per row, so a 1-D array of n values (read
// as one column, n x 1) would be n signals of length 1: never what is meant. The message for
// that case, `values` being n.
std::string batch_rows_of_one_column(const std::string& command, const MatrixLocation& where,
                                     Index values);

struct OperatorLocation {
  std::string file;
  std::string name;  // empty: the file's only operator
};
OperatorLocation parse_operator_location(const std::string& text);

// The operator's name in the file (the only one when location.name is empty) and its
// scalar type; IoError listing the names when it is missing or ambiguous.
struct ResolvedOperator {
  std::string name;
  std::string scalar_type;
  Index rows = 0;
  Index cols = 0;
};
ResolvedOperator resolve_operator(const OperatorLocation& location);

// The operators in `file`; IoError when it is missing or holds none.
std::vector<io::StoredOperator> list_stored_operators(const std::string& file);

}  // namespace strop::cli
