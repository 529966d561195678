// NumPy .npy files: bit-exact round trips, the exact bytes numpy expects, hand-written files
// in every layout we accept (Fortran order, big-endian, versions 2.0 and 3.0, 1-d arrays,
// loose header dicts), widening conversions, and an IoError naming the file for every kind
// of bad file. Expected bytes and values are written out by hand, never produced by the
// code under test.
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "reference.hpp"
#include "strop/io/npy.hpp"
#include "temp_dir.hpp"

using namespace strop;
using namespace strop::testing;
namespace fs = std::filesystem;

namespace {

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The bytes of real numbers (or of the parts of complex numbers, re then im), in the byte
// order asked for whatever this machine's order is.
template <class Real>
std::string raw(std::initializer_list<Real> values, bool big_endian = false) {
  using Bits = std::conditional_t<sizeof(Real) == 4, std::uint32_t, std::uint64_t>;
  std::string out;
  for (Real v : values) {
    const Bits bits = std::bit_cast<Bits>(v);
    for (std::size_t k = 0; k < sizeof(Real); ++k) {
      const std::size_t shift = 8 * (big_endian ? sizeof(Real) - 1 - k : k);
      out += char((bits >> shift) & 0xff);
    }
  }
  return out;
}

// A whole .npy file: magic, version major.0, the header length in 2 (version 1) or 4 bytes
// little-endian, then the header and the data exactly as given.
std::string npy_file(int major, const std::string& header, const std::string& data) {
  std::string out = std::string("\x93") + "NUMPY";
  out += char(major);
  out += char(0);
  const int length_bytes = major == 1 ? 2 : 4;
  for (int k = 0; k < length_bytes; ++k)
    out += char((header.size() >> (8 * k)) & 0xff);
  return out + header + data;
}

// A version 1.0 file with the header numpy writes for this dtype and shape (not padded:
// the reader must not depend on the alignment).
std::string npy_v1(const std::string& descr, const std::string& shape, const std::string& data,
                   bool fortran_order = false) {
  return npy_file(1,
                  "{'descr': '" + descr + "', 'fortran_order': " +
                      (fortran_order ? "True" : "False") + ", 'shape': " + shape + ", }\n",
                  data);
}

// The IoError names the file and says what is wrong.
template <class Fn>
void check_io_error(Fn fn, const std::string& path, const std::string& must_mention) {
  try {
    fn();
    BOOST_ERROR("expected IoError mentioning '" << must_mention << "' for " << path);
  } catch (const IoError& e) {
    const std::string message = e.what();
    BOOST_TEST(message.find(path) != std::string::npos, "message: " << message);
    BOOST_TEST(message.find(must_mention) != std::string::npos,
               "expected '" << must_mention << "' in: " << message);
  }
}

// Writes `bytes` to a file and checks that loading it (as double, and through
// npy_scalar_type) fails with an IoError mentioning `must_mention`.
void check_bad_file(const TempDir& dir, const std::string& name, const std::string& bytes,
                    const std::string& must_mention) {
  BOOST_TEST_CONTEXT("file " << name) {
    const std::string path = dir.file(name);
    write_file(path, bytes);
    check_io_error([&] { io::load_npy<double>(path); }, path, must_mention);
    check_io_error([&] { io::npy_scalar_type(path); }, path, must_mention);
  }
}

template <class T>
bool bit_identical(const HostMatrix<T>& a, const HostMatrix<T>& b) {
  // (An empty matrix may have a null data pointer, which memcmp must not see.)
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), std::size_t(a.size()) * sizeof(T)) == 0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(npy_io)

