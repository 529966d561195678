#include "io/operator_codecs.hpp"

#include <Eigen/Core>

#include "strop/expr/block_diag.hpp"
#include "strop/expr/kron.hpp"
#include "strop/expr/product.hpp"
#include "strop/expr/scaled.hpp"
#include "strop/expr/stack.hpp"
#include "strop/expr/sum.hpp"
#include "strop/expr/transposed.hpp"
#include "strop/operators/blast.hpp"
#include "strop/operators/dense.hpp"
#include "strop/operators/diagonal.hpp"
#include "strop/operators/identity.hpp"
#include "strop/operators/ks_chain.hpp"
#include "strop/operators/ks_factor.hpp"
#include "strop/operators/lowrank.hpp"
#include "strop/operators/monarch.hpp"
#include "strop/operators/permutation.hpp"
#include "strop/operators/strassen_tile.hpp"

namespace strop::io::codecs {

namespace {

using h5::Group;
template <class T>
using Any = AnyOperator<T>;

// ---- layout conversions: HDF5 shows matrices row-major, as numpy does -----------------

// `count` column-major blocks of rows x cols, rewritten block by block in row-major order.
template <class T>
std::vector<T> blocks_to_row_major(const T* data, Index count, Index rows, Index cols) {
  std::vector<T> out(static_cast<std::size_t>(count * rows * cols));
  using ColMajor = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>;
  using RowMajor = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  for (Index b = 0; b < count; ++b)
    RowMajor(out.data() + b * rows * cols, rows, cols) =
        ColMajor(data + b * rows * cols, rows, cols);
  return out;
}

// The inverse of blocks_to_row_major.
template <class T>
std::vector<T> blocks_to_col_major(const std::vector<T>& data, Index count, Index rows,
                                   Index cols) {
  std::vector<T> out(data.size());
  using RowMajor =
      Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  using ColMajor = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>;
  for (Index b = 0; b < count; ++b)
    ColMajor(out.data() + b * rows * cols, rows, cols) =
        RowMajor(data.data() + b * rows * cols, rows, cols);
  return out;
}

template <class T>
void write_matrix(const Group& g, const std::string& name, const HostMatrix<T>& m) {
  g.write_dataset(name, blocks_to_row_major(m.data(), 1, m.rows(), m.cols()).data(),
                  {m.rows(), m.cols()});
}

// Counts the nodes of a graph as the reader or the writer walks it and says which limit a
// node exceeds ("" if none), so that saving refuses exactly what loading would.
class NodeCounter {
 public:
  explicit NodeCounter(const ReadLimits& limits) : limits_(limits) {}

  // A node at `depth` (0 for an operator's top group).
  std::string enter(int depth) {
    if (depth > limits_.max_depth)
      return detail::concat("nesting deeper than ", limits_.max_depth, " levels");
    if (++nodes_ > limits_.max_nodes)
      return detail::concat("more than ", limits_.max_nodes, " nodes");
    return "";
  }

  // Child number `index` (from 0) of a node.
  std::string child(Index index) const {
    if (index >= limits_.max_children)
      return detail::concat("more than ", limits_.max_children, " children");
    return "";
  }

