// Learning E_X, E_W, D on the single-tile problem (the paper's "Class 0"): Adam on the
// closed-form loss of TileObjective, from random subsets of the exact rank-49 encoders
// (the paper's initialisation, appendix B.2), best of `restarts` starts.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "strop/core/error.hpp"
#include "strop/factorize/stl.hpp"

namespace strop::stl {
namespace {

// Adam (Kingma & Ba) on one parameter matrix, with the usual constants.
struct AdamState {
  Eigen::MatrixXd first, second;

  void step(Eigen::MatrixXd& parameter, const Eigen::MatrixXd& gradient, double rate,
            Index iteration) {
    constexpr double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
    if (first.size() == 0) {
      first = Eigen::MatrixXd::Zero(parameter.rows(), parameter.cols());
      second = first;
    }
    first = beta1 * first + (1 - beta1) * gradient;
    second = beta2 * second + (1 - beta2) * gradient.cwiseAbs2();
    const double k = double(iteration + 1);
    const double correction1 = 1 - std::pow(beta1, k), correction2 = 1 - std::pow(beta2, k);
    parameter.array() -=
        rate * (first.array() / correction1) / ((second.array() / correction2).sqrt() + epsilon);
  }
};

// Rounding can push the closed-form loss of exact encoders a few ulps below zero.
double clamp_error(double value) {
  return std::max(value, 0.0);
}

bool all_finite(const Encoders& enc) {
  return enc.encode_signal.allFinite() && enc.encode_weight.allFinite() && enc.decode.allFinite();
}

// NumericalError unless `finite`: Adam's steps overshot until the loss or the encoders
// overflowed (a learning rate far too large for the problem's scale).
void require_converging(bool finite, Index restart, Index steps, const TileFitOptions& options) {
  require<NumericalError>(finite, "fit_tile_encoders: the loss diverged (restart ", restart,
                          ", learning rate ", options.learning_rate, ": non-finite after ", steps,
                          " of ", options.iterations, " Adam steps); lower the learning rate");
}

struct Run {
  Encoders encoders;
  double initial_loss = 0, loss = 0;
  std::vector<double> history;
};

Run descend(const TileObjective& objective, Encoders enc, const TileFitOptions& options,
            Index restart) {
  // Below this the loss is rounding (it is a difference of O(reference) terms): exact
  // encoders have nothing left to learn, and Adam's normalised steps would only walk away.
  const double exact = 1e-12 * objective.reference();
  Run run;
  Encoders gradient;
  AdamState signal, weight, decode;
  run.history.reserve(static_cast<std::size_t>(options.iterations));
  run.initial_loss = objective.loss(enc);
  require<NumericalError>(std::isfinite(run.initial_loss),
                          "fit_tile_encoders: the loss of the starting encoders (restart ", restart,
                          ") overflows: ", run.initial_loss);
  // Adam's iterates do not decrease monotonically: the best one seen is kept.
  Encoders best = enc;
  double best_loss = run.initial_loss;
  Index it = 0;
  for (; it < options.iterations && best_loss > exact; ++it) {
    const double loss = objective.loss_and_gradient(enc, gradient);
    // Checked here, before the loss is compared or the encoders reach validate() (which
    // would report NaN encoders, not the divergence that produced them).
    require_converging(std::isfinite(loss) && all_finite(gradient), restart, it, options);
    run.history.push_back(clamp_error(loss / objective.reference()));
    if (loss < best_loss) {
      best = enc;
      best_loss = loss;
    }
    // Cosine decay to 1% of the initial step: large steps explore, small ones settle.
    const double progress = double(it) / double(std::max<Index>(options.iterations - 1, 1));
    const double rate =
        options.learning_rate * (0.01 + 0.99 * 0.5 * (1 + std::cos(std::numbers::pi * progress)));
    signal.step(enc.encode_signal, gradient.encode_signal, rate, it);
    weight.step(enc.encode_weight, gradient.encode_weight, rate, it);
    decode.step(enc.decode, gradient.decode, rate, it);
    require_converging(all_finite(enc), restart, it + 1, options);
  }
  const double last = objective.loss(enc);
  require_converging(std::isfinite(last), restart, it, options);
  if (last < best_loss) {
    best = std::move(enc);
    best_loss = last;
  }
  enc = std::move(best);
  run.loss = best_loss;
  // For fixed E_X and D the loss is a convex quadratic in E_W, minimised by the solution
  // matrix (exactly so when S is invertible): a free last step that Adam only approaches.
  Encoders polished = enc;
  polished.encode_weight = solution_matrix(enc);
  const double polished_loss = objective.loss(polished);
  if (polished_loss < run.loss) {
    enc = std::move(polished);
    run.loss = polished_loss;
  }
  run.encoders = std::move(enc);
  return run;
}

}  // namespace

TileFitResult fit_tile_encoders(const TileFitOptions& options) {
  constexpr const char* name = "fit_tile_encoders";
  require<ShapeError>(options.rank >= 1 && options.tile >= 1, name,
                      ": need rank >= 1 and tile >= 1, got rank ", options.rank, ", tile ",
                      options.tile);
  require<ShapeError>(options.weight_population >= 1, name,
                      ": the weight population must be >= 1, got ", options.weight_population);
  require<ShapeError>(options.iterations >= 0 && options.restarts >= 1, name,
                      ": need iterations >= 0 and restarts >= 1, got ", options.iterations, " and ",
                      options.restarts);
  require<ShapeError>(std::isfinite(options.learning_rate) && options.learning_rate > 0, name,
                      ": the learning rate must be positive, got ", options.learning_rate);
  if (options.initial) {
    validate(*options.initial);
    require<ShapeError>(
        options.initial->tile == options.tile && options.initial->rank() == options.rank, name,
        ": the initial encoders have t = ", options.initial->tile,
        ", r = ", options.initial->rank(), "; the options ask for t = ", options.tile,
        ", r = ", options.rank);
  } else {
    require<ShapeError>(options.tile == 4 && options.rank <= 49, name,
                        ": the default start (a random subset of the rank-49 4 x 4 encoders) "
                        "needs t = 4 and r <= 49, got t = ",
                        options.tile, ", r = ", options.rank, "; pass `initial`");
  }

  const TileObjective objective(
      gaussian_tiles(options.tile, options.weight_population, options.seed));
  const Index starts = options.initial ? 1 : options.restarts;
  Run best;
  for (Index k = 0; k < starts; ++k) {
    Encoders start;
    if (options.initial) {
      start = *options.initial;
    } else {
      std::mt19937 rng(static_cast<std::mt19937::result_type>(options.seed + 1 + std::uint64_t(k)));
      start = rank49_subset(options.rank, rng);
    }
    Run run = descend(objective, std::move(start), options, k);
    if (k == 0 || run.loss < best.loss) best = std::move(run);
  }

  const double t2 = double(options.tile * options.tile);
  TileFitResult result;
  result.relative_error = clamp_error(best.loss / objective.reference());
  result.initial_relative_error = clamp_error(best.initial_loss / objective.reference());
  result.alpha = clamp_error(best.loss / t2);
  result.initial_alpha = clamp_error(best.initial_loss / t2);
  result.history = std::move(best.history);
  result.encoders = std::move(best.encoders);
  return result;
}

}  // namespace strop::stl
