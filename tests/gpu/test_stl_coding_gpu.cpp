// The encode, decode and mixing kernels of the Strassen-Tile GPU path for 16-bit signals
// (t = 4): the tensor-core kernels (stl_coding_mma.cu) and the scalar kernels and cuBLAS
// mixing they replace, each against the exact sums (in double, from the same 16-bit inputs
// and fp32 coefficients) rounded once to 16 bits. Sums in fp32 differ from the exact ones by
// about 1e-7, so at least 99 % of the values must be equal to the reference and all within
// one unit in the last place. A coefficient rounded to 16 bits (instead of carried as the
// sum of 16-bit parts) would move a large share of the values by one unit.
#include <cmath>

#include "gpu_reference.hpp"
#include "operators/stl/stl_device.hpp"
#include "operators/stl/stl_kernels.hpp"

using namespace strop;
using namespace strop::testing;
using detail::StlCoding;
using detail::StlColourLayout;

namespace {

using ReducedTypes = boost::mpl::list<half, bfloat16>;

class CodingGuard {
 public:
  explicit CodingGuard(StlCoding coding) : previous_(detail::stl_coding()) {
    detail::set_stl_coding(coding);
  }
  ~CodingGuard() { detail::set_stl_coding(previous_); }

 private:
  StlCoding previous_;
};

template <class S>
HostMatrix<S> random_reduced(Index rows, Index cols) {
  return random_matrix<float>(rows, cols).cast<S>();
}

HostMatrix<float> random_coefficients(Index rank) {
  return random_matrix<float>(rank * 16, 1);
}

// got against the exact values rounded to S: the share of equal values, and whether all are
// within one unit in the last place.
template <class S>
void check_rounded_once(const HostMatrix<S>& got, const Eigen::MatrixXd& exact) {
  BOOST_REQUIRE(got.size() == exact.size());
  const double unit = 2 * unit_roundoff_v<S>;  // one ulp relative to [1, 2)
  Index equal = 0;
  bool within = true;
  for (Index i = 0; i < exact.size(); ++i) {
    const double want = double(float(S(float(exact.data()[i]))));
    const double have = double(float(got.data()[i]));
    equal += have == want;
    within = within && std::abs(have - want) <= unit * std::abs(exact.data()[i]) + 1e-7;
  }
  BOOST_TEST(within);
  BOOST_TEST(double(equal) >= 0.99 * double(exact.size()), equal << " of " << exact.size());
}

// The 16 values of tile pair e (entry i + 4 f, as the coefficients number them) of a batch of
// `features` x `batch` (zeros beyond the batch).
template <class S>
Eigen::VectorXd tile_values(const HostMatrix<S>& x, const StlColourLayout& layout, Index e) {
  const Index I = layout.signal_fast ? e % layout.signal_tiles : e / layout.feature_tiles;
  const Index F = layout.signal_fast ? e / layout.signal_tiles : e % layout.feature_tiles;
  Eigen::VectorXd v(16);
  for (Index f = 0; f < 4; ++f)
    for (Index i = 0; i < 4; ++i)
      v(i + 4 * f) = 4 * I + i < x.cols() ? double(float(x(4 * F + f, 4 * I + i))) : 0.0;
  return v;
}

// x on the device with its columns padded to a multiple of 4 by `fill` (so that a RowMajor
// batch of any size has rows of 4-aligned length and the word paths run); view() covers x.
template <class S>
struct Padded {
  DeviceMatrix<S> matrix;
  Index cols;
  Padded(const HostMatrix<S>& x, Layout layout, float fill) : cols(x.cols()) {
    HostMatrix<S> wide = HostMatrix<S>::Constant(x.rows(), (x.cols() + 3) / 4 * 4, S(fill));
    wide.leftCols(x.cols()) = x;
    matrix = to_device(wide, layout);
  }
  MatrixView<S> view() { return matrix.view().col_block(0, cols); }
  // Whether the padding still holds `fill`.
  bool padding_is(float fill) const {
    const HostMatrix<S> all = matrix.to_host();
    for (Index c = cols; c < all.cols(); ++c)
      for (Index r = 0; r < all.rows(); ++r)
        if (!(float(all(r, c)) == fill)) return false;
    return true;
  }
};

struct Shape {
  Index features, batch;
};
// Odd and even pair counts, partial signal tiles, one signal.
const Shape kShapes[] = {{36, 16}, {36, 13}, {36, 9}, {64, 1}, {128, 30}};
const Index kRanks[] = {5, 16, 17, 32, 49, 64};

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_stl_coding, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(encode_rounds_the_exact_sums_once, S, ReducedTypes) {
  Context& ctx = default_context();
  for (StlCoding coding : {StlCoding::TensorCores, StlCoding::Scalar}) {
    CodingGuard guard(coding);
    for (const Shape& shape : kShapes) {
      const HostMatrix<S> x = random_reduced<S>(shape.features, shape.batch);
      for (Index r : kRanks) {
        const HostMatrix<float> encoder = random_coefficients(r);
        const DeviceMatrix<float> encoder_d = to_device(encoder);
        for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
          for (bool signal_fast : {false, true}) {
            const StlColourLayout colours{(shape.batch + 3) / 4, shape.features / 4, signal_fast};
            BOOST_TEST_CONTEXT((coding == StlCoding::Scalar ? "scalar" : "tensor cores")
                               << " " << shape.features << " x " << shape.batch << " r=" << r
                               << " X " << to_string(layout) << " signal_fast " << signal_fast) {
              Padded<S> xd(x, layout, 9.0f);  // the padding must not be read as signals
              DeviceMatrix<S> out(r * colours.pairs(), 1);
              detail::stl_encode<S>(4, r, encoder_d.data(), xd.view(), out.data(), colours, ctx);
              Eigen::MatrixXd exact(r * colours.pairs(), 1);
              for (Index e = 0; e < colours.pairs(); ++e) {
                const Eigen::VectorXd v = tile_values(x, colours, e);
                for (Index p = 0; p < r; ++p)
                  exact(p * colours.pairs() + e) =
                      encoder.block(p * 16, 0, 16, 1).cast<double>().col(0).dot(v);
              }
              check_rounded_once(out.to_host(), exact);
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(decode_rounds_the_exact_sums_once, S, ReducedTypes) {
  Context& ctx = default_context();
  const float alpha = 0.75f;
  for (StlCoding coding : {StlCoding::TensorCores, StlCoding::Scalar}) {
    CodingGuard guard(coding);
    for (const Shape& shape : kShapes) {
      for (Index r : kRanks) {
        const HostMatrix<float> decoder = random_coefficients(r);
        const DeviceMatrix<float> decoder_d = to_device(decoder);
        for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
          for (bool signal_fast : {false, true}) {
            for (float beta : {0.0f, -0.5f}) {
              const StlColourLayout colours{(shape.batch + 3) / 4, shape.features / 4, signal_fast};
              BOOST_TEST_CONTEXT((coding == StlCoding::Scalar ? "scalar" : "tensor cores")
                                 << " " << shape.features << " x " << shape.batch << " r=" << r
                                 << " Y " << to_string(layout) << " signal_fast " << signal_fast
                                 << " beta " << beta) {
                const HostMatrix<S> c = random_reduced<S>(r * colours.pairs(), 1);
                // beta = 0 overwrites: NaNs already in Y must not reach the result.
                const HostMatrix<S> y0 =
                    beta == 0.0f
                        ? HostMatrix<S>::Constant(shape.features, shape.batch, S(std::nanf("")))
                        : random_reduced<S>(shape.features, shape.batch);
                const DeviceMatrix<S> cd = to_device(c);
                Padded<S> yd(y0, layout, 7.0f);
                detail::stl_decode<S>(4, r, decoder_d.data(), cd.data(), colours, yd.view(), alpha,
                                      beta, ctx);
                BOOST_TEST(yd.padding_is(7.0f));
                Eigen::MatrixXd exact(shape.features, shape.batch);
                for (Index e = 0; e < colours.pairs(); ++e) {
                  const Index I =
                      signal_fast ? e % colours.signal_tiles : e / colours.feature_tiles;
                  const Index F =
                      signal_fast ? e / colours.signal_tiles : e % colours.feature_tiles;
                  for (Index f = 0; f < 4; ++f)
                    for (Index i = 0; i < 4 && 4 * I + i < shape.batch; ++i) {
                      double sum = 0;
                      for (Index p = 0; p < r; ++p)
                        sum += double(decoder(p * 16 + i + 4 * f)) *
                               double(float(c(p * colours.pairs() + e)));
                      const double old =
                          beta == 0.0f ? 0.0 : double(float(y0(4 * F + f, 4 * I + i)));
                      exact(4 * F + f, 4 * I + i) = double(alpha) * sum + double(beta) * old;
                    }
                }
                const HostMatrix<S> got = yd.matrix.to_host().leftCols(shape.batch);
                check_rounded_once(got, exact);
              }
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(chain_mixing_rounds_the_exact_sums_once, S, ReducedTypes) {
  // Through a chain's device path: two layers, so the first layer's colours are mixed into the
  // second layer's encoded signals; checked against the CPU chain in float (mixing by the
  // tensor-core kernel and by cuBLAS alike).
  std::mt19937 gen(83);
  for (Index r1 : {16, 33, 49}) {
    for (Index r2 : {9, 32, 49}) {
      const stl::Encoders e1 = stl::rank49_subset(r1, gen);
      const stl::Encoders e2 = stl::rank49_subset(r2, gen);
      std::vector<float> w1(std::size_t(e1.rank() * 16 * 32)), w2(std::size_t(e2.rank() * 32 * 16));
      for (float& v : w1)
        v = random_scalar<float>();
      for (float& v : w2)
        v = random_scalar<float>();
      const StrassenTileChain<float> chain(
          {StrassenTile<float>(e1, 64, 128, w1), StrassenTile<float>(e2, 128, 64, w2)});
      const HostMatrix<S> xs = random_reduced<S>(64, 40);
      const HostMatrix<float> x = xs.template cast<float>();
      HostMatrix<float> expected(64, 40);
      chain.apply(Op::NoTrans, view(x), view(expected));
      double errors[2];
      for (StlCoding coding : {StlCoding::TensorCores, StlCoding::Scalar}) {
        CodingGuard guard(coding);
        const DeviceMatrix<S> xd = to_device(xs);
        DeviceMatrix<S> yd(64, 40);
        apply_reduced_precision(chain, Op::NoTrans, xd.view(), yd.view());
        errors[coding == StlCoding::Scalar] =
            relative_error(HostMatrix<float>(yd.to_host().template cast<float>()), expected);
      }
      BOOST_TEST_CONTEXT("r " << r1 << " -> " << r2) {
        // The scalar path's roundings (X̂, colours, the mixing matrix, Y in 16 bits) bound both.
        BOOST_TEST(errors[1] <= 40 * unit_roundoff_v<S>);
        BOOST_TEST(errors[0] <= 1.25 * errors[1]);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(mixing_kernel_rounds_the_exact_sums_once, S, ReducedTypes) {
  Context& ctx = default_context();
  for (Index pairs : {7, 64, 250}) {
    for (Index r : kRanks) {
      for (Index r_next : {Index(3), Index(16), Index(40), Index(64)}) {
        const Index ld = detail::stl_mixing_ld(r_next);
        const HostMatrix<S> mix = random_reduced<S>(ld * r, 1);
        const HostMatrix<S> c = random_reduced<S>(r * pairs, 1);
        const DeviceMatrix<S> mix_d = to_device(mix), cd = to_device(c);
        DeviceMatrix<S> next(r_next * pairs, 1);
        detail::stl_mix_mma<S>(r, cd.data(), pairs, mix_d.data(), ld, r_next, next.data(), ctx);
        Eigen::MatrixXd exact(r_next * pairs, 1);
        for (Index q = 0; q < r_next; ++q)
          for (Index e = 0; e < pairs; ++e) {
            double sum = 0;
            for (Index p = 0; p < r; ++p)
              sum += double(float(mix(q + p * ld))) * double(float(c(p * pairs + e)));
            exact(q * pairs + e) = sum;
          }
        BOOST_TEST_CONTEXT("pairs " << pairs << " r " << r << " -> " << r_next) {
          check_rounded_once(next.to_host(), exact);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