 private:
  const ReadLimits& limits_;
  Index nodes_ = 0;
};

// ---- writing -----------------------------------------------------------------------------

template <class T>
void write_ks_factor(const Group& g, const KSFactor<T>& f) {
  const KSPattern& p = f.pattern();
  g.write_attribute("pattern", std::vector<std::int64_t>{p.a, p.b, p.c, p.d});
  g.write_dataset("values", f.values().data(), {p.a, p.b, p.c, p.d});
}

// Encoders row-major (r, t^2) as numpy shows them; the encoded weights in the operator's
// own colour-major order, which C-order (r, M/t, N/t) reproduces exactly.
template <class T>
void write_strassen_tile(const Group& g, const StrassenTile<T>& tile) {
  const stl::Encoders& enc = tile.encoders();
  const Index t = enc.tile;
  g.write_attribute("tile", std::int64_t(t));
  g.write_attribute("rank", std::int64_t(enc.rank()));
  write_matrix(g, "encode_signal", enc.encode_signal);
  write_matrix(g, "encode_weight", enc.encode_weight);
  write_matrix(g, "decode", enc.decode);
  g.write_dataset("encoded_weight", tile.encoded_weight().data(),
                  {enc.rank(), tile.rows() / t, tile.cols() / t});
}

void write_grid(const Group& g, const BlockGrid& grid) {
  g.write_attribute("row_blocks", std::int64_t(grid.row_blocks));
  g.write_attribute("col_blocks", std::int64_t(grid.col_blocks));
  g.write_attribute("rank", std::int64_t(grid.rank));
}

void write_node_header(const Group& g, const char* type, Index rows, Index cols) {
  g.write_attribute("strop_type", std::string(type));
  g.write_attribute("rows", std::int64_t(rows));
  g.write_attribute("cols", std::int64_t(cols));
}

template <class T>
void write_children(const Group& g, const std::vector<Any<T>>& children) {
  for (std::size_t i = 0; i < children.size(); ++i)
    write_operator(g.create_child(std::to_string(i)), children[i]);
}

// limits_exceeded below `depth`, with the children as write_operator lays them out.
template <class T>
std::string limits_exceeded(const Any<T>& op, int depth, const ReadLimits& limits,
                            NodeCounter& counter) {
  if (std::string why = counter.enter(depth); !why.empty()) return why;
  for (const Index extent : {op.rows(), op.cols()})
    if (extent > limits.max_extent)
      return detail::concat("a ", op.node_type(), " of ", op.rows(), "x", op.cols(),
                            " (extents beyond ", limits.max_extent, ")");
  // Chains store each factor or layer as a child node without children of its own.
  Index leaves = 0;
  if (const auto* chain = op.template as<KSChain<T>>()) leaves = Index(chain->factors().size());
  if (const auto* stl_chain = op.template as<StrassenTileChain<T>>())
    leaves = Index(stl_chain->layers().size());
  const std::vector<Any<T>> children = op.children();
  const Index count = leaves + Index(children.size());
  if (count > 0)
    if (std::string why = counter.child(count - 1); !why.empty()) return why;
  for (Index i = 0; i < leaves; ++i)
    if (std::string why = counter.enter(depth + 1); !why.empty()) return why;
  for (const Any<T>& child : children)
    if (std::string why = limits_exceeded(child, depth + 1, limits, counter); !why.empty())
      return why;
  return "";
}

}  // namespace

template <class T>
std::string limits_exceeded(const Any<T>& op, const ReadLimits& limits) {
  NodeCounter counter(limits);
  return limits_exceeded(op, 0, limits, counter);
}

template <class T>
void write_operator(const Group& g, const Any<T>& op) {
  const std::string type = op.node_type();
  write_node_header(g, op.node_type(), op.rows(), op.cols());
  if (const auto* dense = op.template as<Dense<T>>()) {
    write_matrix(g, "matrix", dense->matrix());
  } else if (op.template as<Identity<T>>()) {
    // The shape says it all.
  } else if (const auto* diagonal = op.template as<Diagonal<T>>()) {
    g.write_dataset("diagonal", diagonal->diagonal().data(), {diagonal->rows()});
  } else if (const auto* permutation = op.template as<Permutation<T>>()) {
    const std::vector<Index>& indices = permutation->indices();
    g.write_dataset("indices", indices.data(), {Index(indices.size())});
  } else if (const auto* factor = op.template as<KSFactor<T>>()) {
    write_ks_factor(g, *factor);
  } else if (const auto* chain = op.template as<KSChain<T>>()) {
    for (std::size_t i = 0; i < chain->factors().size(); ++i) {
      const KSFactor<T>& f = chain->factors()[i];
      const Group child = g.create_child(std::to_string(i));
      write_node_header(child, KSFactor<T>::type_name, f.rows(), f.cols());
      write_ks_factor(child, f);
    }
  } else if (const auto* lowrank = op.template as<LowRank<T>>()) {
    g.write_attribute("rank", std::int64_t(lowrank->rank()));
    write_matrix(g, "left", lowrank->left());
    write_matrix(g, "right", lowrank->right());
  } else if (const auto* monarch = op.template as<Monarch<T>>()) {
    const BlockGrid& grid = monarch->grid();
    write_grid(g, grid);
    const Index h = grid.block_height(), w = grid.block_width(), r = grid.rank;
    const Index blocks = grid.block_count();
    g.write_dataset("left", blocks_to_row_major(monarch->left_values().data(), blocks, h, r).data(),
                    {grid.row_blocks, grid.col_blocks, h, r});
    g.write_dataset("right",
                    blocks_to_row_major(monarch->right_values().data(), blocks, r, w).data(),
                    {grid.row_blocks, grid.col_blocks, r, w});
  } else if (const auto* blast = op.template as<Blast<T>>()) {
    const BlockGrid& grid = blast->grid();
    write_grid(g, grid);
    const Index h = grid.block_height(), w = grid.block_width(), r = grid.rank;
    g.write_dataset("left",
                    blocks_to_row_major(blast->left_values().data(), grid.row_blocks, h, r).data(),
                    {grid.row_blocks, h, r});
    g.write_dataset("diagonals", blast->diagonal_values().data(),
                    {grid.row_blocks, grid.col_blocks, r});
    g.write_dataset("right",
                    blocks_to_row_major(blast->right_values().data(), grid.col_blocks, r, w).data(),
                    {grid.col_blocks, r, w});
  } else if (const auto* tile = op.template as<StrassenTile<T>>()) {
    write_strassen_tile(g, *tile);
  } else if (const auto* stl_chain = op.template as<StrassenTileChain<T>>()) {
    // The layers as strassen_tile children "0", "1", ... in product order (A_1 first).
    for (std::size_t i = 0; i < stl_chain->layers().size(); ++i) {
      const StrassenTile<T>& layer = stl_chain->layers()[i];
      const Group child = g.create_child(std::to_string(i));
      write_node_header(child, StrassenTile<T>::type_name, layer.rows(), layer.cols());
      write_strassen_tile(child, layer);
    }
  } else if (const auto* scaled = op.template as<Scaled<Any<T>>>()) {
    g.write_scalar_attribute("factor", scaled->factor());
    write_children(g, op.children());
  } else if (type == "product" || type == "sum" || type == "transpose" || type == "adjoint" ||
             type == "kron" || type == "block_diag" || type == "vstack" || type == "hstack") {
    write_children(g, op.children());
  } else {
    g.fail("no HDF5 codec for operator type '", type, "'");
  }
}

// ---- reading -------------------------------------------------------------------------------

namespace {

template <class T>
class Reader {
 public:
  explicit Reader(const ReadLimits& limits) : limits_(limits), counter_(limits) {}

