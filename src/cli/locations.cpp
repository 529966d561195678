#include "cli/locations.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "cli/scalar_dispatch.hpp"
#include "strop/io/hdf5.hpp"
#include "strop/io/npy.hpp"

namespace strop::cli {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  if (text.size() < suffix.size()) return false;
  return std::equal(suffix.rbegin(), suffix.rend(), text.rbegin(), [](char a, char b) {
    return a == std::tolower(static_cast<unsigned char>(b));
  });
}

bool is_hdf5_name(const std::string& file) {
  return ends_with(file, ".h5") || ends_with(file, ".hdf5") || ends_with(file, ".he5");
}

void require_file(const std::string& file) {
  require<IoError>(file_exists(file), "no such file: '", file, "'");
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

bool file_exists(const std::string& file) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(file, ec);
  // exists() reports a missing file without an error; what is left (a loop of symbolic
  // links, a name too long, a directory we may not search) leaves the question open.
  require<IoError>(!ec, "cannot check '", file, "': ", ec.message());
  return exists;
}

void require_operator_output(const std::string& file) {
  if (file_exists(file)) {
    (void)io::list_operators(file);  // IoError when it is not an HDF5 file
    return;
  }
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(file, ec).parent_path();
  require<IoError>(!ec && std::filesystem::is_directory(dir, ec), "cannot write '", file,
                   "': no directory '", dir.string(), "'");
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) ||
         std::filesystem::absolute(a) == std::filesystem::absolute(b);
}

MatrixLocation parse_matrix_location(const std::string& text) {
  if (ends_with(text, ".npy")) return {text, ""};
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos && colon > 0 && colon + 1 < text.size()) {
    std::string dataset = text.substr(colon + 1);
    if (dataset.front() != '/') dataset.insert(dataset.begin(), '/');
    return {text.substr(0, colon), dataset};
  }
  if (is_hdf5_name(text))
    throw IoError("'" + text + "' is an HDF5 file but names no dataset: write '" + text +
                  ":/dataset'");
  throw IoError("'" + text + "' is neither a .npy file nor 'file.h5:/dataset'");
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
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos && colon > 0 && !file_exists(text)) {
    std::string name = text.substr(colon + 1);
    while (!name.empty() && name.front() == '/')
      name.erase(name.begin());
    return {text.substr(0, colon), name};
  }
  return {text, ""};
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
