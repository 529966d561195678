// NumPy .npy files (the format of numpy.lib.format): a prefix (magic, version, header
// length), a Python dict literal describing the array, then the raw elements. Everything
// in the header is validated, and the data size is checked against the file size, before
// a single element is allocated.
#include "strop/io/npy.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "io/atomic_file.hpp"
#include "strop/core/error.hpp"
#include "strop/core/scalar.hpp"

namespace strop::io {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy's own writer stays far below this; a longer header is not a plain array file.
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t(1) << 20;
// Tuples nested deeper than this are no dtype we could read anyway; the limit keeps the
// recursive parser's stack small on hostile input.
constexpr int kMaxNesting = 16;
// numpy aligns the data to 64 bytes so that it can be memory-mapped and used in place.
constexpr std::size_t kDataAlignment = 64;

template <class... Parts>
[[noreturn]] void fail(const std::string& path, Parts&&... parts) {
  throw IoError(detail::concat(path, ": ", std::forward<Parts>(parts)...));
}

// ---- the header dict ------------------------------------------------------------------

// The Python literals a .npy header can hold (strings, booleans, non-negative integers,
// tuples and lists of them); anything else is a malformed header.
struct Literal {
  enum class Kind { String, Bool, Integer, Tuple, List };
  Kind kind = Kind::Integer;
  std::string text;            // String
  bool boolean = false;        // Bool
  std::uint64_t integer = 0;   // Integer
  std::vector<Literal> items;  // Tuple, List
};

// A recursive-descent parser of the header dict. It works on bytes: every character it
// cares about is ASCII, and the bytes of a multi-byte UTF-8 character (version 3.0) are
// all >= 0x80, so they can only appear inside string literals.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), text_(text) {}

  // The whole header: one dict, then only whitespace (numpy's padding and final '\n').
  std::vector<std::pair<std::string, Literal>> parse_dict() {
    std::vector<std::pair<std::string, Literal>> entries;
    skip_spaces();
    expect('{');
    while (!consume('}')) {
      Literal key = parse_value(0);
      if (key.kind != Literal::Kind::String) malformed("dict keys must be strings");
      expect(':');
      entries.emplace_back(std::move(key.text), parse_value(0));
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skip_spaces();
    if (pos_ != text_.size()) malformed("unexpected text after the dict");
    return entries;
  }

 private:
  Literal parse_value(int depth) {
    skip_spaces();
    if (pos_ == text_.size()) malformed("the header ends inside the dict");
    const char c = text_[pos_];
    Literal value;
    if (c == '\'' || c == '"') {
      value.kind = Literal::Kind::String;
      value.text = parse_string();
    } else if (c >= '0' && c <= '9') {
      value.kind = Literal::Kind::Integer;
      value.integer = parse_integer();
    } else if (c == '(' || c == '[') {
      if (depth >= kMaxNesting) malformed("tuples nested too deeply");
      ++pos_;
      value.kind = c == '(' ? Literal::Kind::Tuple : Literal::Kind::List;
      const char close = c == '(' ? ')' : ']';
      bool trailing_comma = false;
      while (!consume(close)) {
        value.items.push_back(parse_value(depth + 1));
        trailing_comma = consume(',');
        if (!trailing_comma) {
          expect(close);
          break;
        }
      }
      // As in Python, "(3)" is the number 3; only "(3,)" is a 1-tuple.
      if (value.kind == Literal::Kind::Tuple && value.items.size() == 1 && !trailing_comma)
        return std::move(value.items.front());
    } else if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      value.kind = Literal::Kind::Bool;
      value.boolean = true;
    } else if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      value.kind = Literal::Kind::Bool;
    } else {
      malformed("unexpected character '", printable(c), "'");
    }
    skip_spaces();
    return value;
  }

  // A quoted string; a backslash keeps the next character whatever it is.
  std::string parse_string() {
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (pos_ == text_.size()) malformed("unterminated string");
    ++pos_;
    return out;
  }

  std::uint64_t parse_integer() {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const unsigned digit = unsigned(text_[pos_++] - '0');
      if (value > (kMax - digit) / 10) malformed("integer too large");
      value = value * 10 + digit;
    }
    // Files written by numpy under Python 2 may spell dimensions as longs: (3L, 4L).
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    return value;
  }

  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool consume(char c) {
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c))
      malformed("expected '", c, "'", pos_ < text_.size() ? " at offset " : " before the end",
                pos_ < text_.size() ? std::to_string(pos_) : std::string());
  }

  static char printable(char c) { return c >= 0x20 && c < 0x7f ? c : '?'; }

  template <class... Parts>
  [[noreturn]] void malformed(Parts&&... parts) const {
    constexpr std::size_t kShown = 120;
    std::string shown;
    for (char c : text_.substr(0, kShown))
      shown += printable(c);
    if (text_.size() > kShown) shown += "...";
    fail(path_, "malformed .npy header (", detail::concat(std::forward<Parts>(parts)...),
         "): ", shown);
  }

  const std::string& path_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