  Any<T> node(const Group& g, int depth) {
    if (std::string why = counter_.enter(depth); !why.empty())
      g.fail(why, " (a cycle of hard links, or shared subgroups?)");
    const std::string type = g.string_attribute("strop_type");
    const Index rows = extent(g, "rows", 0);
    const Index cols = extent(g, "cols", 0);
    Any<T> op = [&]() -> Any<T> {
      try {
        return build(g, type, rows, cols, depth);
      } catch (const IoError&) {
        throw;
      } catch (const Error& e) {
        // An operator's own validation (pattern, permutation, finiteness) failed.
        g.fail("invalid ", type, ": ", e.what());
      }
    }();
    if (op.rows() != rows || op.cols() != cols)
      g.fail("attributes say ", rows, "x", cols, " but the ", type, " stored is ", op.rows(), "x",
             op.cols());
    return op;
  }

 private:
  Index extent(const Group& g, const char* name, Index lo) const {
    return g.int_attribute(name, lo, limits_.max_extent);
  }

  std::vector<Any<T>> children(const Group& g, int depth, Index at_least) {
    std::vector<Any<T>> out;
    for (Index i = 0; g.has_link(std::to_string(i)); ++i) {
      if (std::string why = counter_.child(i); !why.empty()) g.fail(why);
      out.push_back(node(g.child(std::to_string(i)), depth + 1));
    }
    if (Index(out.size()) < at_least)
      g.fail("needs at least ", at_least, " children (subgroups \"0\", \"1\", ...), found ",
             out.size());
    return out;
  }

  std::vector<Any<T>> exactly(const Group& g, int depth, Index count) {
    std::vector<Any<T>> out = children(g, depth, 0);
    if (Index(out.size()) != count)
      g.fail("needs exactly ", count, " children, found ", out.size());
    return out;
  }

