// The paper's single-tile loss ("Class 0") in closed form over Gaussian signals, and its
// gradient. With Z = D^T diag(E_W vec w) E_X and vec(x w) = (w^T ⊗ I_t) vec x,
//     E_x ||(w^T ⊗ I - Z) vec x||^2 = ||w^T ⊗ I - Z||_F^2,
// and expanding the square with the moments of moments.hpp,
//     ||w^T ⊗ I||^2 = t ||w||^2,  <w^T ⊗ I, Z> = (E_W vec w)^T H vec w,  ||Z||^2 = c^T G c,
// c = E_W vec w. Averaged over the population only S = mean vec(w) vec(w)^T remains:
//     loss = t tr(S) - 2 <B, H> + <G, C>,   B = E_W S,  C = E_W S E_W^T.
#include <random>

#include "factorize/stl/moments.hpp"
#include "strop/core/error.hpp"
#include "strop/factorize/stl.hpp"

namespace strop::stl {

std::vector<Eigen::MatrixXd> gaussian_tiles(Index tile, Index count, std::uint64_t seed) {
  require<ShapeError>(tile >= 1 && count >= 0,
                      "gaussian_tiles: need tile >= 1 and count >= 0, got ", tile, " and ", count);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<Eigen::MatrixXd> tiles(static_cast<std::size_t>(count));
  for (auto& w : tiles) {
    w.resize(tile, tile);
    for (Index k = 0; k < w.size(); ++k)
      w.data()[k] = normal(rng);
  }
  return tiles;
}

TileObjective::TileObjective(const std::vector<Eigen::MatrixXd>& population) {
  require<ShapeError>(!population.empty(), "TileObjective: the weight population is empty");
  tile_ = population.front().rows();
  require<ShapeError>(tile_ >= 1, "TileObjective: empty weight tiles");
  const Index n = tile_ * tile_;
  second_moment_ = Eigen::MatrixXd::Zero(n, n);
  for (std::size_t k = 0; k < population.size(); ++k) {
    const Eigen::MatrixXd& w = population[k];
    require<ShapeError>(w.rows() == tile_ && w.cols() == tile_, "TileObjective: tile ", k, " is ",
                        w.rows(), "x", w.cols(), ", expected ", tile_, "x", tile_);
    require<NumericalError>(w.allFinite(), "TileObjective: tile ", k, " has NaN or Inf entries");
    const Eigen::Map<const Eigen::VectorXd> v(w.data(), n);
    second_moment_.selfadjointView<Eigen::Lower>().rankUpdate(v);
  }
  second_moment_ = second_moment_.selfadjointView<Eigen::Lower>();
  second_moment_ /= double(population.size());
  reference_ = double(tile_) * second_moment_.trace();
  // Every loss is relative to this mean ||x w||^2; with all tiles zero it would be 0 / 0.
  require<NumericalError>(reference_ > 0, "TileObjective: every weight tile is zero; there is",
                          " nothing to fit and a relative error is undefined");
}

double TileObjective::loss(const Encoders& enc) const {
  Encoders unused;
  return loss_and_gradient(enc, unused);
}

double TileObjective::loss_and_gradient(const Encoders& enc, Encoders& gradient) const {
  validate(enc);
  require<ShapeError>(enc.tile == tile_, "TileObjective: encoders for t = ", enc.tile,
                      ", the population has t = ", tile_);
  const Index t = tile_, r = enc.rank();
  const Eigen::MatrixXd& ex = enc.encode_signal;
  const Eigen::MatrixXd& ew = enc.encode_weight;
  const Eigen::MatrixXd& d = enc.decode;
  const Eigen::MatrixXd signal_gram = ex * ex.transpose(), decode_gram = d * d.transpose();
  const Eigen::MatrixXd g = decode_gram.cwiseProduct(signal_gram);
  const Eigen::MatrixXd h = detail::colour_cross(enc);
  const Eigen::MatrixXd b = ew * second_moment_;
  const Eigen::MatrixXd c = b * ew.transpose();
  const double loss = reference_ - 2 * b.cwiseProduct(h).sum() + g.cwiseProduct(c).sum();

  // d<G, C>: through G = (D D^T) ⊙ (E_X E_X^T) (C symmetric) and through C (G symmetric).
  // d<B, H>, with H_p = ex_p^T d_p and B_p = row p of B as a t x t tile:
  //     d/d(d_p) = ex_p B_p,  d/d(ex_p) = d_p B_p^T,  d/d(E_W) = H S.
  gradient.tile = t;
  gradient.encode_weight = 2 * (g * ew - h) * second_moment_;
  gradient.decode = 2 * c.cwiseProduct(signal_gram) * d;
  gradient.encode_signal = 2 * c.cwiseProduct(decode_gram) * ex;
  for (Index p = 0; p < r; ++p) {
    const Eigen::MatrixXd bp = detail::row_tile(b, p, t);
    const Eigen::MatrixXd dd = detail::row_tile(ex, p, t) * bp;
    const Eigen::MatrixXd dex = detail::row_tile(d, p, t) * bp.transpose();
    gradient.decode.row(p) -= 2 * Eigen::Map<const Eigen::RowVectorXd>(dd.data(), t * t);
    gradient.encode_signal.row(p) -= 2 * Eigen::Map<const Eigen::RowVectorXd>(dex.data(), t * t);
  }
  return loss;
}

}  // namespace strop::stl