// ---- what the header describes --------------------------------------------------------

struct ElementType {
  std::string_view name;            // "float32", "float64", "complex64", "complex128"
  std::size_t component_bytes = 0;  // 4 or 8: one real number, or one part of a complex
  bool is_complex = false;
  bool swap_bytes = false;  // stored in the other byte order than this machine's
  std::size_t bytes() const { return is_complex ? 2 * component_bytes : component_bytes; }
};

struct NpyHeader {
  ElementType element;
  bool fortran_order = false;
  Index rows = 0, cols = 0;  // shape (n,) is n x 1
  std::uint64_t data_offset = 0, data_bytes = 0;
};

// A numpy typestr such as '<f8': byte order, kind, size. '|' ("not applicable") and '='
// mean this machine's order, as numpy reads them.
ElementType parse_descr(const std::string& path, const std::string& descr) {
  constexpr bool kLittleHost = std::endian::native == std::endian::little;
  ElementType e;
  std::string_view code = descr;
  if (!code.empty() && std::string_view("<>|=").find(code.front()) != std::string_view::npos) {
    e.swap_bytes = (code.front() == '<' && !kLittleHost) || (code.front() == '>' && kLittleHost);
    code.remove_prefix(1);
  }
  if (code == "f4") {
    e = {"float32", 4, false, e.swap_bytes};
  } else if (code == "f8") {
    e = {"float64", 8, false, e.swap_bytes};
  } else if (code == "c8") {
    e = {"complex64", 4, true, e.swap_bytes};
  } else if (code == "c16") {
    e = {"complex128", 8, true, e.swap_bytes};
  } else {
    fail(path, "unsupported dtype '", descr,
         "' (supported: float32, float64, complex64 and complex128, that is '<f4', '<f8', "
         "'<c8', '<c16' or their big-endian '>' forms)");
  }
  return e;
}

std::string shape_text(const std::vector<Literal>& dims) {
  std::string out = "(";
  for (std::size_t k = 0; k < dims.size(); ++k)
    out += (k ? ", " : "") + std::to_string(dims[k].integer);
  return out + (dims.size() == 1 ? ",)" : ")");
}

