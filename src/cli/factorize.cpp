// `strop factorize IN --structure S -o OUT.h5`: approximate a dense matrix (a .npy file or
// an HDF5 dataset) by a structured operator and save it, with its provenance, to HDF5.
// The saved operator represents the input matrix itself: when the butterfly needs the
// columns in bit-reversed order, the permutation is stored with it (chain * P).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/device_choice.hpp"
#include "cli/divisors.hpp"
#include "cli/locations.hpp"
#include "cli/progress.hpp"
#include "cli/scalar_dispatch.hpp"
#include "cli/table.hpp"
#include "strop/io/hdf5.hpp"
#include "strop/strop.hpp"

namespace strop::cli {
namespace {

struct FactorizeOptions {
  std::string input;
  std::string output;
  std::string structure;
  std::string name;
  std::string dtype;
  std::string device = "cpu";
  // butterfly
  bool bit_reversal = false;
  Index budget = 0;
  std::string order = "balanced";
  // monarch, blast
  Index blocks = 0;
  Index row_blocks = 0;
  Index col_blocks = 0;
  Index rank = 0;
  Index steps = 300;
  double learning_rate = 1.0;
  // lowrank
  double tolerance = 0;
  std::string method = "auto";
  std::uint64_t seed = 0;
  // kron
  std::string left_shape;
  Index terms = 1;
  // stl
  bool fit_encoders = false;
};

// What a factorization hands back to be printed and saved.
template <class T>
struct Fit {
  AnyOperator<T> op;
  FactorReport report;
  std::string structure;  // "12 KS factors (1,2,2,2048) ... (2048,2,2,1)", "8 x 8 blocks, rank 1"
};

// The divisor of n closest to sqrt(n), ties to the larger: n / d for the largest divisor
// d <= sqrt(n) (d and n / d are equally far from sqrt(n) on a log scale).
Index divisor_near_sqrt(Index n) {
  return n / largest_divisor_up_to_sqrt(n);
}

std::string describe_patterns(const std::vector<KSPattern>& patterns) {
  std::string out =
      std::to_string(patterns.size()) + " KS factor" + (patterns.size() == 1 ? "" : "s") + ":";
  for (const KSPattern& p : patterns)
    out += " " + to_string(p);
  return out;
}

// Block grid from --blocks / --row-blocks / --col-blocks; default: a square grid of about
// sqrt(min(M, N)) blocks that divides both sides.
std::pair<Index, Index> block_grid(const FactorizeOptions& o, Index rows, Index cols) {
  const Index fallback = o.blocks > 0 ? o.blocks : divisor_near_sqrt(std::gcd(rows, cols));
  return {o.row_blocks > 0 ? o.row_blocks : fallback, o.col_blocks > 0 ? o.col_blocks : fallback};
}

template <class T>
Fit<T> factorize_butterfly(const HostMatrix<T>& a, const FactorizeOptions& o, Device device) {
  const Index rows = a.rows(), cols = a.cols();
  const bool dyadic = rows == cols && rows >= 2 && std::has_single_bit(std::uint64_t(rows));
  std::vector<KSPattern> patterns;
  if (o.budget > 0) {
    patterns = chain_for_budget(rows, cols, o.budget);
  } else {
    require<ShapeError>(dyadic, "factorize: the square-dyadic butterfly needs a square matrix of ",
                        "power-of-two size, got ", rows, "x", cols,
                        "; pass --budget P for the most expressive KS chain of at most P "
                        "parameters (Monarch or radix-2^k butterfly)");
    patterns = square_dyadic_chain(rows);
  }
  KSFactorizeOptions fo;
  fo.order = o.order == "balanced" ? HierarchicalOrder::balanced : HierarchicalOrder::left_to_right;
  fo.device = device;
  if (o.bit_reversal) {
    require<ShapeError>(dyadic,
                        "factorize: --bit-reversal needs a square power-of-two matrix, got ", rows,
                        "x", cols);
    fo.column_permutation = bit_reversal_indices(cols);
  }
  Progress progress("factorizing into " + std::to_string(patterns.size()) + " KS factors", 0);
  KSFactorization<T> fit = factorize_ks_chain(a, patterns, fo);
  progress.finish();
  // A(:, q) ≈ chain, so A ≈ chain * P with (P X)[i] = X[q[i]], i.e. P = Permutation(q).
  AnyOperator<T> op = fo.column_permutation.empty()
                          ? AnyOperator<T>(fit.chain)
                          : AnyOperator<T>(fit.chain * Permutation<T>(fo.column_permutation));
  std::string structure = describe_patterns(patterns);
  if (o.bit_reversal) structure += ", then columns in bit-reversed order";
  return {op, fit.report, structure};
}

// Strassen-Tile, t = 4: r colours of the exact rank-49 encoders (all 49: exact), or encoders
// fitted on the paper's single-tile problem (--fit-encoders), then the encoded weights that
// are optimal for isotropic signals. STL mixes the signals of a tile, so it has no dense
// matrix to compare with: the error is measured on a batch of 256 Gaussian signals.
template <class T>
Fit<T> factorize_stl(const HostMatrix<T>& a, const FactorizeOptions& o) {
  const Index rank = o.rank > 0 ? o.rank : 32;
  require<ShapeError>(rank <= 49, "factorize: --structure stl takes --rank 1..49 (colours of ",
                      "4 x 4 tiles; 49 is exact), got ", rank);
  std::mt19937 rng(static_cast<std::mt19937::result_type>(o.seed));
  std::string encoders = rank == 49 ? "the exact rank-49 encoders, Strassen squared"
                                    : "encoders drawn at random from the exact rank-49 ones";
  // The provenance names the encoders too, so that `strop info` tells them apart.
  std::string method = rank == 49 ? "strassen-tile (exact encoders, least squares)"
                                  : "strassen-tile (random subset of the exact encoders, least "
                                    "squares, isotropic signals)";
  stl::Encoders enc = rank == 49 ? stl::strassen_4x4() : stl::rank49_subset(rank, rng);
  const auto start = std::chrono::steady_clock::now();
  if (o.fit_encoders && rank < 49) {
    stl::TileFitOptions fit_options;
    fit_options.rank = rank;
    fit_options.seed = o.seed;
    fit_options.initial = enc;
    enc = stl::fit_tile_encoders(fit_options).encoders;
    encoders = "encoders fitted on the single-tile problem";
    method = "strassen-tile (encoders fitted on one tile, least squares, isotropic signals)";
  }
  StrassenTile<T> op = stl::fit_encoded_weights(a, enc);
  FactorReport report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.parameters = op.parameter_count();
  report.method = method;
  HostMatrix<T> x(a.cols(), 256);
  std::normal_distribution<double> normal;
  for (Index i = 0; i < x.size(); ++i) {
    if constexpr (is_complex_v<T>) {
      x.data()[i] = T(RealOf<T>(normal(rng)), RealOf<T>(normal(rng)));
    } else {
      x.data()[i] = T(normal(rng));
    }
  }
  HostMatrix<T> y(a.rows(), x.cols());
  op.apply(Op::NoTrans, view(x), view(y));
  const HostMatrix<T> expected = a * x;
  report.relative_error = double((y - expected).norm()) / std::max(double(expected.norm()), 1e-300);
  return {op, report,
          format("tiles of 4 x 4, rank %lld, %s (error on 256 Gaussian signals)",
                 static_cast<long long>(rank), encoders.c_str())};
}

template <class T>
Fit<T> factorize_with(const HostMatrix<T>& a, const FactorizeOptions& o, Device device) {
  const Index rows = a.rows(), cols = a.cols();
  if (o.structure == "butterfly") return factorize_butterfly(a, o, device);
  if (o.structure == "monarch") {
    const auto [rb, cb] = block_grid(o, rows, cols);
    const Index rank = o.rank > 0 ? o.rank : 1;
    auto fit = factorize_monarch(a, rb, cb, rank, {.compute_error = true, .device = device});
    return {fit.monarch, fit.report,
            format("%lld x %lld blocks, rank %lld each", static_cast<long long>(rb),
                   static_cast<long long>(cb), static_cast<long long>(rank))};
  }
  if (o.structure == "blast") {
    require<ShapeError>(o.rank > 0,
                        "factorize: --structure blast needs --rank R (the rank of "
                        "the shared block bases)");
    const auto [rb, cb] = block_grid(o, rows, cols);
    BlastFactorizeOptions bo;
    bo.steps = o.steps;
    bo.learning_rate = o.learning_rate;
    bo.seed = o.seed;
    bo.device = device;
    Progress progress("BLAST gradient steps", o.steps);
    bo.progress = [&](const BlastProgress& p) {
      progress.update(p.step + 1, "rel. error " + format_error(p.relative_error));
      return true;
    };
    auto fit = factorize_blast(a, rb, cb, o.rank, bo);
    progress.finish();
    return {fit.blast, fit.report,
            format("%lld x %lld blocks, rank %lld, %lld steps", static_cast<long long>(rb),
                   static_cast<long long>(cb), static_cast<long long>(o.rank),
                   static_cast<long long>(o.steps))};
  }
  if (o.structure == "lowrank") {
    LowRankOptions lo;
    lo.rank = o.rank;
    lo.tolerance = o.tolerance;
    lo.seed = o.seed;
    lo.device = device;
    lo.method = o.method == "exact"        ? LowRankMethod::exact
                : o.method == "randomized" ? LowRankMethod::randomized
                                           : LowRankMethod::automatic;
    require<ShapeError>(o.rank > 0 || o.tolerance > 0,
                        "factorize: --structure lowrank needs --rank R or --tolerance T");
    auto fit = factorize_lowrank(a, lo);
    return {fit.lowrank, fit.report, "rank " + std::to_string(fit.lowrank.rank())};
  }
  if (o.structure == "stl") return factorize_stl(a, o);
  // kron
  Index m1 = divisor_near_sqrt(rows), n1 = divisor_near_sqrt(cols);
  if (!o.left_shape.empty()) {
    long long pm = 0, pn = 0;
    char x = 0, extra = 0;
    require<ShapeError>(
        std::sscanf(o.left_shape.c_str(), "%lld%c%lld%c", &pm, &x, &pn, &extra) == 3 &&
            (x == 'x' || x == 'X') && pm > 0 && pn > 0,
        "factorize: --left-shape must look like 8x16, got '", o.left_shape, "'");
    m1 = pm;
    n1 = pn;
  }
  auto fit = factorize_kron(a, m1, n1, {.terms = o.terms, .compute_error = true, .device = device});
  return {
      fit.sum, fit.report,
      format("%lld term(s) of (%lld x %lld) kron (%lld x %lld)", static_cast<long long>(o.terms),
             static_cast<long long>(m1), static_cast<long long>(n1),
             static_cast<long long>(rows / m1), static_cast<long long>(cols / n1))};
}

void print_report(const FactorReport& r, const std::string& structure, Index rows, Index cols) {
  const double dense = double(rows) * double(cols);
  auto line = [](const char* key, const std::string& value) {
    std::printf("  %-12s %s\n", key, value.c_str());
  };
  line("structure", structure);
  line("method", r.method);
  std::string error = format_error(r.relative_error) + "  (||A - F||_F / ||A||_F)";
  // The bound holds in exact arithmetic: a bound of 0 (an exact structure) says so rather
  // than "<= 0" beside an error at the rounding level.
  if (r.bound == 0)
    error += ", exact up to rounding";
  else if (!std::isnan(r.bound))
    error += ", guaranteed <= " + format_error(r.bound);
  if (!std::isnan(r.lower_bound)) error += ", best possible >= " + format_error(r.lower_bound);
  line("rel. error", error);
  line("parameters",
       format_count(double(r.parameters)) + " of " + format_count(dense) + " dense (" +
           format_ratio(dense / double(std::max<Index>(r.parameters, 1))) + " compression)");
  line("seconds", format("%.3f", r.seconds));
}

// Options that only some structures take: using one with another structure is an error.
struct StructureOption {
  CLI::Option* option;
  std::set<std::string> structures;
};

int run_factorize(const FactorizeOptions& o, const std::vector<StructureOption>& specific) {
  for (const StructureOption& s : specific)
    if (s.option->count() > 0 && !s.structures.count(o.structure)) {
      std::string allowed;
      for (const auto& name : s.structures)
        allowed += (allowed.empty() ? "" : ", ") + name;
      throw CLI::ValidationError(
          s.option->get_name(),
          "does not apply to --structure " + o.structure + " (only to " + allowed + ")");
    }
  const MatrixLocation input = parse_matrix_location(o.input);
  OperatorLocation output = parse_operator_location(o.output);
  if (!o.name.empty() && !output.name.empty() && o.name != output.name)
    throw CLI::ValidationError("--name", "'" + o.name + "' contradicts the name '" + output.name +
                                             "' in -o " + o.output + " (give the name once)");
  const std::string name = !o.name.empty()        ? o.name
                           : !output.name.empty() ? output.name
                                                  : o.structure;
  // What the save would refuse, refused before the (possibly long) factorization.
  io::require_valid_operator_name(name);
  require_operator_output(output.file);
  const Device device = use_gpu(o.device, "factorize") ? Device::cuda : Device::cpu;
  const std::string stored = stored_scalar_type(input);
  const std::string dtype = o.dtype.empty() ? stored : o.dtype;

  return with_scalar_type(dtype, [&]<class T>() {
    const HostMatrix<T> a = read_matrix<T>(input, o.dtype.empty() ? Cast::lossless : Cast::any);
    // An empty matrix has nothing to factorize; refused here, before the structures size
    // their blocks from its (possibly huge) other dimension.
    require<ShapeError>(a.size() > 0, "factorize: '", input.text(), "' is empty (",
                        format_shape(a.rows(), a.cols()), "): there is nothing to factorize");
    std::printf("strop factorize: %s (%s, %s) as %s -> %s:%s\n", input.text().c_str(),
                format_shape(a.rows(), a.cols()).c_str(), dtype.c_str(), o.structure.c_str(),
                output.file.c_str(), name.c_str());
    const Fit<T> fit = factorize_with(a, o, device);
    print_report(fit.report, fit.structure, a.rows(), a.cols());
    io::save(output.file, fit.op, name,
             io::Provenance{fit.report.method,
                            std::isnan(fit.report.relative_error) ? -1 : fit.report.relative_error,
                            a.rows(), a.cols(), input.text()});
    std::printf("  saved        %s:%s\n", output.file.c_str(), name.c_str());
    return 0;
  });
}

}  // namespace

Subcommand add_factorize_command(CLI::App& parent) {
  auto o = std::make_shared<FactorizeOptions>();
  CLI::App* app = parent.add_subcommand(
      "factorize",
      "Approximate a dense matrix by a structured operator and save it to HDF5.\n"
      "IN is 'file.npy' or 'file.h5:/dataset' (rows x cols as numpy shows it).");
  app->add_option("IN", o->input, "The dense matrix: file.npy or file.h5:/dataset")->required();
  app->add_option("-s,--structure", o->structure,
                  "butterfly, monarch, blast, lowrank, kron or stl (Strassen-Tile)")
      ->required()
      ->check(CLI::IsMember({"butterfly", "monarch", "blast", "lowrank", "kron", "stl"}));
  app->add_option("-o,--output", o->output,
                  "HDF5 file to write (operators already in it are kept); 'file.h5:NAME' also "
                  "sets the name")
      ->required();
  app->add_option("--name", o->name, "Name of the operator in the file (default: the structure)");
  app->add_option("--dtype", o->dtype,
                  "Scalar type to factorize in: float32, float64, complex64, complex128 "
                  "(default: the stored type; a narrower type rounds the input)")
      ->check(CLI::IsMember({"float32", "float64", "complex64", "complex128"}));
  add_device_option(*app, o->device, false);

  std::vector<StructureOption> specific;
  auto only = [&](CLI::Option* option, std::set<std::string> structures) {
    specific.push_back({option, std::move(structures)});
  };
  only(app->add_flag("--bit-reversal,--dft-permutation", o->bit_reversal,
                     "butterfly: factorize with the columns in bit-reversed order, as the DFT "
                     "needs (the saved operator includes the permutation)"),
       {"butterfly"});
  only(app->add_option("--budget", o->budget,
                       "butterfly: use the most expressive KS chain with at most this many "
                       "parameters (any shape) instead of the square-dyadic butterfly")
           ->check(CLI::PositiveNumber),
       {"butterfly"});
  only(app->add_option("--order", o->order, "butterfly: balanced or left-to-right")
           ->check(CLI::IsMember({"balanced", "left-to-right"}))
           ->capture_default_str(),
       {"butterfly"});
  only(app->add_option("--blocks", o->blocks,
                       "monarch, blast: blocks per side (default: a divisor near sqrt(n))")
           ->check(CLI::PositiveNumber),
       {"monarch", "blast"});
  only(app->add_option("--row-blocks", o->row_blocks, "monarch, blast: blocks along the rows")
           ->check(CLI::PositiveNumber),
       {"monarch", "blast"});
  only(app->add_option("--col-blocks", o->col_blocks, "monarch, blast: blocks along the columns")
           ->check(CLI::PositiveNumber),
       {"monarch", "blast"});
  CLI::Option* rank_option =
      app->add_option("-r,--rank", o->rank,
                      "monarch: rank per block (default 1); blast: rank of the shared bases "
                      "(required); lowrank: the rank; stl: colours per 4 x 4 tile, 1..49 "
                      "(default 32; 49 is exact)")
          ->check(CLI::PositiveNumber);
  only(rank_option, {"monarch", "blast", "lowrank", "stl"});
  only(app->add_option("--steps", o->steps, "blast: gradient steps")
           ->check(CLI::PositiveNumber)
           ->capture_default_str(),
       {"blast"});
  only(app->add_option("--learning-rate", o->learning_rate, "blast: initial learning rate")
           ->check(CLI::PositiveNumber)
           ->capture_default_str(),
       {"blast"});
  only(app->add_option("--seed", o->seed, "blast, lowrank (randomized), stl: random seed")
           ->capture_default_str(),
       {"blast", "lowrank", "stl"});
  only(app->add_flag("--fit-encoders", o->fit_encoders,
                     "stl: fit the encoders on the single-tile problem (Adam) instead of "
                     "taking a random subset of the exact rank-49 ones"),
       {"stl"});
  only(app->add_option("--tolerance", o->tolerance,
                       "lowrank: smallest rank with ||A - LR|| <= tolerance ||A|| (instead of "
                       "--rank)")
           // Range lets NaN through (every comparison with it is false).
           ->check(CLI::Validator(
               [](std::string& text) {
                 const double t = std::strtod(text.c_str(), nullptr);
                 return t > 0 && t < 1 ? std::string() : "must be in (0, 1), got " + text;
               },
               "in (0, 1)"))
           // With both, one would be ignored silently.
           ->excludes(rank_option),
       {"lowrank"});
  only(app->add_option("--method", o->method, "lowrank: auto, exact or randomized")
           ->check(CLI::IsMember({"auto", "exact", "randomized"}))
           ->capture_default_str(),
       {"lowrank"});
  only(app->add_option("--left-shape", o->left_shape,
                       "kron: shape m1xn1 of the left factor B in A ~ B kron C (default: "
                       "divisors near sqrt of each side)"),
       {"kron"});
  only(app->add_option("--terms", o->terms, "kron: number of Kronecker terms summed")
           ->check(CLI::PositiveNumber)
           ->capture_default_str(),
       {"kron"});
  app->footer(
      "Examples:\n"
      "  strop factorize dft.npy -s butterfly --bit-reversal -o ops.h5 --name fft\n"
      "  strop factorize weights.h5:/layer1 -s monarch --blocks 16 --rank 2 -o ops.h5\n"
      "  strop factorize A.npy -s lowrank --tolerance 1e-3 -o ops.h5\n"
      "  strop factorize W.npy -s stl --rank 32 --fit-encoders -o ops.h5");
  return {app, [o, specific] { return run_factorize(*o, specific); }};
}

}  // namespace strop::cli
