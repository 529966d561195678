// `strop info OP.h5`: what a file holds. For each operator: its name, shape and scalar
// type, parameters and compression against the dense matrix, flops per signal, where it came
// from, and its expression tree with the structure of every node.
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/locations.hpp"
#include "cli/scalar_dispatch.hpp"
#include "cli/table.hpp"
#include "strop/io/hdf5.hpp"
#include "strop/strop.hpp"

namespace strop::cli {
namespace {

struct InfoOptions {
  std::string file;
  bool values = false;
};

template <class T>
std::string scalar_text(T s) {
  if constexpr (is_complex_v<T>) {
    return format("(%g%+gi)", double(s.real()), double(s.imag()));
  } else {
    return format("%g", double(s));
  }
}

// Inexact (learned) encoders in general mix the t signals of a tile.
template <class T>
std::string strassen_tile_details(const StrassenTile<T>& s) {
  return format("tiles of %lld x %lld, rank %lld (%s encoders)", static_cast<long long>(s.tile()),
                static_cast<long long>(s.tile()), static_cast<long long>(s.rank()),
                stl::is_exact(s.encoders()) ? "exact" : "inexact");
}

// What a node is beyond its type and shape: patterns, grids, ranks, factors.
template <class T>
std::string node_details(const AnyOperator<T>& op) {
  if (const auto* f = op.template as<KSFactor<T>>()) return "pattern " + to_string(f->pattern());
  if (const auto* c = op.template as<KSChain<T>>())
    return std::to_string(c->size()) + " KS factors";
  if (const auto* m = op.template as<Monarch<T>>()) {
    const BlockGrid& g = m->grid();
    return format("%lld x %lld blocks of %lld x %lld, rank %lld each",
                  static_cast<long long>(g.row_blocks), static_cast<long long>(g.col_blocks),
                  static_cast<long long>(g.block_height()), static_cast<long long>(g.block_width()),
                  static_cast<long long>(g.rank));
  }
  if (const auto* b = op.template as<Blast<T>>()) {
    const BlockGrid& g = b->grid();
    return format("%lld x %lld blocks of %lld x %lld, shared bases of rank %lld",
                  static_cast<long long>(g.row_blocks), static_cast<long long>(g.col_blocks),
                  static_cast<long long>(g.block_height()), static_cast<long long>(g.block_width()),
                  static_cast<long long>(g.rank));
  }
  if (const auto* l = op.template as<LowRank<T>>()) return "rank " + std::to_string(l->rank());
  if (const auto* s = op.template as<StrassenTile<T>>()) return strassen_tile_details(*s);
  if (const auto* c = op.template as<StrassenTileChain<T>>()) {
    std::string ranks, tiles;
    for (const StrassenTile<T>& layer : c->layers()) {
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(layer.rank());
      tiles += (tiles.empty() ? "" : ", ") + std::to_string(layer.tile());
    }
    return format("%zu Strassen-Tile layers, tile sizes %s, ranks %s", c->layers().size(),
                  tiles.c_str(), ranks.c_str());
  }
  if (const auto* p = op.template as<Permutation<T>>()) {
    const Index n = p->rows();
    if (n > 1 && std::has_single_bit(std::uint64_t(n)) && p->indices() == bit_reversal_indices(n))
      return "bit reversal";
    return "";
  }
  if (const auto* s = op.template as<Scaled<AnyOperator<T>>>())
    return "by " + scalar_text(s->factor());
  return "";
}

template <class T>
void print_tree(const AnyOperator<T>& op, int depth) {
  std::string line = std::string(std::size_t(4 + 2 * depth), ' ') + op.node_type() + " " +
                     format_shape(op.rows(), op.cols());
  const std::string details = node_details(op);
  if (!details.empty()) line += ", " + details;
  line += ", " + format_count(double(op.parameter_count())) + " params";
  std::printf("%s\n", line.c_str());
  if (const auto* c = op.template as<KSChain<T>>()) {
    for (const KSFactor<T>& f : c->factors())
      std::printf(
          "%s%s\n", std::string(std::size_t(6 + 2 * depth), ' ').c_str(),
          format("ks_factor %s, pattern %s, %s params", format_shape(f.rows(), f.cols()).c_str(),
                 to_string(f.pattern()).c_str(), format_count(double(f.nnz())).c_str())
              .c_str());
    return;
  }
  if (const auto* c = op.template as<StrassenTileChain<T>>()) {
    for (const StrassenTile<T>& l : c->layers())
      std::printf("%s%s\n", std::string(std::size_t(6 + 2 * depth), ' ').c_str(),
                  format("strassen_tile %s, %s, %s params",
                         format_shape(l.rows(), l.cols()).c_str(), strassen_tile_details(l).c_str(),
                         format_count(double(l.parameter_count())).c_str())
                      .c_str());
    return;
  }
  for (const AnyOperator<T>& child : op.children())
    print_tree(child, depth + 1);
}

void print_operator(const std::string& file, const io::StoredOperator& s) {
  std::printf("%s: %s %s operator\n", s.name.c_str(), format_shape(s.rows, s.cols).c_str(),
              s.scalar_type.c_str());
  with_scalar_type(s.scalar_type, [&]<class T>() {
    const AnyOperator<T> op = io::load<T>(file, s.name);
    const double dense = double(op.rows()) * double(op.cols());
    const double dense_flops = detail::flops_per_fma<T>() * dense;
    const double params = double(op.parameter_count());
    std::printf("  parameters    %s (dense: %s, %s compression)\n", format_count(params).c_str(),
                format_count(dense).c_str(), format_ratio(dense / std::max(params, 1.0)).c_str());
    // Per signal of a large batch: a Strassen-Tile operator pads one signal to a whole tile
    // of t, so flops(1) counts t signals' work (4x too much for t = 4).
    const Index batch = 4096;  // a multiple of every tile size
    const double flops = op.flops(batch) / double(batch);
    std::printf("  flops/signal  %s (dense: %s, %s fewer)\n", format_count(flops).c_str(),
                format_count(dense_flops).c_str(),
                format_ratio(dense_flops / std::max(flops, 1.0)).c_str());
    if (s.provenance) {
      const io::Provenance& p = *s.provenance;
      std::string text = p.algorithm.empty() ? "unknown algorithm" : p.algorithm;
      if (p.relative_error >= 0) text += ", relative error " + format_error(p.relative_error);
      if (p.source_rows > 0)
        text += ", from a " + format_shape(p.source_rows, p.source_cols) + " matrix";
      if (!p.source.empty()) text += " (" + p.source + ")";
      std::printf("  provenance    %s\n", text.c_str());
    }
    std::printf("  tree\n");
    print_tree(op, 0);
    return 0;
  });
}

int run_info(const InfoOptions& o) {
  const OperatorLocation where = parse_operator_location(o.file);
  if (!where.name.empty()) {  // file.h5:NAME shows just that one
    const ResolvedOperator r = resolve_operator(where);
    for (const io::StoredOperator& s : io::list_operators(where.file))
      if (s.name == r.name) print_operator(where.file, s);
    return 0;
  }
  const std::vector<io::StoredOperator> stored = list_stored_operators(where.file);
  std::printf("%s: %zu operator%s\n", where.file.c_str(), stored.size(),
              stored.size() == 1 ? "" : "s");
  for (const io::StoredOperator& s : stored) {
    std::printf("\n");
    print_operator(where.file, s);
  }
  return 0;
}

}  // namespace

Subcommand add_info_command(CLI::App& parent) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* app = parent.add_subcommand(
      "info",
      "Describe the operators in an HDF5 file: shape, scalar type, parameters, compression,\n"
      "flops per signal, provenance and the expression tree (KS patterns, block grids, ranks).");
  app->add_option("FILE", o->file, "file.h5 (every operator) or file.h5:NAME (one)")->required();
  return {app, [o] { return run_info(*o); }};
}

}  // namespace strop::cli