  // Every dataset is read here and counted against max_bytes. A well-formed file reads each
  // of its datasets once, so this only stops graphs that share them; each read allocates at
  // most what the file stores of that dataset (read_dataset checks).
  template <class U>
  std::vector<U> dataset(const Group& g, const std::string& name, const std::vector<Index>& dims) {
    std::vector<U> values = g.read_dataset<U>(name, dims);
    bytes_ += Index(values.size() * sizeof(U));
    if (bytes_ > limits_.max_bytes)
      g.fail("more than ", limits_.max_bytes,
             " bytes of parameters read in all, more than the file holds (datasets shared "
             "through hard links?)");
    return values;
  }

  template <class U>
  HostMatrix<U> matrix(const Group& g, const std::string& name, Index rows, Index cols) {
    const std::vector<U> values =
        blocks_to_col_major(dataset<U>(g, name, {rows, cols}), 1, rows, cols);
    return Eigen::Map<const HostMatrix<U>>(values.data(), rows, cols);
  }

  KSFactor<T> ks_factor(const Group& g) {
    const std::vector<std::int64_t> p = g.int_array_attribute("pattern", 4);
    for (std::int64_t v : p)
      if (v < 1 || v > limits_.max_extent) g.fail("pattern entries must be in [1, 2^40], got ", v);
    std::vector<T> values = dataset<T>(g, "values", {p[0], p[1], p[2], p[3]});
    return KSFactor<T>(KSPattern{p[0], p[1], p[2], p[3]}, std::move(values));
  }

  BlockGrid grid(const Group& g, Index rows, Index cols) const {
    const Index rb = extent(g, "row_blocks", 1), cb = extent(g, "col_blocks", 1);
    if (rows % rb != 0 || cols % cb != 0)
      g.fail("a ", rows, "x", cols, " operator cannot be cut into ", rb, "x", cb, " blocks");
    return {rows, cols, rb, cb, extent(g, "rank", 0)};
  }

  StrassenTile<T> strassen_tile(const Group& g, Index rows, Index cols) {
    const Index t = extent(g, "tile", 1);
    if (t > limits_.max_extent / t) g.fail("tile size ", t, " is absurd (t^2 beyond 2^40)");
    if (rows % t != 0 || cols % t != 0)
      g.fail("the tile size t = ", t, " does not divide the shape ", rows, "x", cols);
    const Index r = extent(g, "rank", 1);
    stl::Encoders enc;
    enc.tile = t;
    enc.encode_signal = matrix<double>(g, "encode_signal", r, t * t);
    enc.encode_weight = matrix<double>(g, "encode_weight", r, t * t);
    enc.decode = matrix<double>(g, "decode", r, t * t);
    std::vector<T> weights = dataset<T>(g, "encoded_weight", {r, rows / t, cols / t});
    return StrassenTile<T>(std::move(enc), rows, cols, std::move(weights));
  }

  // Products of child extents for kron, checked against overflow before Kron multiplies.
  void check_kron_extent(const Group& g, const std::vector<Any<T>>& factors) const {
    Index rows = 1, cols = 1;
    for (const Any<T>& f : factors) {
      if ((f.rows() > 0 && rows > limits_.max_extent / f.rows()) ||
          (f.cols() > 0 && cols > limits_.max_extent / f.cols()))
        g.fail("the Kronecker product of the factors is larger than 2^40");
      rows *= f.rows();
      cols *= f.cols();
    }
  }