// Checks the three keys numpy writes (no more, no fewer) and fills everything but the
// data offset and size.
NpyHeader interpret_dict(const std::string& path,
                         const std::vector<std::pair<std::string, Literal>>& entries) {
  const Literal* descr = nullptr;
  const Literal* fortran_order = nullptr;
  const Literal* shape = nullptr;
  for (const auto& [key, value] : entries) {
    const Literal** slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran_order
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (!slot)
      fail(path, "unexpected key '", key,
           "' in the .npy header (expected only 'descr', 'fortran_order' and 'shape')");
    if (*slot) fail(path, "the .npy header has the key '", key, "' twice");
    *slot = &value;
  }
  if (!descr) fail(path, "the .npy header has no 'descr' key");
  if (!fortran_order) fail(path, "the .npy header has no 'fortran_order' key");
  if (!shape) fail(path, "the .npy header has no 'shape' key");

  NpyHeader h;
  if (descr->kind == Literal::Kind::List)
    fail(path, "unsupported dtype: structured (record) arrays are not supported");
  if (descr->kind != Literal::Kind::String)
    fail(path, "malformed .npy header: 'descr' must be a string such as '<f8'");
  h.element = parse_descr(path, descr->text);

  if (fortran_order->kind != Literal::Kind::Bool)
    fail(path, "malformed .npy header: 'fortran_order' must be True or False");
  h.fortran_order = fortran_order->boolean;

  if (shape->kind != Literal::Kind::Tuple)
    fail(path, "malformed .npy header: 'shape' must be a tuple such as (3, 4)");
  const std::vector<Literal>& dims = shape->items;
  for (const Literal& d : dims)
    if (d.kind != Literal::Kind::Integer)
      fail(path, "malformed .npy header: 'shape' must hold non-negative integers");
  if (dims.empty()) fail(path, "0-d arrays (shape ()) are not supported: store a 1-d or 2-d array");
  if (dims.size() > 2)
    fail(path, dims.size(), "-d array of shape ", shape_text(dims),
         ": only 1-d and 2-d arrays are supported");
  for (const Literal& d : dims)
    if (d.integer > std::uint64_t(std::numeric_limits<Index>::max()))
      fail(path, "shape ", shape_text(dims), " is too large");
  h.rows = Index(dims[0].integer);
  h.cols = dims.size() == 2 ? Index(dims[1].integer) : 1;

  // rows * cols * element bytes, refusing products that do not fit in 64 bits.
  std::uint64_t elements = 0;
  if (__builtin_mul_overflow(std::uint64_t(h.rows), std::uint64_t(h.cols), &elements) ||
      __builtin_mul_overflow(elements, std::uint64_t(h.element.bytes()), &h.data_bytes))
    fail(path, "shape ", shape_text(dims), " is too large (its size overflows 64 bits)");
  return h;
}

std::uint64_t little_endian_uint(const unsigned char* bytes, int count) {
  std::uint64_t value = 0;
  for (int k = count - 1; k >= 0; --k)
    value = (value << 8) | bytes[k];
  return value;
}

// Opens `path` and reads and validates everything up to the first element. The stream is
// left positioned at the data.
NpyHeader read_header(const std::string& path, std::ifstream& in) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) fail(path, "no such file");
  if (fs::is_directory(status)) fail(path, "is a directory, not a .npy file");
  in.open(path, std::ios::binary);
  if (!in) fail(path, "cannot open: ", std::strerror(errno));
  const std::uint64_t file_bytes = fs::file_size(path, ec);
  if (ec) fail(path, "cannot read the file size: ", ec.message());

  // Magic (6 bytes), version (2), header length (2 bytes in 1.0, 4 in 2.0 and 3.0).
  unsigned char prefix[12] = {};
  in.read(reinterpret_cast<char*>(prefix), std::streamsize(std::min<std::uint64_t>(8, file_bytes)));
  if (file_bytes < kMagic.size() || std::memcmp(prefix, kMagic.data(), kMagic.size()) != 0)
    fail(path, "not a .npy file (it does not start with the magic string \\x93NUMPY)");
  if (file_bytes < 8) fail(path, "truncated .npy file: it ends inside the version");
  const int major = prefix[6], minor = prefix[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(path, "unsupported .npy format version ", major, ".", minor,
         " (this library reads 1.0, 2.0 and 3.0)");
  const int length_bytes = major == 1 ? 2 : 4;
  const std::uint64_t prefix_bytes = 8 + length_bytes;
  if (file_bytes < prefix_bytes) fail(path, "truncated .npy file: it ends inside the prefix");
  in.read(reinterpret_cast<char*>(prefix + 8), length_bytes);
  const std::uint64_t header_bytes = little_endian_uint(prefix + 8, length_bytes);
  if (header_bytes > file_bytes - prefix_bytes)
    fail(path, "truncated .npy file: the header declares ", header_bytes, " bytes but only ",
         file_bytes - prefix_bytes, " follow the prefix");
  if (header_bytes > kMaxHeaderBytes)
    fail(path, "the .npy header is ", header_bytes, " bytes long; more than the ", kMaxHeaderBytes,
         " this reader accepts");

  std::string text(header_bytes, '\0');
  in.read(text.data(), std::streamsize(header_bytes));
  if (!in) fail(path, "read error in the .npy header");
  NpyHeader h = interpret_dict(path, HeaderParser(path, text).parse_dict());

  // The data must fill the rest of the file exactly, checked before anything is allocated.
  h.data_offset = prefix_bytes + header_bytes;
  const std::uint64_t available = file_bytes - h.data_offset;
  if (available < h.data_bytes)
    fail(path, "truncated .npy file: shape ", h.rows, "x", h.cols, " of ", h.element.name,
         " needs ", h.data_bytes, " data bytes, the file has ", available);
  if (available > h.data_bytes)
    fail(path, "corrupted .npy file: ", available - h.data_bytes,
         " bytes of trailing garbage after the ", h.data_bytes, " data bytes of shape ", h.rows,
         "x", h.cols, " of ", h.element.name);
  return h;
}

