#include "cli/locations.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <vector>

#include "cli/scalar_dispatch.hpp"
#include "strop/io/hdf5.hpp"
#include "strop/io/npy.hpp"

namespace strop::cli {
namespace {

bool is_hdf5_name(const std::string& file) {
  return has_extension(file, ".h5") || has_extension(file, ".hdf5") || has_extension(file, ".he5");
}

// Where FILE ends in "FILE:PART" (PART an HDF5 dataset or an operator name); npos when the
// whole text is the file. A file name may hold ':' (a directory "a:b") and so may PART, so
// the ':' is chosen by what exists, then by the names' form:
//   - none when the whole text names an existing file;
//   - else the first ':' after an existing file;
//   - else (a file still to be written) the first ':' after an HDF5 name (.h5, .hdf5, .he5);
//   - else none when the whole text is a .npy or HDF5 name: "a:b/y.h5" is a file in the
//     directory "a:b", not the dataset "/b/y.h5" of a file "a";
//   - else the last ':'.
// Only the colons after which `part_ok` accepts the rest count.
std::size_t file_name_end(const std::string& text,
                          const std::function<bool(const std::string&)>& part_ok) {
  // A name that cannot be checked (too long, a loop of links) is reported when it is opened.
  const auto exists = [](const std::string& file, bool file_only) {
    std::error_code ec;
    const std::filesystem::file_status s = std::filesystem::status(file, ec);
    return std::filesystem::exists(s) && !(file_only && std::filesystem::is_directory(s));
  };
  if (exists(text, false)) return std::string::npos;
  std::vector<std::size_t> colons;
  for (std::size_t c = text.find(':'); c != std::string::npos; c = text.find(':', c + 1))
    if (c > 0 && part_ok(text.substr(c + 1))) colons.push_back(c);
  for (std::size_t c : colons)
    if (exists(text.substr(0, c), true)) return c;
  for (std::size_t c : colons)
    if (is_hdf5_name(text.substr(0, c))) return c;
  if (colons.empty() || has_extension(text, ".npy") || is_hdf5_name(text)) return std::string::npos;
  return colons.back();
}

// "o.h5:a/b" is a file in the directory "o.h5:a", since an operator name has no '/': when
// such a file is missing, the user most likely meant the operator "a/b". The hint to add to
// the message then, else "".
std::string operator_name_hint(const std::string& file) {
  for (std::size_t c = file.find(':'); c != std::string::npos; c = file.find(':', c + 1)) {
    const std::string part = file.substr(c + 1);
    const std::size_t name = std::min(part.find_first_not_of('/'), part.size());
    if (is_hdf5_name(file.substr(0, c)) && part.find('/', name) != std::string::npos)
      return " (an operator name is one path component, without '/': '" + file +
             "' is read as a file name, not as '" + file.substr(0, c) + ":NAME')";
  }
  return "";
}

void require_file(const std::string& file) {
  require<IoError>(file_exists(file), "no such file: '", file, "'", operator_name_hint(file));
  std::error_code ec;
  require<IoError>(!std::filesystem::is_directory(file, ec), "'", file, "' is a directory");
  require<IoError>(std::filesystem::is_regular_file(file, ec), "'", file,
                   "' is not a regular file");
}

template <class T, class S>
T convert_scalar(S v) {
  if constexpr (is_complex_v<T>) {
    using R = RealOf<T>;
    return T(static_cast<R>(std::real(v)), static_cast<R>(std::imag(v)));
  } else if constexpr (is_complex_v<S>) {
    return static_cast<T>(v.real());
  } else {
    return static_cast<T>(v);
  }
}

// NaN != NaN, yet a NaN converts to a NaN and loses nothing: a NaN matches a NaN.
template <class R>
bool same_number(R a, R b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

template <class S>
bool same_value(S a, S b) {
  if constexpr (is_complex_v<S>) {
    return same_number(a.real(), b.real()) && same_number(a.imag(), b.imag());
  } else {
    return same_number(a, b);
  }
}

template <class T, class S>
HostMatrix<T> convert(const HostMatrix<S>& m, Cast cast, const MatrixLocation& where) {
  if constexpr (std::is_same_v<T, S>) {
    return m;
  } else {
    const std::string from(ScalarTraits<S>::name), to(ScalarTraits<T>::name);
    if constexpr (is_complex_v<S> && !is_complex_v<T>) {
      require<IoError>((m.array().imag() == 0).all(), "'", where.text(), "' holds ", from,
                       " values with non-zero imaginary parts; they cannot become ", to);
    }
    HostMatrix<T> out = m.unaryExpr([](S v) { return convert_scalar<T>(v); });
    if constexpr (sizeof(RealOf<T>) < sizeof(RealOf<S>)) {
      if (cast == Cast::lossless) {
        const HostMatrix<S> back = out.unaryExpr([](T v) { return convert_scalar<S>(v); });
        const bool exact = back.binaryExpr(m, [](S a, S b) { return same_value(a, b); }).all();
        require<IoError>(exact, "'", where.text(), "' holds ", from, " values that ", to,
                         " cannot represent exactly; pass --cast to round them to ", to);
      }
    }
    return out;
  }
}

}  // namespace

bool has_extension(const std::string& file, const std::string& extension) {
  if (file.size() < extension.size()) return false;
  return std::equal(extension.rbegin(), extension.rend(), file.rbegin(), [](char a, char b) {
    return a == std::tolower(static_cast<unsigned char>(b));
  });
}

bool file_exists(const std::string& file) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(file, ec);
  // exists() reports a missing file without an error; what is left (a loop of symbolic
  // links, a name too long, a directory we may not search) leaves the question open.
  require<IoError>(!ec, "cannot check '", file, "': ", ec.message());
  return exists;
}

void require_operator_output(const std::string& file) {
  // Operators are saved in HDF5; a new file named like a NumPy array or a WAV file would
  // hold HDF5 under a misleading name (and `apply` refuses such names for its outputs).
  for (const char* other : {".npy", ".wav"})
    require<IoError>(file_exists(file) || !has_extension(file, other), "cannot save operators to '",
                     file, "': operators are saved in HDF5 files (.h5), not ", other, " files");
  if (file_exists(file)) {
    (void)io::list_operators(file);  // IoError when it is not an HDF5 file
    return;
  }
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(file, ec).parent_path();
  require<IoError>(!ec && std::filesystem::is_directory(dir, ec), "cannot write '", file,
                   "': no directory '", dir.string(), "'", operator_name_hint(file));
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) ||
         std::filesystem::absolute(a) == std::filesystem::absolute(b);
}