BOOST_AUTO_TEST_CASE_TEMPLATE(round_trips_are_bit_exact, T, ScalarTypes) {
  using Limits = std::numeric_limits<RealOf<T>>;
  TempDir dir;
  const std::string path = dir.file("m.npy");
  // Values that any conversion on the way would change: NaN is data at this layer.
  const T specials[] = {T(Limits::signaling_NaN()), T(-RealOf<T>(0)), T(Limits::infinity()),
                        T(Limits::denorm_min()), T(Limits::max())};
  for (const auto& [rows, cols] : {std::pair<Index, Index>{5, 3}, {1, 1}, {7, 1}, {1, 9}, {0, 4}}) {
    BOOST_TEST_CONTEXT(rows << "x" << cols) {
      HostMatrix<T> m = random_matrix<T>(rows, cols);
      for (Index k = 0; k < std::min<Index>(m.size(), std::size(specials)); ++k)
        m.data()[k] = specials[k];
      io::save_npy(path, m);
      BOOST_TEST(bit_identical(io::load_npy<T>(path), m));
      BOOST_TEST(io::npy_scalar_type(path) == std::string(ScalarTraits<T>::name));
    }
  }
  BOOST_TEST(dir.entries() == 1);  // no temporary file left behind
}

BOOST_AUTO_TEST_CASE(written_bytes_are_what_numpy_writes) {
  TempDir dir;
  HostMatrix<double> m(2, 3);
  m << 0.5, 1, 2,  //
      10, 11, -12.25;
  const std::string path = dir.file("m.npy");
  io::save_npy(path, m);
  // numpy.save(np.array([[0.5, 1, 2], [10, 11, -12.25]])): a 128-byte prefix + header,
  // spaces up to the final '\n', then the rows one after the other.
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string header = dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  BOOST_TEST(header.size() == 118u);
  const std::string expected = npy_file(1, header, raw<double>({0.5, 1, 2, 10, 11, -12.25}));
  BOOST_TEST(file_bytes(path) == expected);

  HostMatrix<std::complex<float>> z(1, 2);
  z << std::complex<float>(1, -2), std::complex<float>(0.25f, 3);
  io::save_npy(path, z);
  const std::string zdict = "{'descr': '<c8', 'fortran_order': False, 'shape': (1, 2), }";
  const std::string zheader = zdict + std::string(128 - 10 - zdict.size() - 1, ' ') + "\n";
  BOOST_TEST(file_bytes(path) == npy_file(1, zheader, raw<float>({1, -2, 0.25f, 3})));
}

BOOST_AUTO_TEST_CASE(data_starts_at_a_multiple_of_64_bytes) {
  TempDir dir;
  const std::string path = dir.file("m.npy");
  // Empty matrices of any shape cost nothing, so long shapes test long headers cheaply.
  for (const auto& [rows, cols] :
       {std::pair<Index, Index>{1, 1}, {12, 34}, {0, 0}, {123456789012, 0}, {0, 1099511627776}}) {
    BOOST_TEST_CONTEXT(rows << "x" << cols) {
      HostMatrix<float> m = HostMatrix<float>::Constant(rows, cols, 1.5f);
      io::save_npy(path, m);
      const std::string bytes = file_bytes(path);
      BOOST_TEST_REQUIRE(bytes.size() >= 10u);
      BOOST_TEST(bytes[6] == 1);  // version 1.0
      const std::size_t header_bytes =
          std::size_t(std::uint8_t(bytes[8])) | std::size_t(std::uint8_t(bytes[9])) << 8;
      BOOST_TEST((10 + header_bytes) % 64 == 0u);
      BOOST_TEST(bytes[10 + header_bytes - 1] == '\n');
      BOOST_TEST(bytes.size() == 10 + header_bytes + std::size_t(rows * cols) * sizeof(float));
      const HostMatrix<float> back = io::load_npy<float>(path);
      BOOST_TEST(back.rows() == rows);
      BOOST_TEST(back.cols() == cols);
      // (Eigen's all() walks every column, even of a 0 x 2^40 matrix.)
      BOOST_TEST((back.size() == 0 || (back.array() == 1.5f).all()));
    }
  }
}

BOOST_AUTO_TEST_CASE(one_d_arrays_are_columns) {
  TempDir dir;
  const std::string path = dir.file("v.npy");
  for (bool fortran_order : {false, true}) {
    write_file(path, npy_v1("<f8", "(3,)", raw<double>({1.5, -2, 7}), fortran_order));
    const HostMatrix<double> v = io::load_npy<double>(path);
    BOOST_TEST_REQUIRE(v.rows() == 3);
    BOOST_TEST_REQUIRE(v.cols() == 1);
    BOOST_TEST(v(0, 0) == 1.5);
    BOOST_TEST(v(1, 0) == -2.0);
    BOOST_TEST(v(2, 0) == 7.0);
  }
  write_file(path, npy_v1("<f4", "(0,)", ""));
  BOOST_TEST(io::load_npy<float>(path).rows() == 0);
  // Empty, with a huge other dimension: valid, and read without looping over it.
  write_file(path, npy_v1("<f4", "(4611686018427387904, 0)", ""));
  BOOST_TEST(io::load_npy<float>(path).rows() == Index(1) << 62);
}