// ---- elements -------------------------------------------------------------------------

// Every value of the stored type is exactly a value of T: float32 into any type, float64
// into double and complex<double>, complex only into complex of at least its precision.
template <class T>
bool converts_exactly(const ElementType& e) {
  return (!e.is_complex || is_complex_v<T>)&&e.component_bytes <= sizeof(RealOf<T>);
}

template <class Stored>
Stored read_component(const unsigned char* bytes, bool swap_bytes) {
  unsigned char copy[sizeof(Stored)];
  std::memcpy(copy, bytes, sizeof(Stored));
  if (swap_bytes) std::reverse(copy, copy + sizeof(Stored));
  Stored value;
  std::memcpy(&value, copy, sizeof(Stored));
  return value;
}

// Fills m from the raw data in file order. Reading Stored as itself and converting only
// to a real type at least as wide keeps every bit, NaN payloads included.
template <class T, class Stored>
void decode(const NpyHeader& h, const std::vector<unsigned char>& data, HostMatrix<T>& m) {
  using Real = RealOf<T>;
  // A shape such as (2^62, 0) holds nothing: no loop over its 2^62 empty rows.
  if (data.empty()) return;
  const unsigned char* next = data.data();
  auto take = [&]() -> T {
    const Real re = Real(read_component<Stored>(next, h.element.swap_bytes));
    const Real im = h.element.is_complex
                        ? Real(read_component<Stored>(next + sizeof(Stored), h.element.swap_bytes))
                        : Real(0);
    next += h.element.bytes();
    if constexpr (is_complex_v<T>) {
      return T(re, im);
    } else {
      return re;  // converts_exactly has refused complex data for a real T
    }
  };
  if (h.fortran_order) {
    for (Index j = 0; j < h.cols; ++j)
      for (Index i = 0; i < h.rows; ++i)
        m(i, j) = take();
  } else {
    for (Index i = 0; i < h.rows; ++i)
      for (Index j = 0; j < h.cols; ++j)
        m(i, j) = take();
  }
}

// '<f4', '<f8', '<c8', '<c16': save_npy always writes little-endian.
template <class T>
std::string_view little_endian_descr() {
  if constexpr (std::is_same_v<T, float>) {
    return "<f4";
  } else if constexpr (std::is_same_v<T, double>) {
    return "<f8";
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    return "<c8";
  } else {
    static_assert(std::is_same_v<T, std::complex<double>>);
    return "<c16";
  }
}