MatrixLocation parse_matrix_location(const std::string& text) {
  const std::size_t colon =
      file_name_end(text, [](const std::string& dataset) { return !dataset.empty(); });
  if (colon != std::string::npos) {
    std::string dataset = text.substr(colon + 1);
    if (dataset.front() != '/') dataset.insert(dataset.begin(), '/');
    return {text.substr(0, colon), dataset};
  }
  if (has_extension(text, ".npy")) return {text, ""};
  if (is_hdf5_name(text))
    throw IoError("'" + text + "' is an HDF5 file but names no dataset: write '" + text +
                  ":/dataset'");
  throw IoError("'" + text + "' is neither a .npy file nor 'file.h5:/dataset'");
}

std::string batch_rows_of_one_column(const std::string& command, const MatrixLocation& where,
                                     Index values) {
  return detail::concat(
      command, ": '", where.text(), "' holds one column of ", values, " values (a 1-D array, or ",
      values, " x 1), which --batch-rows (B x N, ", "one signal per row) would read as ", values,
      " signals of length 1; for one signal of ", values, " values, drop --batch-rows");
}

std::string stored_scalar_type(const MatrixLocation& location) {
  require_file(location.file);
  if (location.is_npy()) return io::npy_scalar_type(location.file);
  return io::matrix_scalar_type(location.file, location.dataset);
}

template <class T>
HostMatrix<T> read_matrix(const MatrixLocation& location, Cast cast) {
  return with_scalar_type(stored_scalar_type(location), [&]<class S>() {
    const HostMatrix<S> stored = location.is_npy()
                                     ? io::load_npy<S>(location.file)
                                     : io::load_matrix<S>(location.file, location.dataset);
    return convert<T, S>(stored, cast, location);
  });
}

template <class T>
void write_matrix(const MatrixLocation& location, const HostMatrix<T>& matrix) {
  if (location.is_npy()) {
    io::save_npy<T>(location.file, matrix);
  } else {
    io::save_matrix<T>(location.file, location.dataset, matrix);
  }
}

OperatorLocation parse_operator_location(const std::string& text) {
  // An operator name is one path component: a part with a '/' (past the leading ones that
  // "file.h5:/name" may have) is the rest of a file name, as in "dir:x/ops.h5".
  const auto without_root = [](const std::string& part) {
    return part.substr(std::min(part.find_first_not_of('/'), part.size()));
  };
  const std::size_t colon = file_name_end(text, [&](const std::string& name) {
    return without_root(name).find('/') == std::string::npos;
  });
  if (colon == std::string::npos) return {text, ""};
  return {text.substr(0, colon), without_root(text.substr(colon + 1))};
}

std::vector<io::StoredOperator> list_stored_operators(const std::string& file) {
  require_file(file);
  std::vector<io::StoredOperator> stored = io::list_operators(file);
  require<IoError>(!stored.empty(), "'", file, "' holds no strop operator");
  return stored;
}

ResolvedOperator resolve_operator(const OperatorLocation& location) {
  const std::vector<io::StoredOperator> stored = list_stored_operators(location.file);
  std::string names;
  for (const auto& s : stored)
    names += (names.empty() ? "" : ", ") + s.name;
  const io::StoredOperator* match = nullptr;
  if (location.name.empty()) {
    require<IoError>(stored.size() == 1, "'", location.file, "' holds ", stored.size(),
                     " operators (", names, "): name one as '", location.file, ":NAME'");
    match = &stored.front();
  } else {
    for (const auto& s : stored)
      if (s.name == location.name) match = &s;
    require<IoError>(match != nullptr, "no operator '", location.name, "' in '", location.file,
                     "' (it holds: ", names, ")");
  }
  return {match->name, match->scalar_type, match->rows, match->cols};
}

#define STROP_CLI_INSTANTIATE(T)                                      \
  template HostMatrix<T> read_matrix<T>(const MatrixLocation&, Cast); \
  template void write_matrix<T>(const MatrixLocation&, const HostMatrix<T>&);
STROP_FOR_EACH_SCALAR(STROP_CLI_INSTANTIATE)
#undef STROP_CLI_INSTANTIATE

}  // namespace strop::cli