BOOST_AUTO_TEST_CASE(c_and_fortran_order) {
  TempDir dir;
  const std::string path = dir.file("m.npy");
  // The 2x3 matrix [[1, 2, 3], [4, 5, 6]] row by row, then column by column.
  write_file(path, npy_v1("<f8", "(2, 3)", raw<double>({1, 2, 3, 4, 5, 6})));
  HostMatrix<double> c_order = io::load_npy<double>(path);
  write_file(path, npy_v1("<f8", "(2, 3)", raw<double>({1, 4, 2, 5, 3, 6}), true));
  HostMatrix<double> f_order = io::load_npy<double>(path);
  for (const HostMatrix<double>& m : {c_order, f_order}) {
    BOOST_TEST_REQUIRE(m.rows() == 2);
    BOOST_TEST_REQUIRE(m.cols() == 3);
    for (Index i = 0; i < 2; ++i)
      for (Index j = 0; j < 3; ++j)
        BOOST_TEST(m(i, j) == double(3 * i + j + 1));
  }
}

BOOST_AUTO_TEST_CASE(big_endian_files) {
  TempDir dir;
  const std::string path = dir.file("be.npy");
  write_file(path, npy_v1(">f8", "(1, 2)", raw<double>({1.25, -3e300}, true)));
  HostMatrix<double> d = io::load_npy<double>(path);
  BOOST_TEST(d(0, 0) == 1.25);
  BOOST_TEST(d(0, 1) == -3e300);

  write_file(path, npy_v1(">f4", "(2,)", raw<float>({0.1f, 7.0f}, true)));
  HostMatrix<float> f = io::load_npy<float>(path);
  BOOST_TEST(f(0, 0) == 0.1f);
  BOOST_TEST(f(1, 0) == 7.0f);
  BOOST_TEST(io::npy_scalar_type(path) == "float32");

  // Each part of a complex number is swapped on its own.
  write_file(path, npy_v1(">c8", "(1,)", raw<float>({1.5f, -0.3f}, true)));
  BOOST_TEST(io::load_npy<std::complex<float>>(path)(0, 0) == std::complex<float>(1.5f, -0.3f));
  write_file(path, npy_v1(">c16", "(2, 1)", raw<double>({1, 2, 0.7, -8}, true)));
  const HostMatrix<std::complex<double>> z = io::load_npy<std::complex<double>>(path);
  BOOST_TEST(z(0, 0) == std::complex<double>(1, 2));
  BOOST_TEST(z(1, 0) == std::complex<double>(0.7, -8));
  BOOST_TEST(io::npy_scalar_type(path) == "complex128");

  // '|' (byte order "not applicable") and '=' mean this machine's order, as in numpy.
  constexpr bool big_host = std::endian::native == std::endian::big;
  write_file(path, npy_v1("|f8", "(1,)", raw<double>({2.5}, big_host)));
  BOOST_TEST(io::load_npy<double>(path)(0, 0) == 2.5);
  write_file(path, npy_v1("=f8", "(1,)", raw<double>({-2.5}, big_host)));
  BOOST_TEST(io::load_npy<double>(path)(0, 0) == -2.5);
}

BOOST_AUTO_TEST_CASE(versions_2_and_3) {
  TempDir dir;
  const std::string path = dir.file("v.npy");
  const std::string header = "{'descr': '<c16', 'fortran_order': False, 'shape': (1, 1), }\n";
  for (int major : {2, 3}) {
    BOOST_TEST_CONTEXT("version " << major << ".0") {
      write_file(path, npy_file(major, header, raw<double>({3, -4})));
      BOOST_TEST(io::load_npy<std::complex<double>>(path)(0, 0) == std::complex<double>(3, -4));
    }
  }
}

