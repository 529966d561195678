// Strassen-Tile operators on the GPU (encode kernel, strided-batched colour GEMMs, decode
// kernel; for a few signals the fused colour GEMMs + decode kernel) against the CPU application,
// itself tested against a naive tile loop and the dense product in tests/unit/test_stl.cpp;
// half/bfloat16 signals against the float result.
#include <cmath>

#include "gpu_reference.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

stl::Encoders random_encoders(Index t, Index r, std::mt19937& gen) {
  std::uniform_real_distribution<double> u(-1, 1);
  stl::Encoders enc;
  enc.tile = t;
  for (Eigen::MatrixXd* m : {&enc.encode_signal, &enc.encode_weight, &enc.decode}) {
    m->resize(r, t * t);
    for (Index i = 0; i < m->size(); ++i)
      m->data()[i] = u(gen);
  }
  return enc;
}

template <class T>
StrassenTile<T> random_stl(Index t, Index r, Index rows, Index cols, std::mt19937& gen) {
  std::vector<T> w(static_cast<std::size_t>(r * (rows / t) * (cols / t)));
  for (T& v : w)
    v = random_scalar<T>();
  return StrassenTile<T>(random_encoders(t, r, gen), rows, cols, std::move(w));
}

template <class Storage>
double reduced_error_vs_float(const StrassenTile<float>& A, Op op, Index batch, Layout lx,
                              Layout ly) {
  const Index in = op == Op::NoTrans ? A.cols() : A.rows();
  const Index out = op == Op::NoTrans ? A.rows() : A.cols();
  // Inputs exactly representable in the storage type, so only the arithmetic differs.
  const HostMatrix<Storage> xs = random_matrix<float>(in, batch).cast<Storage>();
  const HostMatrix<float> x = xs.template cast<float>();
  const HostMatrix<Storage> y0s = random_matrix<float>(out, batch).cast<Storage>();
  const HostMatrix<float> y0 = y0s.template cast<float>();
  HostMatrix<float> expected = y0;
  A.apply(op, view(x), view(expected), 0.5f, -2.0f);
  const DeviceMatrix<Storage> xd = to_device(xs, lx);
  DeviceMatrix<Storage> yd = to_device(y0s, ly);
  apply_reduced_precision(A, op, xd.view(), yd.view(), 0.5f, -2.0f);
  return relative_error(HostMatrix<float>(yd.to_host().template cast<float>()), expected);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_stl, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(random_encoders_match_cpu, T, ScalarTypes) {
  std::mt19937 gen(41);
  struct Case {
    Index t, r, rows, cols;
  };
  // t = 4 and 2 (compiled tile sizes), 3 and 8 (the generic kernel), rank above and below
  // t^2, rectangular both ways.
  for (const Case c : {Case{4, 32, 64, 96}, Case{2, 7, 30, 18}, Case{3, 5, 12, 27},
                       Case{8, 20, 16, 32}, Case{4, 49, 128, 64}}) {
    BOOST_TEST_CONTEXT("t=" << c.t << " r=" << c.r << " " << c.rows << "x" << c.cols) {
      const auto A = random_stl<T>(c.t, c.r, c.rows, c.cols, gen);
      for (Index batch : {1, 7, 64, 130})
        check_gpu_against_cpu(A, batch, tolerance<T>(c.r * std::max(c.rows, c.cols)));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(exact_encoders_give_the_dense_product_on_the_device, T, ScalarTypes) {
  const HostMatrix<T> dense = random_matrix<T>(256, 512);
  const auto A = StrassenTile<T>::encode(dense, stl::strassen_4x4());
  const HostMatrix<T> x = random_matrix<T>(512, 37);
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    const DeviceMatrix<T> xd = to_device(x, layout);
    DeviceMatrix<T> yd(256, 37, layout);
    A.apply(Op::NoTrans, xd.view(), yd.view());
    check_error_within(relative_error(yd.to_host(), HostMatrix<T>(dense * x)),
                       100 * exact_tolerance<T>());
  }
}

BOOST_AUTO_TEST_CASE(stl_in_an_expression_on_the_device) {
  std::mt19937 gen(43);
  const auto A = random_stl<float>(4, 24, 64, 64, gen);
  const Dense<float> D(random_matrix<float>(64, 64));
  check_gpu_against_cpu(A * D + 0.5f * A, 20, 1e-4);
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_signals_match_the_float_path) {
  std::mt19937 gen(47);
  const auto exact =
      StrassenTile<float>::encode(random_matrix<float>(128, 256), stl::strassen_4x4());
  const auto learned = random_stl<float>(4, 32, 128, 256, gen);
  for (const StrassenTile<float>* A : {&exact, &learned}) {
    for (Op op : {Op::NoTrans, Op::Trans}) {
      for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
        for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
          BOOST_TEST_CONTEXT((A == &exact ? "exact" : "learned")
                             << " " << to_string(op) << " X " << to_string(lx) << " Y "
                             << to_string(ly)) {
            // Encoded activations and colours are stored in 16 bits between the steps: a
            // few roundings of 2^-11 (half) or 2^-8 (bfloat16) through sums of r terms: at
            // most 3 unit roundoffs on an H100 (session 40), 8 allowed.
            const double err_half = reduced_error_vs_float<half>(*A, op, 45, lx, ly);
            const double err_bf16 = reduced_error_vs_float<bfloat16>(*A, op, 45, lx, ly);
            check_error_within(err_half, 8 * unit_roundoff_v<half>);
            check_error_within(err_bf16, 8 * unit_roundoff_v<bfloat16>);
            BOOST_TEST(err_half < err_bf16);  // more mantissa bits, closer to float
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(chains_match_cpu, T, ScalarTypes) {
  std::mt19937 gen(59);
  const StrassenTileChain<T> chain({random_stl<T>(4, 16, 64, 96, gen),
                                    random_stl<T>(4, 32, 96, 32, gen),
                                    random_stl<T>(4, 9, 32, 128, gen)});
  // B = 8, 64: encoded between layers (cuBLAS mixing); B = 7: layer by layer.
  for (Index batch : {8, 64, 7})
    check_gpu_against_cpu(chain, batch, tolerance<T>(32 * 128 * 3));
  // Products join chains; a t = 2 layer between t = 4 layers runs layer by layer.
  const auto mixed = random_stl<T>(4, 16, 64, 96, gen) * random_stl<T>(2, 7, 96, 32, gen) *
                     random_stl<T>(4, 9, 32, 128, gen);
  BOOST_TEST(mixed.layers().size() == 3u);
  check_gpu_against_cpu(mixed, 16, tolerance<T>(32 * 128 * 3));
}

BOOST_AUTO_TEST_CASE(half_chain_matches_the_float_chain) {
  std::mt19937 gen(61);
  const StrassenTileChain<float> chain(
      {random_stl<float>(4, 24, 128, 128, gen), random_stl<float>(4, 32, 128, 128, gen)});
  const HostMatrix<half> xs = (0.1f * random_matrix<float>(128, 64)).cast<half>();
  const HostMatrix<float> x = xs.cast<float>();
  HostMatrix<float> expected(128, 64);
  chain.apply(Op::NoTrans, view(x), view(expected));
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    const DeviceMatrix<half> xd = to_device(xs, layout);
    DeviceMatrix<half> yd(128, 64, layout);
    apply_reduced_precision(chain, Op::NoTrans, xd.view(), yd.view());
    check_error_within(relative_error(HostMatrix<float>(yd.to_host().cast<float>()), expected),
                       8 * unit_roundoff_v<half>);
  }
}

// The fused path (colour GEMMs + decode in one kernel, a few signals) forced, against the CPU:
// ragged output blocks (9 and 36 output tiles for blocks of 4), ranks up to its limit,
// every signal-tile count 1-4 with partial last tiles, both layouts of X and Y, alpha and beta.
BOOST_AUTO_TEST_CASE_TEMPLATE(fused_path_matches_cpu, T, RealTypes) {
  std::mt19937 gen(67);
  struct Case {
    Index r, rows, cols;
  };
  StlPathGuard fused(StlPath::Fused);
  for (const Case c : {Case{32, 36, 64}, Case{49, 144, 32}, Case{64, 32, 256}, Case{5, 64, 96}}) {
    const auto A = random_stl<T>(4, c.r, c.rows, c.cols, gen);
    for (Index batch : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16}) {
      for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
        for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
          BOOST_TEST_CONTEXT("r=" << c.r << " " << c.rows << "x" << c.cols << " B=" << batch
                                  << " X " << to_string(lx) << " Y " << to_string(ly)) {
            const HostMatrix<T> x = random_matrix<T>(c.cols, batch);
            const HostMatrix<T> y0 = random_matrix<T>(c.rows, batch);
            HostMatrix<T> expected = y0;
            A.apply(Op::NoTrans, view(x), view(expected), T(0.5), T(-2));
            const DeviceMatrix<T> xd = to_device(x, lx);
            DeviceMatrix<T> yd = to_device(y0, ly);
            A.apply(Op::NoTrans, xd.view(), yd.view(), T(0.5), T(-2));
            check_error_within(relative_error(yd.to_host(), expected), tolerance<T>(c.r * c.cols));
            // beta = 0 overwrites: NaNs already in Y must not reach the result.
            HostMatrix<T> nans = HostMatrix<T>::Constant(c.rows, batch, T(std::nan("")));
            DeviceMatrix<T> yn = to_device(nans, ly);
            A.apply(Op::NoTrans, xd.view(), yn.view());
            HostMatrix<T> plain(c.rows, batch);
            A.apply(Op::NoTrans, view(x), view(plain));
            check_error_within(relative_error(yn.to_host(), plain), tolerance<T>(c.r * c.cols));
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(fused_path_takes_half_and_bfloat16_signals) {
  std::mt19937 gen(71);
  const auto learned = random_stl<float>(4, 32, 128, 256, gen);
  const auto exact =
      StrassenTile<float>::encode(random_matrix<float>(128, 256), stl::strassen_4x4());
  StlPathGuard fused(StlPath::Fused);
  for (const StrassenTile<float>* A : {&learned, &exact}) {
    for (Index batch : {1, 6, 16}) {
      for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
        for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
          BOOST_TEST_CONTEXT((A == &exact ? "exact" : "learned")
                             << " B=" << batch << " X " << to_string(lx) << " Y "
                             << to_string(ly)) {
            // X̂ is stored in 16 bits, the colours stay in fp32 registers (one rounding fewer
            // than the steps, whose bounds are the same).
            check_error_within(reduced_error_vs_float<half>(*A, Op::NoTrans, batch, lx, ly),
                               8 * unit_roundoff_v<half>);
            check_error_within(reduced_error_vs_float<bfloat16>(*A, Op::NoTrans, batch, lx, ly),
                               8 * unit_roundoff_v<bfloat16>);
          }
        }
      }
    }
  }
}

// Chains on the fused path: each layer's kernel mixes its colours into the next layer's
// encoded signals (ranks 16 -> 32 -> 9 -> 64, rectangular layers), against the CPU chain.
BOOST_AUTO_TEST_CASE_TEMPLATE(fused_chains_match_cpu, T, RealTypes) {
  std::mt19937 gen(79);
  const StrassenTileChain<T> chain(
      {random_stl<T>(4, 16, 64, 96, gen), random_stl<T>(4, 32, 96, 32, gen),
       random_stl<T>(4, 9, 32, 128, gen), random_stl<T>(4, 64, 128, 64, gen)});
  StlPathGuard fused(StlPath::Fused);
  for (Index batch : {4, 8, 12, 16}) {
    for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
      for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
        BOOST_TEST_CONTEXT("B=" << batch << " X " << to_string(lx) << " Y " << to_string(ly)) {
          const HostMatrix<T> x = random_matrix<T>(64, batch);
          const HostMatrix<T> y0 = random_matrix<T>(64, batch);
          HostMatrix<T> expected = y0;
          chain.apply(Op::NoTrans, view(x), view(expected), T(2), T(0.5));
          const DeviceMatrix<T> xd = to_device(x, lx);
          DeviceMatrix<T> yd = to_device(y0, ly);
          chain.apply(Op::NoTrans, xd.view(), yd.view(), T(2), T(0.5));
          check_error_within(relative_error(yd.to_host(), expected), tolerance<T>(64 * 128 * 4));
        }
      }
    }
  }
  // A chain's adjoint is outside the fused path.
  const DeviceMatrix<T> x(64, 8);
  DeviceMatrix<T> y(64, 8);
  BOOST_CHECK_THROW(chain.apply(Op::Trans, x.view(), y.view()), DeviceError);
}

BOOST_AUTO_TEST_CASE(fused_half_chain_matches_the_float_chain) {
  std::mt19937 gen(83);
  const StrassenTileChain<float> chain(
      {random_stl<float>(4, 24, 128, 128, gen), random_stl<float>(4, 32, 128, 128, gen)});
  StlPathGuard fused(StlPath::Fused);
  for (Index batch : {4, 16}) {
    const HostMatrix<half> xs = (0.1f * random_matrix<float>(128, batch)).cast<half>();
    const HostMatrix<float> x = xs.cast<float>();
    HostMatrix<float> expected(128, batch);
    chain.apply(Op::NoTrans, view(x), view(expected));
    for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
      const DeviceMatrix<half> xd = to_device(xs, layout);
      DeviceMatrix<half> yd(128, batch, layout);
      apply_reduced_precision(chain, Op::NoTrans, xd.view(), yd.view());
      check_error_within(relative_error(HostMatrix<float>(yd.to_host().cast<float>()), expected),
                         8 * unit_roundoff_v<half>);
    }
  }
}

BOOST_AUTO_TEST_CASE(fused_path_refuses_what_it_does_not_take) {
  std::mt19937 gen(73);
  StlPathGuard fused(StlPath::Fused);
  const auto A = random_stl<float>(4, 16, 64, 64, gen);
  const DeviceMatrix<float> x(64, 17);
  DeviceMatrix<float> y(64, 17);
  // 17 signals are 5 tiles; A^T reads the weights the other way.
  BOOST_CHECK_THROW(A.apply(Op::NoTrans, x.view(), y.view()), DeviceError);
  BOOST_CHECK_THROW(A.apply(Op::Trans, x.view().col_block(0, 8), y.view().col_block(0, 8)),
                    DeviceError);
  // 36 input features are 9 input tiles (runs of 8); t = 2; complex values; rank 65.
  const auto odd = random_stl<float>(4, 16, 64, 36, gen);
  const DeviceMatrix<float> x36(36, 8);
  BOOST_CHECK_THROW(odd.apply(Op::NoTrans, x36.view(), y.view().col_block(0, 8)), DeviceError);
  const auto t2 = random_stl<float>(2, 7, 64, 64, gen);
  BOOST_CHECK_THROW(t2.apply(Op::NoTrans, x.view().col_block(0, 8), y.view().col_block(0, 8)),
                    DeviceError);
  const auto c = random_stl<std::complex<float>>(4, 16, 64, 64, gen);
  const DeviceMatrix<std::complex<float>> xc(64, 8);
  DeviceMatrix<std::complex<float>> yc(64, 8);
  BOOST_CHECK_THROW(c.apply(Op::NoTrans, xc.view(), yc.view()), DeviceError);
  const auto wide = random_stl<float>(4, 65, 64, 64, gen);
  BOOST_CHECK_THROW(wide.apply(Op::NoTrans, x.view().col_block(0, 8), y.view().col_block(0, 8)),
                    DeviceError);
  // The steps take all of them.
  StlPathGuard steps(StlPath::Steps);
  A.apply(Op::NoTrans, x.view(), y.view());
  wide.apply(Op::NoTrans, x.view().col_block(0, 8), y.view().col_block(0, 8));
}

// A chain through a layer boundary without features is the zero map: Y = beta Y. The GPU's
// colour GEMMs (leading dimensions >= 1) do not take the empty layers, so the chain must not
// run them (as Product does not); in every op, both paths, and with 16-bit signals.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_chain_with_an_empty_inner_dimension_is_zero, T, ScalarTypes) {
  std::mt19937 gen(79);
  const StrassenTileChain<T> chain({StrassenTile<T>(random_encoders(4, 9, gen), 8, 0, {}),
                                    StrassenTile<T>(random_encoders(4, 9, gen), 0, 8, {})});
  for (Index batch : {8, 32})  // 2 signal tiles (fused under Auto for real values), 8 (steps)
    check_gpu_against_cpu(chain, batch);
  if constexpr (std::is_same_v<T, float>) {
    const HostMatrix<half> xs = random_matrix<float>(8, 32).cast<half>();
    const HostMatrix<half> y0 = random_matrix<float>(8, 32).cast<half>();
    const DeviceMatrix<half> xd = to_device(xs, Layout::ColMajor);
    DeviceMatrix<half> yd = to_device(y0, Layout::ColMajor);
    apply_reduced_precision(chain, Op::NoTrans, xd.view(), yd.view(), 1.0f, -2.0f);
    const HostMatrix<float> expected = -2.0f * y0.cast<float>();
    check_error_within(relative_error(HostMatrix<float>(yd.to_host().cast<float>()), expected),
                       1e-3);
  }
}

BOOST_AUTO_TEST_CASE(tiles_beyond_the_kernels_are_refused_clearly) {
  std::mt19937 gen(53);
  const auto A = random_stl<float>(16, 3, 32, 32, gen);
  const DeviceMatrix<float> x(32, 16);
  DeviceMatrix<float> y(32, 16);
  BOOST_CHECK_THROW(A.apply(Op::NoTrans, x.view(), y.view()), DeviceError);
}

BOOST_AUTO_TEST_SUITE_END()
