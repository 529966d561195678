// Loading hostile files: hand-crafted ones (wrong types, inconsistent shapes, absurd sizes,
// missing datasets, cycles and bad links, wrong versions) and hundreds of randomly mutated
// copies of a valid file. Every case must end in an IoError or in the exact original
// operator: never a crash, a hang, a huge allocation or silently different values.
#include <hdf5.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "operator_zoo.hpp"
#include "random_strassen_tile.hpp"
#include "reference.hpp"
#include "strop/io/hdf5.hpp"

using namespace strop;
using namespace strop::testing;
namespace fs = std::filesystem;

namespace {

std::string temp_file(const std::string& name) {
  return (fs::temp_directory_path() / ("strop-robust-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// A file written with the raw HDF5 C API, so that it can be wrong in any way we like.
class CraftedFile {
 public:
  explicit CraftedFile(const std::string& name, std::int64_t version = 1) : path_(temp_file(name)) {
    file_ = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (version != 0) int_attribute(file_, "strop_format_version", version);
  }
  ~CraftedFile() {
    close();
    fs::remove(path_);
  }
  void close() {
    for (auto it = groups_.rbegin(); it != groups_.rend(); ++it)
      H5Gclose(*it);
    groups_.clear();
    if (file_ >= 0) H5Fclose(file_);
    file_ = -1;
  }
  hid_t root() const { return file_; }
  const std::string& path() const { return path_; }

  // A node group with the usual attributes.
  hid_t node(hid_t parent, const std::string& name, const std::string& type, std::int64_t rows,
             std::int64_t cols, const std::string& scalar = "float64") {
    const hid_t g = H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    groups_.push_back(g);
    if (!scalar.empty()) string_attribute(g, "scalar_type", scalar);
    string_attribute(g, "strop_type", type);
    int_attribute(g, "rows", rows);
    int_attribute(g, "cols", cols);
    return g;
  }
  // Operator "op" as a diamond: `depth` n x n sums, each one's children "0" and "1" hard links
  // to the next, so 2^depth paths lead through depth + 1 groups to one shared n x n leaf of
  // `leaf_type`, which it returns.
  hid_t sum_diamond(int depth, std::int64_t n, const std::string& leaf_type) {
    hid_t g = node(root(), "op", "sum", n, n);
    for (int level = 1; level < depth; ++level) {
      const hid_t next = node(g, "0", "sum", n, n, "");
      H5Lcreate_hard(g, "0", g, "1", H5P_DEFAULT, H5P_DEFAULT);
      g = next;
    }
    const hid_t leaf = node(g, "0", leaf_type, n, n, "");
    H5Lcreate_hard(g, "0", g, "1", H5P_DEFAULT, H5P_DEFAULT);
    return leaf;
  }
  static void int_attribute(hid_t obj, const char* name, std::int64_t value) {
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(obj, name, H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, &value);
    H5Aclose(a);
    H5Sclose(space);
  }
  static void int_array_attribute(hid_t obj, const char* name, std::vector<std::int64_t> v) {
    const hsize_t n = v.size();
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t a = H5Acreate2(obj, name, H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, v.data());
    H5Aclose(a);
    H5Sclose(space);
  }
  static void string_attribute(hid_t obj, const char* name, const std::string& value) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    const char* text = value.c_str();
    H5Awrite(a, type, &text);
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
  }
  // A dataset of `type`; written with `fill` unless `allocate` is false (then it claims its
  // shape without storing anything).
  static void dataset(hid_t parent, const char* name, std::vector<hsize_t> dims, hid_t type,
                      double fill = 1.0, bool allocate = true) {
    const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
    const hid_t d = H5Dcreate2(parent, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (allocate) {
      hsize_t n = 1;
      for (hsize_t x : dims)
        n *= x;
      std::vector<double> values(n, fill);
      H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    }
    H5Dclose(d);
    H5Sclose(space);
  }

 private:
  std::string path_;
  hid_t file_ = -1;
  std::vector<hid_t> groups_;
};

// Loads operator "op" as double and expects an IoError naming the file and `problem`.
void expect_load_error(CraftedFile& f, const std::string& problem) {
  f.close();
  try {
    io::load<double>(f.path(), "op");
    BOOST_ERROR("loading succeeded; expected an IoError about '" << problem << "'");
  } catch (const IoError& e) {
    const std::string message = e.what();
    BOOST_TEST_CONTEXT("message: " << message) {
      BOOST_TEST(message.find(f.path()) != std::string::npos);
      BOOST_TEST(message.find(problem) != std::string::npos);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hdf5_robustness)

BOOST_AUTO_TEST_CASE(versions) {
  {
    CraftedFile f("v0.h5", 0);
    f.node(f.root(), "op", "identity", 3, 3);
    expect_load_error(f, "not a strop file");
  }
  {
    CraftedFile f("v9.h5", 9);
    f.node(f.root(), "op", "identity", 3, 3);
    expect_load_error(f, "format version 9 is not supported");
  }
}

BOOST_AUTO_TEST_CASE(wrong_types_and_missing_pieces) {
  {
    CraftedFile f("unknown.h5");
    f.node(f.root(), "op", "teapot", 3, 3);
    expect_load_error(f, "unknown strop_type 'teapot'");
  }
  {
    CraftedFile f("int-dense.h5");
    const hid_t g = f.node(f.root(), "op", "dense", 2, 2);
    CraftedFile::dataset(g, "matrix", {2, 2}, H5T_NATIVE_INT32);
    expect_load_error(f, "does not hold float64");
  }
  {
    CraftedFile f("missing.h5");
    f.node(f.root(), "op", "lowrank", 4, 4);
    expect_load_error(f, "missing attribute 'rank'");
  }
  {
    CraftedFile f("missing-dataset.h5");
    const hid_t g = f.node(f.root(), "op", "lowrank", 4, 4);
    CraftedFile::int_attribute(g, "rank", 1);
    CraftedFile::dataset(g, "left", {4, 1}, H5T_NATIVE_DOUBLE);
    expect_load_error(f, "missing dataset 'right'");
  }
  {
    CraftedFile f("string-rows.h5");
    const hid_t g = f.node(f.root(), "op", "identity", 3, 3);
    H5Adelete(g, "rows");
    CraftedFile::string_attribute(g, "rows", "three");
    expect_load_error(f, "attribute 'rows' must be an integer");
  }
  {
    CraftedFile f("no-type.h5");
    const hid_t g = f.node(f.root(), "op", "identity", 3, 3);
    H5Adelete(g, "strop_type");
    expect_load_error(f, "missing attribute 'strop_type'");
  }
  {
    CraftedFile f("one-child-product.h5");
    const hid_t g = f.node(f.root(), "op", "product", 3, 3);
    f.node(g, "0", "identity", 3, 3, "");
    expect_load_error(f, "needs exactly 2 children");
  }
}

BOOST_AUTO_TEST_CASE(inconsistent_shapes_and_invalid_parameters) {
  {
    CraftedFile f("shape.h5");
    const hid_t g = f.node(f.root(), "op", "dense", 3, 2);
    CraftedFile::dataset(g, "matrix", {2, 3}, H5T_NATIVE_DOUBLE);
    expect_load_error(f, "has shape (2, 3), expected (3, 2)");
  }
  {
    CraftedFile f("attrs-vs-children.h5");
    const hid_t g = f.node(f.root(), "op", "transpose", 3, 3);
    f.node(g, "0", "identity", 4, 4, "");
    expect_load_error(f, "attributes say 3x3");
  }
  {
    CraftedFile f("chain.h5");  // (1,2,2,1) then (1,3,3,1): 2 columns meet 3 rows
    const hid_t g = f.node(f.root(), "op", "ks_chain", 2, 3);
    for (auto [name, n] : {std::pair{"0", 2}, std::pair{"1", 3}}) {
      const hid_t k = f.node(g, name, "ks_factor", n, n, "");
      CraftedFile::int_array_attribute(k, "pattern", {1, n, n, 1});
      CraftedFile::dataset(k, "values", {1, hsize_t(n), hsize_t(n), 1}, H5T_NATIVE_DOUBLE);
    }
    expect_load_error(f, "invalid ks_chain");
  }
  {
    CraftedFile f("perm.h5");
    const hid_t g = f.node(f.root(), "op", "permutation", 3, 3);
    CraftedFile::dataset(g, "indices", {3}, H5T_NATIVE_INT64, 1.0);  // {1, 1, 1}
    expect_load_error(f, "invalid permutation");
  }
  {
    CraftedFile f("nan.h5");
    const hid_t g = f.node(f.root(), "op", "diagonal", 3, 3);
    CraftedFile::dataset(g, "diagonal", {3}, H5T_NATIVE_DOUBLE, std::nan(""));
    expect_load_error(f, "invalid diagonal");
  }
  {
    CraftedFile f("grid.h5");
    const hid_t g = f.node(f.root(), "op", "monarch", 6, 6);
    CraftedFile::int_attribute(g, "row_blocks", 4);
    CraftedFile::int_attribute(g, "col_blocks", 0);
    CraftedFile::int_attribute(g, "rank", 1);
    expect_load_error(f, "col_blocks");
  }
}

BOOST_AUTO_TEST_CASE(strassen_tile_parameters) {
  // A valid 4 x 6 node with t = 2 and r = 3, then each piece wrong in turn.
  auto node = [](CraftedFile& f, std::int64_t tile, std::int64_t rank) {
    const hid_t g = f.node(f.root(), "op", "strassen_tile", 4, 6);
    CraftedFile::int_attribute(g, "tile", tile);
    CraftedFile::int_attribute(g, "rank", rank);
    return g;
  };
  auto encoders = [](hid_t g, double decode_fill = 1.0) {
    CraftedFile::dataset(g, "encode_signal", {3, 4}, H5T_NATIVE_DOUBLE);
    CraftedFile::dataset(g, "encode_weight", {3, 4}, H5T_NATIVE_DOUBLE);
    CraftedFile::dataset(g, "decode", {3, 4}, H5T_NATIVE_DOUBLE, decode_fill);
  };
  {
    CraftedFile f("stl-valid.h5");
    const hid_t g = node(f, 2, 3);
    encoders(g);
    CraftedFile::dataset(g, "encoded_weight", {3, 2, 3}, H5T_NATIVE_DOUBLE);
    f.close();
    const AnyOperator<double> op = io::load<double>(f.path(), "op");
    BOOST_TEST(std::string(op.node_type()) == "strassen_tile");
  }
  {
    CraftedFile f("stl-weight-shape.h5");  // (r, N/t, M/t) instead of (r, M/t, N/t)
    const hid_t g = node(f, 2, 3);
    encoders(g);
    CraftedFile::dataset(g, "encoded_weight", {3, 3, 2}, H5T_NATIVE_DOUBLE);
    expect_load_error(f, "'encoded_weight' has shape (3, 3, 2), expected (3, 2, 3)");
  }
  {
    CraftedFile f("stl-encoder-shape.h5");  // E_X stored transposed
    const hid_t g = node(f, 2, 3);
    CraftedFile::dataset(g, "encode_signal", {4, 3}, H5T_NATIVE_DOUBLE);
    expect_load_error(f, "'encode_signal' has shape (4, 3), expected (3, 4)");
  }
  {
    CraftedFile f("stl-no-decode.h5");
    const hid_t g = node(f, 2, 3);
    CraftedFile::dataset(g, "encode_signal", {3, 4}, H5T_NATIVE_DOUBLE);
    CraftedFile::dataset(g, "encode_weight", {3, 4}, H5T_NATIVE_DOUBLE);
    expect_load_error(f, "missing dataset 'decode'");
  }
  {
    CraftedFile f("stl-float-encoders.h5");  // encoders are float64 whatever the operator
    const hid_t g = node(f, 2, 3);
    CraftedFile::dataset(g, "encode_signal", {3, 4}, H5T_NATIVE_FLOAT);
    expect_load_error(f, "does not hold float64");
  }
  {
    CraftedFile f("stl-tile.h5");
    node(f, 4, 3);
    expect_load_error(f, "the tile size t = 4 does not divide the shape 4x6");
  }
  {
    CraftedFile f("stl-huge-tile.h5");
    node(f, std::int64_t(1) << 30, 3);
    expect_load_error(f, "tile size 1073741824 is absurd");
  }
  {
    CraftedFile f("stl-no-rank.h5");
    node(f, 2, 0);
    expect_load_error(f, "attribute 'rank' is 0, outside [1, ");
  }
  {
    CraftedFile f("stl-nan.h5");
    const hid_t g = node(f, 2, 3);
    encoders(g, std::nan(""));
    CraftedFile::dataset(g, "encoded_weight", {3, 2, 3}, H5T_NATIVE_DOUBLE);
    expect_load_error(f, "invalid strassen_tile");
  }
  {
    CraftedFile f("stl-unstored.h5");  // a large weight tensor declared but never written
    const hid_t g = f.node(f.root(), "op", "strassen_tile", 1 << 20, 1 << 20);
    CraftedFile::int_attribute(g, "tile", 2);
    CraftedFile::int_attribute(g, "rank", 3);
    encoders(g);
    CraftedFile::dataset(g, "encoded_weight", {3, 1 << 19, 1 << 19}, H5T_NATIVE_DOUBLE, 0, false);
    expect_load_error(f, "stores fewer bytes than its shape needs");
  }
}

BOOST_AUTO_TEST_CASE(strassen_tile_chain_layers) {
  // A strassen_tile child "name" of `chain` (scalar_type only on the top group).
  auto layer = [](CraftedFile& f, hid_t chain, const char* name, std::int64_t rows,
                  std::int64_t cols, std::int64_t tile, std::int64_t rank) {
    const hid_t g = f.node(chain, name, "strassen_tile", rows, cols, "");
    CraftedFile::int_attribute(g, "tile", tile);
    CraftedFile::int_attribute(g, "rank", rank);
    const hsize_t r = hsize_t(rank), tt = hsize_t(tile * tile);
    for (const char* e : {"encode_signal", "encode_weight", "decode"})
      CraftedFile::dataset(g, e, {r, tt}, H5T_NATIVE_DOUBLE);
    CraftedFile::dataset(g, "encoded_weight", {r, hsize_t(rows / tile), hsize_t(cols / tile)},
                         H5T_NATIVE_DOUBLE);
  };
  {
    CraftedFile f("stl-chain-valid.h5");  // 4x6 (r = 3) times 6x8 (r = 5), t = 2
    const hid_t g = f.node(f.root(), "op", "strassen_tile_chain", 4, 8);
    layer(f, g, "0", 4, 6, 2, 3);
    layer(f, g, "1", 6, 8, 2, 5);
    f.close();
    const AnyOperator<double> op = io::load<double>(f.path(), "op");
    BOOST_TEST(std::string(op.node_type()) == "strassen_tile_chain");
    BOOST_TEST(op.as<StrassenTileChain<double>>()->layers().size() == 2u);
  }
  {
    CraftedFile f("stl-chain-empty.h5");
    f.node(f.root(), "op", "strassen_tile_chain", 4, 4);
    expect_load_error(f, "needs at least 1 children");
  }
  {
    CraftedFile f("stl-chain-identity.h5");  // a child that is not a strassen_tile
    const hid_t g = f.node(f.root(), "op", "strassen_tile_chain", 4, 4);
    layer(f, g, "0", 4, 4, 2, 3);
    f.node(g, "1", "identity", 4, 4, "");
    expect_load_error(f, "a strassen_tile_chain holds strassen_tile children only, found identity");
  }
  {
    CraftedFile f("stl-chain-shapes.h5");  // 4x6 times 4x6: 6 columns meet 4 rows
    const hid_t g = f.node(f.root(), "op", "strassen_tile_chain", 4, 6);
    layer(f, g, "0", 4, 6, 2, 3);
    layer(f, g, "1", 4, 6, 2, 3);
    expect_load_error(f,
                      "invalid strassen_tile_chain: strassen_tile_chain: layer 0 (4x6) "
                      "cannot multiply layer 1 (4x6)");
  }
  {
    CraftedFile f("stl-chain-tiles.h5");  // t = 2 then t = 4: valid, applied layer by layer
    const hid_t g = f.node(f.root(), "op", "strassen_tile_chain", 4, 4);
    layer(f, g, "0", 4, 4, 2, 3);
    layer(f, g, "1", 4, 4, 4, 7);
    f.close();
    const AnyOperator<double> op = io::load<double>(f.path(), "op");
    BOOST_TEST(!op.as<StrassenTileChain<double>>()->keeps_encoded(8));
  }
  {
    CraftedFile f("stl-chain-attrs.h5");  // the layers give 4x8, the attributes say 4x6
    const hid_t g = f.node(f.root(), "op", "strassen_tile_chain", 4, 6);
    layer(f, g, "0", 4, 6, 2, 3);
    layer(f, g, "1", 6, 8, 2, 5);
    expect_load_error(f, "attributes say 4x6 but the strassen_tile_chain stored is 4x8");
  }
  {
    CraftedFile f("stl-chain-bad-layer.h5");  // a layer's own error, named at that layer
    const hid_t g = f.node(f.root(), "op", "strassen_tile_chain", 4, 6);
    layer(f, g, "0", 4, 6, 4, 3);
    expect_load_error(f, "/op/0: the tile size t = 4 does not divide the shape 4x6");
  }
}

BOOST_AUTO_TEST_CASE(absurd_sizes_allocate_nothing) {
  {
    CraftedFile f("huge-identity.h5");
    f.node(f.root(), "op", "identity", std::int64_t(1) << 50, std::int64_t(1) << 50);
    expect_load_error(f, "outside [0, 1099511627776]");
  }
  {
    // A 2^20 x 2^20 double matrix (8 TiB) declared but never stored.
    CraftedFile f("huge-dense.h5");
    const hid_t g = f.node(f.root(), "op", "dense", 1 << 20, 1 << 20);
    CraftedFile::dataset(g, "matrix", {1 << 20, 1 << 20}, H5T_NATIVE_DOUBLE, 0, false);
    expect_load_error(f, "stores fewer bytes than its shape needs");
  }
  {
    CraftedFile f("huge-kron.h5");
    const hid_t g = f.node(f.root(), "op", "kron", 1, 1);
    for (int i = 0; i < 3; ++i)
      f.node(g, std::to_string(i).c_str(), "identity", std::int64_t(1) << 20, std::int64_t(1) << 20,
             "");
    expect_load_error(f, "larger than 2^40");
  }
  {
    // 2^40 x 2^22 doubles, chunked and never written: the byte count 2^65 wraps to 0 in 64
    // bits, which must not pass for "the file stores enough".
    CraftedFile f("wrapping-dense.h5");
    const hid_t g = f.node(f.root(), "op", "dense", std::int64_t(1) << 40, std::int64_t(1) << 22);
    const hsize_t dims[2] = {hsize_t(1) << 40, hsize_t(1) << 22}, chunk[2] = {1, 1024};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Dclose(H5Dcreate2(g, "matrix", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5Pclose(dcpl);
    H5Sclose(space);
    f.close();
    BOOST_CHECK_THROW(io::load_matrix<double>(f.path(), "/op/matrix"), IoError);
    expect_load_error(f, "stores fewer bytes than its shape needs");
  }
}

BOOST_AUTO_TEST_CASE(shared_datasets_are_not_read_over_and_over) {
  // A diamond of sums 10 levels deep over one 128 x 128 dense leaf: 1024 reads of the same
  // 128 KiB. Loading may read no more than the file holds, give or take.
  CraftedFile f("diamond-dense.h5");
  const hid_t leaf = f.sum_diamond(10, 128, "dense");
  CraftedFile::dataset(leaf, "matrix", {128, 128}, H5T_NATIVE_DOUBLE, 0.5);
  expect_load_error(f, "bytes of parameters read in all, more than the file holds");
}

BOOST_AUTO_TEST_CASE(a_scaled_factor_is_never_narrowed) {
  auto scaled = [](CraftedFile& f, hid_t type, const std::string& scalar) {
    const hid_t g = f.node(f.root(), "op", "scaled", 1, 1, scalar);
    const double factor = 0.1;
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(g, "factor", type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, &factor);
    H5Aclose(a);
    H5Sclose(space);
    f.node(g, "0", "identity", 1, 1, "");
    f.close();
  };
  {
    CraftedFile f("factor64.h5");  // float64 0.1 is not a float
    scaled(f, H5T_NATIVE_DOUBLE, "float32");
    try {
      io::load<float>(f.path(), "op");
      BOOST_ERROR("a float64 factor loaded into a float32 operator");
    } catch (const IoError& e) {
      BOOST_TEST(std::string(e.what()).find("at most 32 bits") != std::string::npos,
                 "message: " << e.what());
    }
  }
  {
    CraftedFile f("factor32.h5");  // a float32 factor widens exactly
    scaled(f, H5T_NATIVE_FLOAT, "float64");
    const AnyOperator<double> op = io::load<double>(f.path(), "op");
    BOOST_TEST(op.as<Scaled<AnyOperator<double>>>()->factor() == double(0.1f));
  }
}

BOOST_AUTO_TEST_CASE(cycles_and_links) {
  {
    CraftedFile f("cycle.h5");
    const hid_t g = f.node(f.root(), "op", "transpose", 3, 3);
    H5Lcreate_hard(f.root(), "op", g, "0", H5P_DEFAULT, H5P_DEFAULT);  // op/0 is op itself
    expect_load_error(f, "nesting deeper than 64");
  }
  {
    CraftedFile f("soft.h5");
    const hid_t g = f.node(f.root(), "op", "transpose", 3, 3);
    H5Lcreate_soft("/nowhere", g, "0", H5P_DEFAULT, H5P_DEFAULT);
    expect_load_error(f, "soft or external link");
  }
  {
    CraftedFile f("external.h5");
    const hid_t g = f.node(f.root(), "op", "transpose", 3, 3);
    H5Lcreate_external("/etc/passwd", "/", g, "0", H5P_DEFAULT, H5P_DEFAULT);
    expect_load_error(f, "soft or external link");
  }
  {
    // A diamond of shared subgroups 31 sums deep: 2^31 paths through 32 groups.
    CraftedFile f("diamond.h5");
    f.sum_diamond(31, 3, "identity");
    expect_load_error(f, "more than 65536 nodes");
  }
}

BOOST_AUTO_TEST_CASE(indices_stored_as_narrower_integers) {
  // Any integer type is accepted for indices; the storage check compared the stored bytes
  // with 8-byte elements and called an int32 dataset truncated.
  CraftedFile f("perm32.h5");
  const hid_t g = f.node(f.root(), "op", "permutation", 4, 4);
  const hsize_t n = 4;
  const std::int32_t indices[] = {3, 1, 0, 2};
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t d =
      H5Dcreate2(g, "indices", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, indices);
  H5Dclose(d);
  H5Sclose(space);
  f.close();
  const HostMatrix<double> x = HostMatrix<double>::Random(4, 2);
  const HostMatrix<double> y = io::load<double>(f.path(), "op") * x;
  for (int i = 0; i < 4; ++i)
    BOOST_TEST(y.row(i) == x.row(indices[i]));
}

BOOST_AUTO_TEST_CASE(a_missing_name_is_reported_past_a_malformed_neighbour) {
  CraftedFile f("neighbour.h5");
  f.node(f.root(), "bad", "dense", -1, 2);
  f.close();
  try {
    io::load<double>(f.path(), "nope");
    BOOST_ERROR("loading a missing operator succeeded");
  } catch (const IoError& e) {
    // Listing the file's operators for the message read the neighbour's attributes and
    // reported its rows instead.
    BOOST_TEST(std::string(e.what()).find("no operator named 'nope' (the file holds: 'bad')") !=
                   std::string::npos,
               "message: " << e.what());
  }
}

BOOST_AUTO_TEST_CASE(truncated_and_non_hdf5_files) {
  std::mt19937 rng(21);
  const std::string path = temp_file("valid.h5");
  const AnyOperator<double> op = KSChain<double>::random(butterfly_patterns(64), rng);
  io::save(path, op, "op");
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (double fraction : {0.0, 0.01, 0.3, 0.6, 0.95}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), std::streamsize(double(bytes.size()) * fraction));
    BOOST_TEST_CONTEXT("kept " << fraction << " of the file") {
      BOOST_CHECK_THROW(io::load<double>(path, "op"), IoError);
    }
  }
  fs::remove(path);
}

BOOST_AUTO_TEST_CASE(files_of_other_programs_and_the_seal) {
  std::mt19937 rng(23);
  const AnyOperator<double> op = LowRank<double>::random(6, 5, 2, rng);
  {
    // A file another program wrote (old superblock, no user block): strop adds to it.
    CraftedFile f("foreign.h5", 0);
    CraftedFile::dataset(f.root(), "signals", {5, 3}, H5T_NATIVE_DOUBLE, 2.0);
    f.close();
    io::save(f.path(), op, "op");
    const AnyOperator<double> loaded = io::load<double>(f.path(), "op");
    BOOST_TEST((loaded.to_dense().array() == op.to_dense().array()).all());
    BOOST_TEST((io::load_matrix<double>(f.path(), "/signals").array() == 2.0).all());
  }
  {
    // Another program's file with its own 512-byte user block: saving keeps that block (the
    // file stays unsealed) instead of writing the seal over it.
    const std::string path = temp_file("user-block.h5");
    const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_userblock(fcpl, 512);
    H5Fclose(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT));
    H5Pclose(fcpl);
    const std::string block = "#!MY-APP user block: license key 1234-5678, do not remove";
    std::fstream(path, std::ios::in | std::ios::out | std::ios::binary) << block;
    io::save(path, op, "op");
    io::save(path, op, "again");
    std::string first(block.size(), '\0');
    std::ifstream(path, std::ios::binary).read(first.data(), std::streamsize(first.size()));
    BOOST_TEST(first == block);
    BOOST_TEST((io::load<double>(path, "op").to_dense().array() == op.to_dense().array()).all());
    fs::remove(path);
  }
  {
    // A strop file edited behind strop's back fails the seal with a message that says so.
    const std::string path = temp_file("edited.h5");
    io::save(path, op, "op");
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    CraftedFile::int_attribute(file, "edited", 1);
    H5Fclose(file);
    try {
      io::load<double>(path, "op");
      BOOST_ERROR("an edited file loaded");
    } catch (const IoError& e) {
      BOOST_TEST(std::string(e.what()).find("another program edited it") != std::string::npos,
                 "message: " << e.what());
    }
    fs::remove(path);
  }
}

// Random mutations of a valid file: byte flips, overwritten runs, truncations (`cases` of them,
// or STROP_HDF5_MUTATIONS for a longer hunt, under scripts/sanitize.sh for example). With
// checksummed metadata (HDF5's v2 headers) and Fletcher-32 on every dataset, each must be
// detected as an IoError, unless it hit unused bytes and the operator loads unchanged
// (`fingerprint` of the loaded operator equal to the original's).
template <class Fingerprint>
void mutate_and_load(const AnyOperator<double>& op, const std::string& name, int cases,
                     std::mt19937& rng, Fingerprint fingerprint) {
  cases = count_from_environment("STROP_HDF5_MUTATIONS", cases);
  const HostMatrix<double> expected = fingerprint(op);
  const std::string path = temp_file(name);
  io::save(path, op, "op");
  std::string original;
  {
    std::ifstream in(path, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  int rejected = 0, unchanged = 0;
  for (int c = 0; c < cases; ++c) {
    std::string bytes = original;
    std::uniform_int_distribution<std::size_t> position(0, bytes.size() - 1);
    const int kind = c % 3;
    if (kind == 0) {  // a few flipped bits
      for (int k = 0; k < 1 + c % 4; ++k)
        bytes[position(rng)] ^= char(1 << (rng() % 8));
    } else if (kind == 1) {  // a run of random bytes
      const std::size_t at = position(rng), length = 1 + rng() % 64;
      for (std::size_t i = at; i < std::min(bytes.size(), at + length); ++i)
        bytes[i] = char(rng());
    } else {  // truncated, then maybe a flipped byte
      bytes.resize(position(rng));
      if (!bytes.empty() && c % 2) bytes[rng() % bytes.size()] ^= 0x5a;
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), std::streamsize(bytes.size()));
    try {
      const AnyOperator<double> loaded = io::load<double>(path, "op");
      const HostMatrix<double> got = fingerprint(loaded);
      BOOST_TEST_INFO("case " << c << " loaded without error");
      BOOST_TEST_REQUIRE((got.rows() == expected.rows() && got.cols() == expected.cols()));
      BOOST_TEST(((got.array() == expected.array()).all()));
      ++unchanged;
    } catch (const IoError&) {
      ++rejected;
    }
  }
  fs::remove(path);
  BOOST_TEST_MESSAGE(name << " mutations: " << rejected << " rejected, " << unchanged
                          << " harmless");
  BOOST_TEST(rejected + unchanged == cases);
  BOOST_TEST(rejected > cases / 2);  // most bytes of a compact file matter
}

BOOST_AUTO_TEST_CASE(randomly_mutated_files) {
  std::mt19937 rng(22);
  const auto zoo = operator_zoo<double>(rng);
  const AnyOperator<double> op = zoo.back().second;  // "everything": every node kind
  mutate_and_load(op, "fuzz.h5", 400, rng,
                  [](const AnyOperator<double>& a) { return a.to_dense(); });
}

// The same for a Strassen-Tile operator with random encoders, which mixes signals and so
// has no dense matrix: compared by its action on a fixed batch.
BOOST_AUTO_TEST_CASE(randomly_mutated_strassen_tile_files) {
  std::mt19937 rng(24);
  const AnyOperator<double> op = random_strassen_tile<double>(2, 5, 8, 6);
  const HostMatrix<double> X = random_matrix<double>(6, 5);
  mutate_and_load(op, "fuzz-stl.h5", 200, rng, [&](const AnyOperator<double>& a) {
    if (a.cols() != X.rows()) return HostMatrix<double>();  // a different shape: fails above
    HostMatrix<double> Y(a.rows(), X.cols());
    a.apply(Op::NoTrans, view(X), view(Y));
    return Y;
  });
}

BOOST_AUTO_TEST_SUITE_END()
