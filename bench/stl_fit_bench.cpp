// The paper's "Class 0" experiment (Strassen-Tile, appendix B.1, Fig. 5) on the CPU: learn
// E_X, E_W, D for 4 x 4 tiles at ranks r = 16, 20, ..., 48, 49 and compare the single-tile
// error with magnitude 2:4 pruning plus a least-squares refit on the same weight tiles.
// Gaussian signals, a fixed population of Gaussian weight tiles; errors are exact
// expectations over the signals (strop/factorize/stl.hpp), as
//     relative error = mean_w E_x ||x w - approx||^2 / mean_w E_x ||x w||^2
// and the paper's alpha = mean_w E_x ||x w - approx||^2 / 16 (about 4x the relative error).
// Columns: r,initial_rel_error,quick_rel_error,fitted_rel_error,fitted_alpha,
//          prune24_rel_error,prune24_alpha,iterations,restarts,seconds
// (initial: the random rank-49 subset the winning restart started from; quick: one start
// with TileFitOptions' defaults, 3000 Adam steps; fitted: --restarts starts of --iterations
// steps each, the best kept; seconds: the fitted column's time.)
//   stl_fit_bench [--csv PATH] [--iterations N] [--restarts K] [--seed S] [--population P]
//                 [--samples X] [--learning-rate LR]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "strop/factorize/stl.hpp"

using namespace strop;

namespace {

struct Args {
  std::string csv;
  Index iterations = 20000;
  Index restarts = 8;
  std::uint64_t seed = 0;
  Index population = 256;
  Index samples = 4096;  // Gaussian signals for the 2:4 refit
  double learning_rate = 1e-2;
};

[[noreturn]] void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--csv PATH] [--iterations N] [--restarts K] [--seed S] "
               "[--population P] [--samples X] [--learning-rate LR]\n",
               program);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--csv")) {
      args.csv = value();
    } else if (!std::strcmp(argv[i], "--iterations")) {
      args.iterations = std::atoll(value());
    } else if (!std::strcmp(argv[i], "--restarts")) {
      args.restarts = std::atoll(value());
    } else if (!std::strcmp(argv[i], "--seed")) {
      args.seed = std::strtoull(value(), nullptr, 10);
    } else if (!std::strcmp(argv[i], "--population")) {
      args.population = std::atoll(value());
    } else if (!std::strcmp(argv[i], "--samples")) {
      args.samples = std::atoll(value());
    } else if (!std::strcmp(argv[i], "--learning-rate")) {
      args.learning_rate = std::atof(value());
    } else {
      usage(argv[0]);
    }
  }
  return args;
}

struct Row {
  Index rank;
  double initial, quick, fitted, alpha;
  double seconds;
};

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  // fit_tile_encoders draws its population as gaussian_tiles(4, population, seed): the
  // baseline prunes exactly those tiles.
  const auto population = stl::gaussian_tiles(4, args.population, args.seed);
  const stl::Prune24Result prune = stl::prune_2_4(population, args.samples, args.seed + 1000);
  std::printf("2:4 baseline on %lld tiles: relative error %.4f (alpha %.4f; exact optimum %.4f)\n",
              static_cast<long long>(args.population), prune.relative_error, prune.alpha,
              prune.optimum_relative_error);

  std::vector<Row> rows;
  std::vector<Index> ranks;
  for (Index r = 16; r <= 48; r += 4)
    ranks.push_back(r);
  ranks.push_back(49);
  std::printf("%4s %10s %10s %10s %10s %8s\n", "r", "initial", "quick", "fitted", "alpha",
              "seconds");
  for (Index r : ranks) {
    stl::TileFitOptions quick;
    quick.rank = r;
    quick.weight_population = args.population;
    quick.seed = args.seed;
    const double quick_error = stl::fit_tile_encoders(quick).relative_error;

    stl::TileFitOptions options = quick;
    options.iterations = args.iterations;
    options.restarts = args.restarts;
    options.learning_rate = args.learning_rate;
    const auto start = std::chrono::steady_clock::now();
    const stl::TileFitResult fit = stl::fit_tile_encoders(options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rows.push_back(
        {r, fit.initial_relative_error, quick_error, fit.relative_error, fit.alpha, seconds});
    std::printf("%4lld %10.4f %10.4f %10.4f %10.4f %8.2f\n", static_cast<long long>(r),
                fit.initial_relative_error, quick_error, fit.relative_error, fit.alpha, seconds);
  }

  // Where STL matches 2:4: the first listed rank at or below the baseline, and the rank
  // interpolated linearly between it and the rank before.
  for (const bool quick : {true, false}) {
    const char* column = quick ? "quick" : "fitted";
    const auto error = [&](const Row& row) { return quick ? row.quick : row.fitted; };
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (error(rows[k]) > prune.relative_error) continue;
      double crossing = double(rows[k].rank);
      if (k > 0) {
        const double e0 = error(rows[k - 1]), e1 = error(rows[k]);
        crossing = double(rows[k - 1].rank) + (e0 - prune.relative_error) / (e0 - e1) *
                                                  double(rows[k].rank - rows[k - 1].rank);
      }
      std::printf("STL (%s) matches 2:4 at r = %lld (interpolated r = %.1f)\n", column,
                  static_cast<long long>(rows[k].rank), crossing);
      break;
    }
  }

  if (!args.csv.empty()) {
    std::ofstream out(args.csv);
    out << "r,initial_rel_error,quick_rel_error,fitted_rel_error,fitted_alpha,prune24_rel_error,"
           "prune24_alpha,iterations,restarts,seconds\n";
    for (const Row& row : rows) {
      char line[256];
      std::snprintf(line, sizeof line, "%lld,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%lld,%lld,%.3f\n",
                    static_cast<long long>(row.rank), row.initial, row.quick, row.fitted, row.alpha,
                    prune.relative_error, prune.alpha, static_cast<long long>(args.iterations),
                    static_cast<long long>(args.restarts), row.seconds);
      out << line;
    }
    if (!out) {
      std::fprintf(stderr, "stl_fit_bench: could not write %s\n", args.csv.c_str());
      return 1;
    }
    std::printf("wrote %s\n", args.csv.c_str());
  }
  return 0;
}