BOOST_AUTO_TEST_CASE(header_dicts_are_parsed_loosely) {
  TempDir dir;
  const std::string path = dir.file("h.npy");
  const std::string data = raw<double>({1, 2, 3, 4, 5, 6});
  for (const std::string& header : std::vector<std::string>{
           "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f8'}",
           "{  'descr' :'<f8','fortran_order':False,'shape':(2,3)  ,  }",
           "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (2, 3,)}",
           "{'descr': '<f8',\n 'fortran_order': False,\t'shape': (2L, 3L), }" +
               std::string(50, ' ') + "\n",
           "{'fortran_order': False, 'shape': (2, 3), 'descr': '<f8', }\r\n",
       }) {
    BOOST_TEST_CONTEXT(header) {
      write_file(path, npy_file(1, header, data));
      const HostMatrix<double> m = io::load_npy<double>(path);
      BOOST_TEST_REQUIRE(m.rows() == 2);
      BOOST_TEST_REQUIRE(m.cols() == 3);
      BOOST_TEST(m(1, 0) == 4.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(exact_widening_conversions) {
  TempDir dir;
  const std::string path = dir.file("c.npy");
  // 0.1f is not 0.1: a float32 file gives the float's exact value in a double.
  write_file(path, npy_v1("<f4", "(1, 2)", raw<float>({0.1f, -3.5f})));
  const HostMatrix<double> d = io::load_npy<double>(path);
  BOOST_TEST(d(0, 0) == double(0.1f));
  BOOST_TEST(d(0, 1) == -3.5);
  BOOST_TEST(io::load_npy<std::complex<float>>(path)(0, 0) == std::complex<float>(0.1f, 0));
  BOOST_TEST(io::load_npy<std::complex<double>>(path)(0, 1) == std::complex<double>(-3.5, 0));

  write_file(path, npy_v1("<f8", "(2,)", raw<double>({0.1, 1e300})));
  const HostMatrix<std::complex<double>> z = io::load_npy<std::complex<double>>(path);
  BOOST_TEST(z(0, 0) == std::complex<double>(0.1, 0));
  BOOST_TEST(z(1, 0) == std::complex<double>(1e300, 0));

  write_file(path, npy_v1("<c8", "(1,)", raw<float>({0.1f, -0.2f})));
  BOOST_TEST(io::load_npy<std::complex<double>>(path)(0, 0) ==
             std::complex<double>(double(0.1f), double(-0.2f)));
}

BOOST_AUTO_TEST_CASE(lossy_conversions_are_refused) {
  TempDir dir;
  const std::string path = dir.file("lossy.npy");
  write_file(path, npy_v1("<f8", "(1,)", raw<double>({0.1})));
  check_io_error([&] { io::load_npy<float>(path); }, path, "stores float64");
  check_io_error([&] { io::load_npy<float>(path); }, path, "as float32");
  check_io_error([&] { io::load_npy<std::complex<float>>(path); }, path, "as complex64");
  write_file(path, npy_v1("<c8", "(1,)", raw<float>({1, 2})));
  check_io_error([&] { io::load_npy<float>(path); }, path, "complex64");
  check_io_error([&] { io::load_npy<double>(path); }, path, "as float64");
  write_file(path, npy_v1("<c16", "(1,)", raw<double>({1, 2})));
  check_io_error([&] { io::load_npy<std::complex<float>>(path); }, path, "complex128");
  check_io_error([&] { io::load_npy<double>(path); }, path, "complex128");
}

BOOST_AUTO_TEST_CASE(bad_prefixes) {
  TempDir dir;
  const std::string good = npy_v1("<f8", "(1,)", raw<double>({1}));
  check_bad_file(dir, "empty.npy", "", "magic");
  check_bad_file(dir, "short.npy", "\x93NU", "magic");
  check_bad_file(dir, "magic.npy", "\x93NUMPZ" + good.substr(6), "magic");
  check_bad_file(dir, "text.npy", "a,b,c\n1,2,3\n", "magic");
  check_bad_file(dir, "noversion.npy", good.substr(0, 7), "truncated");
  check_bad_file(dir, "nolength.npy", good.substr(0, 9), "truncated");
  std::string v4 = good, v11 = good;
  v4[6] = 4;
  v11[7] = 1;
  check_bad_file(dir, "v4.npy", v4, "version 4.0");
  check_bad_file(dir, "v11.npy", v11, "version 1.1");
  // A header length beyond the end of the file, in both length formats.
  check_bad_file(dir, "longheader1.npy", good.substr(0, 40), "truncated");
  check_bad_file(dir, "longheader2.npy", npy_file(2, "{}", "").substr(0, 8) + "\xff\xff\xff\x7f{}",
                 "truncated");
  check_io_error([&] { io::load_npy<double>(dir.file("missing.npy")); }, dir.file("missing.npy"),
                 "no such file");
  check_io_error([&] { io::load_npy<double>(dir.path.string()); }, dir.path.string(), "directory");
}

BOOST_AUTO_TEST_CASE(bad_header_dicts) {
  TempDir dir;
  const std::string data = raw<double>({1, 2});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "malformed"},
      {"descr: '<f8'", "malformed"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,)", "malformed"},
      {"{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}", "malformed"},
      {"{descr: '<f8', 'fortran_order': False, 'shape': (2,)}", "malformed"},
      {"{'descr': '<f8, 'fortran_order': False, 'shape': (2,)}", "malformed"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", "unexpected text"},
      {"{'descr': '<f8', 'fortran_order': false, 'shape': (2,)}", "malformed"},
      {"{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}", "fortran_order"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [2]}", "tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2)}", "tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (-2,)}", "malformed"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': ('2',)}", "integers"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,,)}", "malformed"},
      {"{'descr': '<f8', 'shape': (2,)}", "no 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (2,)}", "no 'descr'"},
      {"{'descr': '<f8', 'fortran_order': False}", "no 'shape'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'shape': (2,)}", "twice"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "'extra'"},
      {"{'descr': 8, 'fortran_order': False, 'shape': (2,)}", "descr"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': " + std::string(100000, '(') + "}",
       "nested too deeply"},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const std::string& header = cases[k].first;
    const int major = header.size() > 65535 ? 2 : 1;  // 2 bytes of header length in 1.0
    check_bad_file(dir, "dict" + std::to_string(k) + ".npy", npy_file(major, header, data),
                   cases[k].second);
  }
}

