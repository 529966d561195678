#include "strop/operators/stl_encoders.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "strop/core/error.hpp"

namespace strop::stl {

void validate(const Encoders& enc) {
  const Index t = enc.tile;
  Index t2 = 0;  // t^2 wraps for absurd t, which would make any r x t^2 check meaningless
  require<ShapeError>(t >= 1 && !__builtin_mul_overflow(t, t, &t2),
                      "stl: tile size must be >= 1 with t^2 representable, got ", t);
  const Index r = enc.encode_signal.rows();
  require<ShapeError>(r >= 1, "stl: rank (number of colours) must be >= 1, got ", r);
  const auto check = [&](const Eigen::MatrixXd& m, const char* name) {
    require<ShapeError>(m.rows() == r && m.cols() == t2, "stl: ", name, " is ", m.rows(), "x",
                        m.cols(), ", expected r x t^2 = ", r, "x", t2);
    require<NumericalError>(m.allFinite(), "stl: ", name, " has NaN or Inf entries");
  };
  check(enc.encode_signal, "encode_signal (E_X)");
  check(enc.encode_weight, "encode_weight (E_W)");
  check(enc.decode, "decode (D)");
}

Encoders strassen_2x2() {
  // Rows are colours, columns the tile entries in column-major order (11, 21, 12, 22).
  Encoders enc;
  enc.tile = 2;
  enc.encode_signal.resize(7, 4);
  enc.encode_signal << 1, 0, 0, 1,  //
      0, 1, 0, 1,                   //
      1, 0, 0, 0,                   //
      0, 0, 0, 1,                   //
      1, 0, 1, 0,                   //
      -1, 1, 0, 0,                  //
      0, 0, 1, -1;
  enc.encode_weight.resize(7, 4);
  enc.encode_weight << 1, 0, 0, 1,  //
      1, 0, 0, 0,                   //
      0, 0, 1, -1,                  //
      -1, 1, 0, 0,                  //
      0, 0, 0, 1,                   //
      1, 0, 1, 0,                   //
      0, 1, 0, 1;
  Eigen::MatrixXd decode_t(4, 7);    // D^T as printed in NOTES.md (row 3 corrected there)
  decode_t << 1, 0, 0, 1, -1, 0, 1,  //
      0, 1, 0, 1, 0, 0, 0,           //
      0, 0, 1, 0, 1, 0, 0,           //
      1, -1, 1, 0, 0, 1, 0;
  enc.decode = decode_t.transpose();
  return enc;
}

Encoders strassen_4x4() {
  // T(4) = T(2) ⊗ T(2): a 4 x 4 tile is a 2 x 2 tile of 2 x 2 blocks. With i = 2 i_hi + i_lo
  // and j = 2 j_hi + j_lo, colour 7a + b applies colour a to the blocks and b inside them.
  const Encoders s = strassen_2x2();
  Encoders enc;
  enc.tile = 4;
  enc.encode_signal.setZero(49, 16);
  enc.encode_weight.setZero(49, 16);
  enc.decode.setZero(49, 16);
  for (Index a = 0; a < 7; ++a) {
    for (Index b = 0; b < 7; ++b) {
      for (Index i = 0; i < 4; ++i) {
        for (Index j = 0; j < 4; ++j) {
          const Index hi = i / 2 + 2 * (j / 2);
          const Index lo = i % 2 + 2 * (j % 2);
          const Index entry = i + 4 * j;
          enc.encode_signal(7 * a + b, entry) = s.encode_signal(a, hi) * s.encode_signal(b, lo);
          enc.encode_weight(7 * a + b, entry) = s.encode_weight(a, hi) * s.encode_weight(b, lo);
          enc.decode(7 * a + b, entry) = s.decode(a, hi) * s.decode(b, lo);
        }
      }
    }
  }
  return enc;
}

Encoders rank49_subset(Index rank, std::mt19937& rng) {
  require<ShapeError>(rank >= 1 && rank <= 49, "stl: a subset of the rank-49 encoders needs",
                      " 1 <= r <= 49, got ", rank);
  const Encoders full = strassen_4x4();
  std::vector<Index> colours(49);
  std::iota(colours.begin(), colours.end(), Index(0));
  std::shuffle(colours.begin(), colours.end(), rng);
  colours.resize(static_cast<std::size_t>(rank));
  std::sort(colours.begin(), colours.end());
  Encoders enc;
  enc.tile = 4;
  enc.encode_signal.resize(rank, 16);
  enc.encode_weight.resize(rank, 16);
  enc.decode.resize(rank, 16);
  for (Index p = 0; p < rank; ++p) {
    enc.encode_signal.row(p) = full.encode_signal.row(colours[p]);
    enc.encode_weight.row(p) = full.encode_weight.row(colours[p]);
    enc.decode.row(p) = full.decode.row(colours[p]);
  }
  return enc;
}

double product_error(const Encoders& enc) {
  validate(enc);
  const Index t = enc.tile;
  double worst = 0;
  // x = unit tile at (i1, j1), w = unit tile at (i2, j2): x w is the unit tile at (i1, j2)
  // when j1 == i2 and zero otherwise.
  for (Index x_entry = 0; x_entry < t * t; ++x_entry) {
    for (Index w_entry = 0; w_entry < t * t; ++w_entry) {
      const Eigen::VectorXd colours =
          enc.encode_signal.col(x_entry).cwiseProduct(enc.encode_weight.col(w_entry));
      Eigen::VectorXd expected = Eigen::VectorXd::Zero(t * t);
      const Index i1 = x_entry % t, j1 = x_entry / t, i2 = w_entry % t, j2 = w_entry / t;
      if (j1 == i2) expected(i1 + t * j2) = 1;
      const Eigen::VectorXd got = enc.decode.transpose() * colours;
      worst = std::max(worst, (got - expected).cwiseAbs().maxCoeff());
    }
  }
  return worst;
}

bool is_exact(const Encoders& enc, double tolerance) {
  return product_error(enc) <= tolerance;
}

}  // namespace strop::stl