// Stores `value` little-endian at `out`, each part of a complex on its own.
template <class T>
void store_little_endian(const T& value, unsigned char* out) {
  std::memcpy(out, &value, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) {
    constexpr std::size_t part = sizeof(RealOf<T>);
    for (std::size_t k = 0; k < sizeof(T); k += part)
      std::reverse(out + k, out + k + part);
  }
}

// The prefix and header numpy would write for a C-order array of this shape: version 1.0
// unless the header does not fit a 2-byte length, padded with spaces and ended by '\n' so
// that the data starts at a multiple of kDataAlignment.
std::string prefix_and_header(std::string_view descr, Index rows, Index cols) {
  const std::string dict = detail::concat("{'descr': '", descr, "', 'fortran_order': False, ",
                                          "'shape': (", rows, ", ", cols, "), }");
  auto padded = [&](std::size_t prefix_bytes) {
    const std::size_t unpadded = prefix_bytes + dict.size() + 1;  // + the final '\n'
    return (unpadded + kDataAlignment - 1) / kDataAlignment * kDataAlignment - prefix_bytes;
  };
  const bool version1 = padded(10) <= std::numeric_limits<std::uint16_t>::max();
  const std::size_t prefix_bytes = version1 ? 10 : 12;
  const std::size_t header_bytes = padded(prefix_bytes);

  std::string out(kMagic);
  out += char(version1 ? 1 : 2);
  out += char(0);
  for (std::size_t k = 0; k < prefix_bytes - 8; ++k)
    out += char((header_bytes >> (8 * k)) & 0xff);
  out += dict;
  out.append(header_bytes - dict.size() - 1, ' ');
  out += '\n';
  return out;
}

}  // namespace

template <class T>
HostMatrix<T> load_npy(const std::string& path) {
  std::ifstream in;
  const NpyHeader h = read_header(path, in);
  if (!converts_exactly<T>(h.element))
    fail(path, "the file stores ", h.element.name, ", which cannot be loaded as ",
         ScalarTraits<T>::name, " without losing information (load it as a wider or complex type)");
  // read_header has checked data_bytes against the file size: this allocation is bounded.
  std::vector<unsigned char> data(h.data_bytes);
  in.read(reinterpret_cast<char*>(data.data()), std::streamsize(h.data_bytes));
  if (!in) fail(path, "read error in the .npy data");
  HostMatrix<T> m(h.rows, h.cols);
  if (h.element.component_bytes == 4) {
    decode<T, float>(h, data, m);
  } else {
    decode<T, double>(h, data, m);
  }
  return m;
}

template <class T>
void save_npy(const std::string& path, const HostMatrix<T>& m) {
  write_file_atomically(path, [&](std::ostream& out) {
    out << prefix_and_header(little_endian_descr<T>(), m.rows(), m.cols());
    // C order: one row of the (column-major) matrix at a time.
    // An empty matrix has no data; its other dimension may be huge (0 x 2^40 is valid),
    // so neither a row buffer nor a loop over rows.
    const Index rows = m.size() > 0 ? m.rows() : 0;
    std::vector<unsigned char> row(rows > 0 ? std::size_t(m.cols()) * sizeof(T) : 0);
    for (Index i = 0; i < rows; ++i) {
      for (Index j = 0; j < m.cols(); ++j)
        store_little_endian(m(i, j), &row[j * sizeof(T)]);
      out.write(reinterpret_cast<const char*>(row.data()), std::streamsize(row.size()));
    }
  });
}

std::string npy_scalar_type(const std::string& path) {
  std::ifstream in;
  return std::string(read_header(path, in).element.name);
}

#define STROP_INSTANTIATE_NPY(T)                          \
  template HostMatrix<T> load_npy<T>(const std::string&); \
  template void save_npy<T>(const std::string&, const HostMatrix<T>&);
STROP_INSTANTIATE_NPY(float)
STROP_INSTANTIATE_NPY(double)
STROP_INSTANTIATE_NPY(std::complex<float>)
STROP_INSTANTIATE_NPY(std::complex<double>)
#undef STROP_INSTANTIATE_NPY

}  // namespace strop::io