BOOST_AUTO_TEST_CASE(unsupported_dtypes_and_shapes) {
  TempDir dir;
  const std::string eight = raw<double>({1});
  check_bad_file(dir, "i4.npy", npy_v1("<i4", "(2,)", eight), "unsupported dtype '<i4'");
  check_bad_file(dir, "object.npy", npy_v1("|O", "(1,)", eight), "unsupported dtype '|O'");
  check_bad_file(dir, "f2.npy", npy_v1("<f2", "(4,)", eight), "unsupported dtype '<f2'");
  check_bad_file(dir, "unicode.npy", npy_v1("<U1", "(2,)", eight), "unsupported dtype '<U1'");
  check_bad_file(
      dir, "record.npy",
      npy_file(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}", eight),
      "structured");
  check_bad_file(dir, "scalar.npy", npy_v1("<f8", "()", eight), "0-d");
  check_bad_file(dir, "cube.npy", npy_v1("<f8", "(1, 1, 1)", eight),
                 "3-d array of shape (1, 1, 1)");
}

BOOST_AUTO_TEST_CASE(data_size_must_match_the_shape) {
  TempDir dir;
  const std::string six = raw<double>({1, 2, 3, 4, 5, 6});
  check_bad_file(dir, "truncated.npy", npy_v1("<f8", "(2, 3)", six.substr(0, 47)), "truncated");
  check_bad_file(dir, "nodata.npy", npy_v1("<c16", "(2, 3)", ""), "truncated");
  check_bad_file(dir, "trailing.npy", npy_v1("<f8", "(2, 3)", six + "x"), "trailing");
  check_bad_file(dir, "trailing2.npy", npy_v1("<f4", "(2, 3)", six), "trailing");
  // Absurd shapes fail on the size check, never on an allocation.
  check_bad_file(dir, "huge.npy", npy_v1("<f8", "(1099511627776, 1099511627776)", six),
                 "too large");
  check_bad_file(dir, "big.npy", npy_v1("<c16", "(1048576, 1048576)", six), "truncated");
  check_bad_file(dir, "bytes_overflow.npy", npy_v1("<c16", "(1152921504606846976, 1)", six),
                 "too large");
  check_bad_file(dir, "index.npy", npy_v1("<f8", "(9223372036854775808, 0)", ""), "too large");
  check_bad_file(dir, "u64.npy", npy_v1("<f8", "(18446744073709551616,)", ""), "too large");
}

