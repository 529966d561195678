#pragma once
// Fitting Strassen-Tile (STL) operators (Ailon, Bercovich, Weinstein; formulas in
// ../shared/papers/NOTES.md, "Strassen-Tile"), in the paper's convention: t x t tiles x
// (signals) and w (weights), vec = column-major, and the bilinear map
//     vec(x w) ≈ D^T ( E_X vec(x) ⊙ E_W vec(w) ).
//
// Two problems:
//  * encoded weights Ŵ for a dense A (W = A^T) with E_X and D fixed: a linear least-squares
//    problem, closed form for isotropic signals (one r x t^2 "solution matrix" F, the
//    paper's Lemma A.1) or solved on a given sample of signals;
//  * the encoders E_X, E_W, D themselves on the paper's single-tile problem ("Class 0"):
//    Gaussian x, a fixed population of Gaussian weight tiles w, gradient descent from a
//    random subset of the exact rank-49 encoders. Its baseline is magnitude 2:4 pruning
//    with a least-squares refit of the kept weights.
//
// Error measures. Everything here reports
//     relative_error = mean_w E_x ||x w - approx||_F^2 / mean_w E_x ||x w||_F^2,
// a ratio of expected SQUARED norms (its square root is the relative Frobenius error of
// the products). The paper's α (appendix B.1) is instead the absolute mean squared error
// per product entry, α = (1/t^2) mean_w E_x ||x w - approx||_F^2; for unit-variance
// Gaussian weights E_x ||x w||_F^2 = t^3, so α ≈ t · relative_error (4x for t = 4), and the
// paper's α_{2:4} ≈ 0.53 is relative_error ≈ 0.133. Both are reported.
#include <Eigen/Core>
#include <cstdint>
#include <optional>
#include <vector>

#include "strop/core/device_matrix.hpp"
#include "strop/operators/stl_encoders.hpp"
#include "strop/operators/strassen_tile.hpp"

namespace strop::stl {

// ---- encoded weights for a dense matrix ----------------------------------------------

// The paper's solution matrix F (r x t^2): for fixed E_X and D and signals x with iid
// zero-mean unit-variance entries, ŵ = F vec(w) minimises E_x ||vec(x w) - D^T(E_X vec x ⊙ ŵ)||^2
// for every weight tile w. F = G^+ H with G = (D D^T) ⊙ (E_X E_X^T) and
// H[p, a + t b] = sum_i E_X[p, i + t a] D[p, i + t b]. The pseudo-inverse (complete
// orthogonal decomposition) gives the minimum-norm optimum when G is singular (e.g. two
// identical colours). E_W is not used.
Eigen::MatrixXd solution_matrix(const Encoders& enc);

// The STL operator closest to A (M x N) for isotropic signals: Ŵ_{L,J} = F vec(W_{L,J}),
// W = A^T. Optimal for signals with iid zero-mean unit-variance entries, whatever their
// distribution (the loss of different input tiles L decouples in expectation). With exact
// encoders the result reproduces A (to_dense() == A up to rounding).
// ShapeError for an empty A or unless t divides M and N; NumericalError on NaN/Inf in A or
// the encoders.
template <class T>
StrassenTile<T> fit_encoded_weights(const HostMatrix<T>& A, const Encoders& enc);

// The STL operator minimising ||A X - STL(X)||_F over a sample X of signals (N x S, one
// signal per column; a last partial tile of signals counts as padded with zero signals),
// E_X and D fixed. The normal equations couple every input tile L of one output tile J:
// one Hermitian (N/t r) x (N/t r) matrix, the same for every J, factored once (Cholesky in
// double precision with a ridge of 1e-10 times its mean diagonal, the ridge's bias then
// removed by three steps of iterated Tikhonov, so that a sample with fewer than N/t r
// independent directions still gives a finite, near minimum-norm answer; a 1000x larger
// ridge if rounding defeats the factorisation). ShapeError for an empty A or unless t divides
// M and N, X has N rows and S >= 1 columns, and N/t r <= 8192 (a larger normal matrix is too
// big to factor densely: at r = 32, N <= 1024; larger layers take the isotropic fit above);
// NumericalError on NaN/Inf or if the factorisation still fails.
template <class T>
StrassenTile<T> fit_encoded_weights(const HostMatrix<T>& A, const Encoders& enc,
                                    const HostMatrix<T>& sample);

// ---- the single-tile problem ---------------------------------------------------------

// `count` t x t tiles with iid N(0, 1) entries from std::mt19937_64(seed): the weight
// population of fit_tile_encoders (same seed, same tiles) and of the 2:4 baseline.
std::vector<Eigen::MatrixXd> gaussian_tiles(Index tile, Index count, std::uint64_t seed);

// The single-tile loss over a fixed population {w}, for x with iid N(0, 1) entries:
//     loss = mean_w E_x ||vec(x w) - D^T(E_X vec x ⊙ E_W vec w)||^2
//          = mean_w ||(w^T ⊗ I_t) - D^T diag(E_W vec w) E_X||_F^2       (vec(x w) = (w^T ⊗ I) vec
//          x) = t tr(S) - 2 tr(E_W S H^T) + tr(G E_W S E_W^T),
// with S = mean_w vec(w) vec(w)^T and G, H as in solution_matrix(). The loss depends on the
// population only through S, so value and gradient cost O(r t^4 + r^2 t^2), not O(|w|).
class TileObjective {
 public:
  // ShapeError for an empty population or tiles that are not all t x t; NumericalError on
  // NaN/Inf.
  explicit TileObjective(const std::vector<Eigen::MatrixXd>& population);

