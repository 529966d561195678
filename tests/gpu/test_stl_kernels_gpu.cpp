// The encode and decode kernels of the Strassen-Tile GPU path for 16-bit signals: the
// tensor-core kernels (stl_coding_mma.cu, where they apply), and the scalar kernels with the
// coefficients as a kernel parameter and in shared memory, against the exact sums (in double,
// from the same inputs and coefficients) rounded once to the storage type. Sums in fp32 differ
// from the exact ones by about 1e-7 of the sum of the terms' magnitudes, so at least 99 % of the
// values must equal the reference and all must be within one unit in the last place of it plus
// that fp32 error. A wrong coefficient, signal or colour moves values by far more, and so would
// coefficients rounded to 16 bits for the tensor cores (instead of split into 16-bit parts).
#include <cmath>

#include "gpu_reference.hpp"
#include "operators/stl/stl_kernels.hpp"

using namespace strop;
using namespace strop::testing;
using detail::StlColourLayout;

namespace {

using ReducedTypes = boost::mpl::list<half, bfloat16>;

template <class S>
HostMatrix<S> random_reduced(Index rows, Index cols) {
  return random_matrix<float>(rows, cols).cast<S>();
}

HostMatrix<float> random_coefficients(Index rank) {
  return random_matrix<float>(rank * 16, 1);
}

// got against the exact values rounded to S, `magnitude` the sums of the terms' magnitudes: the
// share of equal values, and whether all are within one unit in the last place plus the fp32
// rounding of the sums.
template <class S>
void check_rounded_once(const HostMatrix<S>& got, const Eigen::MatrixXd& exact,
                        const Eigen::MatrixXd& magnitude) {
  BOOST_REQUIRE(got.size() == exact.size());
  const double unit = 2 * unit_roundoff_v<S>;  // one ulp relative to [1, 2)
  Index equal = 0;
  bool within = true;
  for (Index i = 0; i < exact.size(); ++i) {
    const double want = double(float(S(float(exact.data()[i]))));
    const double have = double(float(got.data()[i]));
    equal += have == want;
    within = within && std::abs(have - want) <=
                           unit * std::abs(exact.data()[i]) + 1e-6 * magnitude.data()[i] + 1e-7;
  }
  BOOST_TEST(within);
  const Index allowed = std::max<Index>(2, exact.size() / 100);
  BOOST_TEST(exact.size() - equal <= allowed, equal << " of " << exact.size() << " equal");
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
// Odd and even pair counts, partial signal tiles, one signal. The tensor-core kernels take
// 128 and 256 features (32 and 64 feature tiles) in ColMajor with the feature tiles fastest,
// and 125-128 or 256 signals (32 and 64 signal tiles) in RowMajor with the signal tiles fastest
// (126: a partial last chunk of signals).
const Shape kShapes[] = {{36, 16}, {36, 13}, {36, 9},   {64, 1},   {128, 30},
                         {256, 7}, {128, 4}, {36, 128}, {36, 126}, {64, 256}};
const Index kRanks[] = {5, 16, 17, 32, 49, 64};

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_stl_kernels, *utf::precondition(HasDevice()))

// The kernels of one encode or decode: the default (the tensor-core kernels where they apply),
// the scalar ones with the coefficients as a kernel parameter, or from shared memory.
enum class Kernels { Default, ScalarParameter, ScalarShared };
const Kernels kKernels[] = {Kernels::Default, Kernels::ScalarParameter, Kernels::ScalarShared};
const char* kernels_name(Kernels k) {
  return k == Kernels::Default ? "default" : k == Kernels::ScalarParameter ? "parameter" : "shared";
}

BOOST_AUTO_TEST_CASE_TEMPLATE(encode_rounds_the_exact_sums_once, S, ReducedTypes) {
  Context& ctx = default_context();
  for (const Shape& shape : kShapes) {
    const HostMatrix<S> x = random_reduced<S>(shape.features, shape.batch);
    for (Index r : kRanks) {
      const HostMatrix<float> encoder = random_coefficients(r);
      const DeviceMatrix<float> encoder_d = to_device(encoder);
      for (Kernels kernels : kKernels) {
        for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
          for (bool signal_fast : {false, true}) {
            const StlColourLayout colours{(shape.batch + 3) / 4, shape.features / 4, signal_fast};
            BOOST_TEST_CONTEXT(kernels_name(kernels)
                               << " " << shape.features << " x " << shape.batch << " r=" << r
                               << " X " << to_string(layout) << " signal_fast " << signal_fast) {
              Padded<S> xd(x, layout, 9.0f);  // the padding must not be read as signals
              DeviceMatrix<S> out(r * colours.pairs(), 1);
              detail::stl_encode<S>(4, r, encoder_d.data(),
                                    kernels == Kernels::ScalarShared ? nullptr : encoder.data(),
                                    xd.view(), out.data(), colours, ctx,
                                    kernels == Kernels::Default);
              Eigen::MatrixXd exact(r * colours.pairs(), 1), magnitude(r * colours.pairs(), 1);
              for (Index e = 0; e < colours.pairs(); ++e) {
                const Eigen::VectorXd v = tile_values(x, colours, e);
                for (Index p = 0; p < r; ++p) {
                  const Eigen::VectorXd c = encoder.block(p * 16, 0, 16, 1).cast<double>();
                  exact(p * colours.pairs() + e) = c.dot(v);
                  magnitude(p * colours.pairs() + e) = c.cwiseAbs().dot(v.cwiseAbs());
                }
              }
              check_rounded_once(out.to_host(), exact, magnitude);
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
  for (const Shape& shape : kShapes) {
    for (Index r : kRanks) {
      const HostMatrix<float> decoder = random_coefficients(r);
      const DeviceMatrix<float> decoder_d = to_device(decoder);
      for (Kernels kernels : kKernels) {
        for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
          for (bool signal_fast : {false, true}) {
            for (float beta : {0.0f, -0.5f}) {
              const StlColourLayout colours{(shape.batch + 3) / 4, shape.features / 4, signal_fast};
              BOOST_TEST_CONTEXT(kernels_name(kernels)
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
                detail::stl_decode<S>(4, r, decoder_d.data(),
                                      kernels == Kernels::ScalarShared ? nullptr : decoder.data(),
                                      cd.data(), colours, yd.view(), alpha, beta, ctx,
                                      kernels == Kernels::Default);
                BOOST_TEST(yd.padding_is(7.0f));
                Eigen::MatrixXd exact(shape.features, shape.batch),
                    magnitude(shape.features, shape.batch);
                for (Index e = 0; e < colours.pairs(); ++e) {
                  const Index I =
                      signal_fast ? e % colours.signal_tiles : e / colours.feature_tiles;
                  const Index F =
                      signal_fast ? e / colours.signal_tiles : e % colours.feature_tiles;
                  for (Index f = 0; f < 4; ++f)
                    for (Index i = 0; i < 4 && 4 * I + i < shape.batch; ++i) {
                      double sum = 0, size = 0;
                      for (Index p = 0; p < r; ++p) {
                        const double term = double(decoder(p * 16 + i + 4 * f)) *
                                            double(float(c(p * colours.pairs() + e)));
                        sum += term;
                        size += std::abs(term);
                      }
                      const double old =
                          beta == 0.0f ? 0.0 : double(float(y0(4 * F + f, 4 * I + i)));
                      exact(4 * F + f, 4 * I + i) = double(alpha) * sum + double(beta) * old;
                      magnitude(4 * F + f, 4 * I + i) = size + std::abs(old);
                    }
                }
                const HostMatrix<S> got = yd.matrix.to_host().leftCols(shape.batch);
                check_rounded_once(got, exact, magnitude);
              }
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