BOOST_AUTO_TEST_CASE(failed_saves_keep_existing_files) {
  TempDir dir;
  const HostMatrix<double> m = random_matrix<double>(3, 2);
  const std::string missing_dir = dir.file("no/such/dir/m.npy");
  check_io_error([&] { io::save_npy(missing_dir, m); }, missing_dir, "no directory");

  // The target is a directory: refused, the directory and its file stay.
  const std::string target_dir = dir.file("taken.npy");
  fs::create_directory(target_dir);
  write_file(target_dir + "/inside", "keep me");
  check_io_error([&] { io::save_npy(target_dir, m); }, target_dir, "is a directory");
  BOOST_TEST(file_bytes(target_dir + "/inside") == "keep me");
  BOOST_TEST(dir.entries() == 1);  // no temporary left behind

  // A pipe (or a device: /dev/full) is not a file to replace: the rename put a regular
  // file in the node's place.
  const std::string pipe = dir.file("pipe.npy");
  BOOST_REQUIRE(::mkfifo(pipe.c_str(), 0666) == 0);
  check_io_error([&] { io::save_npy(pipe, m); }, pipe, "not a regular file");
  BOOST_TEST(fs::is_fifo(pipe));
  BOOST_TEST(dir.entries() == 2);
  fs::remove(pipe);

  // An existing file is replaced whole.
  const std::string path = dir.file("m.npy");
  write_file(path, std::string(10000, 'x'));
  io::save_npy(path, m);
  BOOST_TEST(bit_identical(io::load_npy<double>(path), m));
  BOOST_TEST(dir.entries() == 2);

  // A read-only directory (root writes anyway, so only checked for other users).
  if (::geteuid() != 0) {
    const std::string before = file_bytes(path);
    fs::permissions(dir.path,
                    fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                    fs::perm_options::remove);
    check_io_error([&] { io::save_npy(path, HostMatrix<double>(HostMatrix<double>::Zero(1, 1))); },
                   path, "temporary");
    BOOST_TEST(file_bytes(path) == before);
  }
}

BOOST_AUTO_TEST_CASE(saves_respect_the_mode_of_an_existing_file) {
  TempDir dir;
  const HostMatrix<double> m = random_matrix<double>(3, 2);
  // A read-only file is refused and left as it is, even for root (whom access() lets write
  // anything): renaming over it used to replace it.
  const std::string read_only = dir.file("read_only.npy");
  write_file(read_only, "keep me");
  fs::permissions(read_only,
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  check_io_error([&] { io::save_npy(read_only, m); }, read_only, "not writable");
  BOOST_TEST(file_bytes(read_only) == "keep me");
  BOOST_TEST(dir.entries() == 1);  // no temporary left behind

  // A private file stays private (the replacement used to get the umask's 0644).
  const std::string private_file = dir.file("private.npy");
  write_file(private_file, "old");
  fs::permissions(private_file, fs::perms::owner_read | fs::perms::owner_write);
  io::save_npy(private_file, m);
  BOOST_TEST(bit_identical(io::load_npy<double>(private_file), m));
  BOOST_TEST(
      (fs::status(private_file).permissions() == (fs::perms::owner_read | fs::perms::owner_write)));
}

BOOST_AUTO_TEST_CASE(saves_to_the_longest_legal_names) {
  // 250 bytes is a legal name; the temporary ".NAME.tmp-PID-N" beside it used to exceed the
  // 255-byte limit and the save failed.
  TempDir dir;
  const HostMatrix<float> m = random_matrix<float>(2, 2);
  const std::string path = dir.file(std::string(246, 'n') + ".npy");
  io::save_npy(path, m);
  BOOST_TEST(bit_identical(io::load_npy<float>(path), m));
  BOOST_TEST(dir.entries() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