  Any<T> build(const Group& g, const std::string& type, Index rows, Index cols, int depth) {
    if (type == "dense") return Dense<T>(matrix<T>(g, "matrix", rows, cols));
    if (type == "identity") return Identity<T>(rows);
    if (type == "diagonal") {
      const std::vector<T> d = dataset<T>(g, "diagonal", {rows});
      return Diagonal<T>(Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(d.data(), rows));
    }
    if (type == "permutation") return Permutation<T>(dataset<Index>(g, "indices", {rows}));
    if (type == "ks_factor") return ks_factor(g);
    if (type == "ks_chain") {
      std::vector<KSFactor<T>> factors;
      for (const Any<T>& child : children(g, depth, 1)) {
        const auto* factor = child.template as<KSFactor<T>>();
        if (!factor) g.fail("a ks_chain holds ks_factor children only, found ", child.node_type());
        factors.push_back(*factor);
      }
      return KSChain<T>(std::move(factors));
    }
    if (type == "lowrank") {
      const Index r = extent(g, "rank", 0);
      return LowRank<T>(matrix<T>(g, "left", rows, r), matrix<T>(g, "right", r, cols));
    }
    if (type == "monarch") {
      const BlockGrid b = grid(g, rows, cols);
      const Index h = b.block_height(), w = b.block_width(), r = b.rank;
      auto left = dataset<T>(g, "left", {b.row_blocks, b.col_blocks, h, r});
      auto right = dataset<T>(g, "right", {b.row_blocks, b.col_blocks, r, w});
      return Monarch<T>(rows, cols, b.row_blocks, b.col_blocks, r,
                        blocks_to_col_major(left, b.block_count(), h, r),
                        blocks_to_col_major(right, b.block_count(), r, w));
    }
    if (type == "blast") {
      const BlockGrid b = grid(g, rows, cols);
      const Index h = b.block_height(), w = b.block_width(), r = b.rank;
      auto left = dataset<T>(g, "left", {b.row_blocks, h, r});
      auto diagonals = dataset<T>(g, "diagonals", {b.row_blocks, b.col_blocks, r});
      auto right = dataset<T>(g, "right", {b.col_blocks, r, w});
      return Blast<T>(rows, cols, b.row_blocks, b.col_blocks, r,
                      blocks_to_col_major(left, b.row_blocks, h, r), std::move(diagonals),
                      blocks_to_col_major(right, b.col_blocks, r, w));
    }
    if (type == "strassen_tile") return strassen_tile(g, rows, cols);
    if (type == "strassen_tile_chain") {
      std::vector<StrassenTile<T>> layers;
      for (const Any<T>& child : children(g, depth, 1)) {
        const auto* layer = child.template as<StrassenTile<T>>();
        if (!layer)
          g.fail("a strassen_tile_chain holds strassen_tile children only, found ",
                 child.node_type());
        layers.push_back(*layer);
      }
      // ShapeError (reported as "invalid strassen_tile_chain") unless the shapes chain.
      return StrassenTileChain<T>(std::move(layers));
    }
    if (type == "product") {
      auto c = exactly(g, depth, 2);
      return Product<Any<T>, Any<T>>(c[0], c[1]);
    }
    if (type == "sum") {
      auto c = exactly(g, depth, 2);
      return Sum<Any<T>, Any<T>>(c[0], c[1]);
    }
    if (type == "scaled") {
      const T factor = g.scalar_attribute<T>("factor");
      return Scaled<Any<T>>(factor, exactly(g, depth, 1)[0]);
    }
    if (type == "transpose") return Transposed<Any<T>, false>(exactly(g, depth, 1)[0]);
    if (type == "adjoint") return Transposed<Any<T>, true>(exactly(g, depth, 1)[0]);
    if (type == "kron") {
      auto factors = children(g, depth, 1);
      check_kron_extent(g, factors);
      return Kron<T>(std::move(factors));
    }
    if (type == "block_diag") return BlockDiag<T>(children(g, depth, 1));
    if (type == "vstack") return VStack<T>(children(g, depth, 1));
    if (type == "hstack") return HStack<T>(children(g, depth, 1));
    g.fail("unknown strop_type '", type, "'");
  }

  const ReadLimits& limits_;
  NodeCounter counter_;
  Index bytes_ = 0;
};

}  // namespace

template <class T>
Any<T> read_operator(const Group& group, const ReadLimits& limits) {
  return Reader<T>(limits).node(group, 0);
}

#define STROP_CODECS_INSTANTIATE(T)                                                  \
  template std::string limits_exceeded<T>(const AnyOperator<T>&, const ReadLimits&); \
  template void write_operator<T>(const Group&, const AnyOperator<T>&);              \
  template AnyOperator<T> read_operator<T>(const Group&, const ReadLimits&);
STROP_FOR_EACH_SCALAR(STROP_CODECS_INSTANTIATE)
#undef STROP_CODECS_INSTANTIATE

}  // namespace strop::io::codecs