  Index tile() const { return tile_; }
  // mean_w E_x ||vec(x w)||^2 = t tr(S): the loss of the zero approximation.
  double reference() const { return reference_; }
  // The loss above. ShapeError unless the encoders have this tile size.
  double loss(const Encoders& enc) const;
  // loss(enc) / reference().
  double relative_error(const Encoders& enc) const { return loss(enc) / reference_; }
  // The loss, and its gradient with respect to E_X, E_W and D in the corresponding fields
  // of `gradient` (resized as needed; its tile is set to t).
  double loss_and_gradient(const Encoders& enc, Encoders& gradient) const;

 private:
  Index tile_ = 0;
  Eigen::MatrixXd second_moment_;  // S, t^2 x t^2
  double reference_ = 0;
};

struct TileFitOptions {
  Index rank = 32;                // r, the number of colours
  Index tile = 4;                 // t
  Index weight_population = 256;  // tiles w, drawn as gaussian_tiles(tile, count, seed)
  Index iterations = 3000;        // Adam steps (per restart)
  // Adam's initial step; it decays along a cosine to 1% of this value (a constant step
  // leaves the encoders rattling around the minimum at the step's scale).
  double learning_rate = 1e-2;
  std::uint64_t seed = 0;
  // Independent starts from different random rank-49 subsets (std::mt19937(seed + 1 + k)),
  // the best one kept: the problem is non-convex and the subset matters (paper, B.2).
  Index restarts = 1;
  // The starting point (then restarts is ignored). Without it, t = 4 and r <= 49 start
  // from rank49_subset(r, rng); other tile sizes and ranks need one.
  std::optional<Encoders> initial;
};

struct TileFitResult {
  Encoders encoders;
  // relative_error (header comment) of the fitted and of the starting encoders; with
  // restarts, the start of the restart that won.
  double relative_error = 0;
  double initial_relative_error = 0;
  // The paper's α = loss / t^2 for the same two encoders.
  double alpha = 0;
  double initial_alpha = 0;
  // relative_error at every Adam step of the winning restart (where the step's gradient
  // was taken; before the final closed-form E_W polish: see fit_tile_encoders). Shorter
  // than `iterations` when the loss reached rounding level (1e-12 of the reference).
  std::vector<double> history;
};

// Minimises TileObjective(gaussian_tiles(t, weight_population, seed)) over E_X, E_W, D with
// Adam and analytic gradients, keeps the best iterate (Adam's are not monotone), then
// replaces E_W by solution_matrix(E_X, D) when that lowers the loss (the optimal E_W for
// fixed E_X and D: the paper's Lemma A.1). Exact starting encoders stay exact.
// ShapeError for r < 1, t < 1, a population < 1, iterations < 0, restarts < 1, a
// learning rate <= 0, a missing `initial` where the default start does not exist, or an
// `initial` of the wrong shape; NumericalError on NaN/Inf in `initial` or a loss of `initial`
// that overflows, and when the descent diverges: a loss, gradient or Adam iterate that is
// no longer finite (a learning rate far too large) ends the fit with "the loss diverged",
// naming the restart and the learning rate.
TileFitResult fit_tile_encoders(const TileFitOptions& options);

// ---- 2:4 baseline ----------------------------------------------------------------------

struct Prune24Result {
  // relative_error of the pruned and refitted weights, evaluated exactly in expectation
  // over Gaussian x (comparable with TileFitResult::relative_error on the same tiles).
  double relative_error = 0;
  // The paper's α: mean squared error per entry of x w, mean_w E_x ||x w - x w̃||_F^2 / (n m)
  // for x with n rows, = mean_w ||w - w̃||_F^2 / m (m = the tiles' columns).
  double alpha = 0;
  // The same ratio measured on the fitting sample itself (optimistic: the refit saw it).
  double sample_relative_error = 0;
  // The exact optimum for isotropic x given the mask: keep the 2 largest |w| per group,
  // unchanged (the refit converges to this as the sample grows).
  double optimum_relative_error = 0;
};

// Magnitude 2:4 pruning of each k x m weight tile w (y = x w, k input features): in each
// column (one output) and each group of 4 consecutive rows (input features 4g..4g+3, the
// memory-consecutive groups of NVIDIA's sparse tensor cores for y = x W with W stored
// column-major), keep the two entries of largest |w| (ties: the lower row), zero the
// others; then refit the kept values of each column by least squares on `samples` fixed
// Gaussian signals x (rows of an samples x k matrix from std::mt19937_64(seed)).
// ShapeError for an empty population, tiles of different shapes, k not a multiple of 4,
// or samples < k (the refit would be underdetermined); NumericalError on NaN/Inf.
Prune24Result prune_2_4(const std::vector<Eigen::MatrixXd>& population, Index samples,
                        std::uint64_t seed);
// prune_2_4(...).relative_error.
double prune_2_4_relative_error(const std::vector<Eigen::MatrixXd>& population, Index samples,
                                std::uint64_t seed);

}  // namespace strop::stl
