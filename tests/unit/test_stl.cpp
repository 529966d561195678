// Strassen-Tile operators against a naive tile loop (the paper's Definition 3.1 written out
// entry by entry, in double), against the dense product for exact encoders, and the adjoint
// against the inner-product identity <A X, G> = <X, A^H G>.
#include "operators/stl/stl_steps.hpp"
#include "random_strassen_tile.hpp"
#include "reference.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

// Y = op(A) X by the definition: for signal tile I, input tile L, output tile J,
// vec(Y^T_{I,J}) = D^T sum_L (E_X vec(X^T_{I,L}) ⊙ Ŵ_{L,J}) (zero signals pad the last
// tile). The adjoint follows from the definition entry by entry (no roles swapped here:
// it sums the forward map's coefficients with the indices exchanged).
template <class T>
T from_complex(std::complex<double> v) {
  if constexpr (is_complex_v<T>) {
    return T(v);
  } else {
    return T(v.real());
  }
}

template <class T>
HostMatrix<T> naive_apply(const StrassenTile<T>& A, Op op, const HostMatrix<T>& X) {
  using C = std::complex<double>;
  const stl::Encoders& enc = A.encoders();
  const Index t = A.tile(), r = A.rank(), B = X.cols();
  const Index nL = A.cols() / t, nJ = A.rows() / t, nI = (B + t - 1) / t;
  auto w = [&](Index p, Index L, Index J) {
    return C(A.encoded_weight()[static_cast<std::size_t>(p * nL * nJ + J * nL + L)]);
  };
  auto x = [&](Index feature, Index signal) { return signal < B ? C(X(feature, signal)) : C(0); };
  // coefficient of x(L t + l, I t + i) in y(J t + j, I t + i') through colour p
  auto coef = [&](Index p, Index i, Index l, Index i2, Index j) {
    return enc.encode_signal(p, i + t * l) * enc.decode(p, i2 + t * j);
  };
  const bool forward = op == Op::NoTrans;
  HostMatrix<T> Y = HostMatrix<T>::Zero(forward ? A.rows() : A.cols(), B);
  for (Index I = 0; I < nI; ++I)
    for (Index L = 0; L < nL; ++L)
      for (Index J = 0; J < nJ; ++J)
        for (Index p = 0; p < r; ++p)
          for (Index i = 0; i < t; ++i)
            for (Index l = 0; l < t; ++l)
              for (Index i2 = 0; i2 < t; ++i2)
                for (Index j = 0; j < t; ++j) {
                  const C c = coef(p, i, l, i2, j) * w(p, L, J);
                  if (forward) {
                    if (I * t + i2 < B)
                      Y(J * t + j, I * t + i2) += from_complex<T>(c * x(L * t + l, I * t + i));
                  } else {
                    const C ca = op == Op::Adjoint ? std::conj(c) : c;
                    if (I * t + i < B)
                      Y(L * t + l, I * t + i) += from_complex<T>(ca * x(J * t + j, I * t + i2));
                  }
                }
  return Y;
}

template <class T>
HostMatrix<T> apply_in(const StrassenTile<T>& A, Op op, const HostMatrix<T>& X, Layout layout,
                       T alpha, T beta, const HostMatrix<T>& Y0) {
  using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  if (layout == Layout::ColMajor) {
    HostMatrix<T> Y = Y0;
    A.apply(op, view(X), view(Y), alpha, beta);
    return Y;
  }
  const RowMajorMatrix xr = X;
  RowMajorMatrix yr = Y0;
  A.apply(op, view(xr), view(yr), alpha, beta);
  return yr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stl_operator)

BOOST_AUTO_TEST_CASE(exact_encoders_reproduce_the_tile_product) {
  BOOST_TEST(stl::product_error(stl::strassen_2x2()) == 0.0);
  BOOST_TEST(stl::product_error(stl::strassen_4x4()) == 0.0);
  BOOST_TEST(stl::strassen_4x4().rank() == 49);
  std::mt19937 gen(5);
  const stl::Encoders subset = stl::rank49_subset(32, gen);
  BOOST_TEST(subset.rank() == 32);
  BOOST_TEST(!stl::is_exact(subset));  // 32 < the tensor rank of 4 x 4 products
  // Every colour of the subset is a colour of the full rank-49 encoders.
  const stl::Encoders full = stl::strassen_4x4();
  for (Index p = 0; p < subset.rank(); ++p) {
    bool found = false;
    for (Index q = 0; q < 49 && !found; ++q)
      found = subset.encode_signal.row(p) == full.encode_signal.row(q) &&
              subset.encode_weight.row(p) == full.encode_weight.row(q) &&
              subset.decode.row(p) == full.decode.row(q);
    BOOST_TEST(found);
  }
  BOOST_CHECK_THROW(stl::rank49_subset(50, gen), ShapeError);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matches_the_naive_tile_loop, T, ScalarTypes) {
  struct Case {
    Index t, r, rows, cols;
  };
  for (const Case c : {Case{4, 7, 8, 12}, Case{2, 5, 6, 10}, Case{4, 20, 4, 4}, Case{3, 4, 9, 6}}) {
    const StrassenTile<T> A = random_strassen_tile<T>(c.t, c.r, c.rows, c.cols);
    BOOST_TEST(!A.acts_per_signal());
    for (Index batch : {1, 7, 8, 13}) {
      for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
        const Index in = op == Op::NoTrans ? c.cols : c.rows;
        const HostMatrix<T> X = random_matrix<T>(in, batch);
        const HostMatrix<T> Y0 = random_matrix<T>(op == Op::NoTrans ? c.rows : c.cols, batch);
        const T alpha = random_scalar<T>(), beta = random_scalar<T>();
        const HostMatrix<T> expected = alpha * naive_apply(A, op, X) + beta * Y0;
        for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
          BOOST_TEST_CONTEXT("t=" << c.t << " r=" << c.r << " " << c.rows << "x" << c.cols << " B="
                                  << batch << " " << to_string(op) << " " << to_string(layout)) {
            const HostMatrix<T> got = apply_in(A, op, X, layout, alpha, beta, Y0);
            BOOST_TEST(relative_error(got, expected) <= tolerance<T>(c.r * c.cols));
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(adjoint_is_the_inner_product_adjoint, T, ScalarTypes) {
  const StrassenTile<T> A = random_strassen_tile<T>(4, 9, 12, 8);
  const Index batch = 11;
  const HostMatrix<T> X = random_matrix<T>(8, batch), G = random_matrix<T>(12, batch);
  HostMatrix<T> AX(12, batch), AhG(8, batch), AtG(8, batch);
  A.apply(Op::NoTrans, view(X), view(AX));
  A.apply(Op::Adjoint, view(G), view(AhG));
  A.apply(Op::Trans, view(G), view(AtG));
  // <A X, G> = <X, A^H G> (Frobenius, linear in the second argument) and A^T G = conj(A^H
  // conj(G)) for real encoders.
  const T lhs = (AX.adjoint() * G).trace();
  const T rhs = (X.adjoint() * AhG).trace();
  BOOST_TEST(std::abs(lhs - rhs) <= tolerance<T>(200) * (AX.norm() * G.norm()));
  HostMatrix<T> conj_g = G.conjugate(), AhConjG(8, batch);
  A.apply(Op::Adjoint, view(conj_g), view(AhConjG));
  BOOST_TEST(relative_error(AtG, HostMatrix<T>(AhConjG.conjugate())) <= tolerance<T>(200));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(exact_encoders_give_the_dense_product, T, ScalarTypes) {
  for (const stl::Encoders& enc : {stl::strassen_2x2(), stl::strassen_4x4()}) {
    const HostMatrix<T> dense = random_matrix<T>(16, 24);
    const StrassenTile<T> A = StrassenTile<T>::encode(dense, enc);
    BOOST_TEST(A.acts_per_signal());
    BOOST_TEST(A.acts_per_signal(1e-3));
    // A NaN tolerance made every comparison false: "mixes signals" for exact encoders.
    BOOST_CHECK_THROW(A.acts_per_signal(std::nan("")), NumericalError);
    BOOST_CHECK_THROW(A.acts_per_signal(-1), NumericalError);
    BOOST_TEST(relative_error(A.to_dense(), dense) <= exact_tolerance<T>());
    // Also with a batch that is not a multiple of t, in every op and layout, to the default
    // tolerance of every operator (measured over 50 draws: at most 2% of it).
    check_against_dense(A, dense, -1, 7);
    // And inside expressions with other operators.
    const Dense<T> D(random_matrix<T>(24, 16));
    const auto expr = A * D + T(2) * Dense<T>(dense) * D;
    BOOST_TEST(relative_error(expr.to_dense(), HostMatrix<T>(3 * dense * D.matrix())) <=
               tolerance<T>(24));
    // And as a Kronecker factor: I_2 ⊗ A is block-diagonal.
    HostMatrix<T> blocks = HostMatrix<T>::Zero(32, 48);
    blocks.topLeftCorner(16, 24) = dense;
    blocks.bottomRightCorner(16, 24) = dense;
    check_against_dense(kron(Identity<T>(2), A), blocks, -1, 7);
  }
}

BOOST_AUTO_TEST_CASE(inexact_operators_have_no_dense_matrix) {
  std::mt19937 gen(3);
  const HostMatrix<double> dense = random_matrix<double>(8, 8);
  const auto A = StrassenTile<double>::encode(dense, stl::rank49_subset(30, gen));
  BOOST_TEST(!A.acts_per_signal());
  BOOST_CHECK_THROW(A.to_dense(), ShapeError);
  const Dense<double> D(dense);
  BOOST_CHECK_THROW((D * A).to_dense(), ShapeError);
  BOOST_CHECK_THROW(AnyOperator<double>(A + D).to_dense(), ShapeError);
  BOOST_TEST(AnyOperator<double>(D * D).acts_per_signal());
  // A Kronecker product applies each factor to slices of every signal side by side, where an
  // inexact operator would mix slices of one signal: refused, also behind other nodes.
  const Identity<double> I2(2);
  BOOST_CHECK_THROW(kron(I2, A), ShapeError);
  BOOST_CHECK_THROW(kron(D * A, I2), ShapeError);
  BOOST_CHECK_THROW(kron(I2, kron(A)), ShapeError);
  BOOST_TEST(kron(A).rows() == 8);  // one factor: the operator itself, no slices
  // Products with other operators still apply (linear in the batch): D (A X).
  const HostMatrix<double> X = random_matrix<double>(8, 8);
  HostMatrix<double> AX(8, 8), expected(8, 8), got(8, 8);
  A.apply(Op::NoTrans, view(X), view(AX));
  expected = dense * AX;
  (D * A).apply(Op::NoTrans, view(X), view(got));
  BOOST_TEST(relative_error(got, expected) <= tolerance<double>(64));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(each_tile_pair_is_judged_at_its_own_scale, T, RealTypes) {
  // A 2x4 operator, t = 2: two tile pairs (L = 0, 1; J = 0), colour p of pair L at p*2 + L.
  // Pair 0 at a scale 1e4 / epsilon, far above the default tolerance's 100 epsilon.
  const T big = T(1e4) / std::numeric_limits<T>::epsilon();
  HostMatrix<T> dense = big * random_matrix<T>(2, 4);
  dense.rightCols(2) /= big;  // exact, at a very different scale: still per signal
  const auto exact = StrassenTile<T>::encode(dense, stl::strassen_2x2());
  BOOST_TEST(exact.acts_per_signal());
  BOOST_TEST(relative_error(exact.to_dense(), dense) <= exact_tolerance<T>());
  // Pair 1 given arbitrary O(1) colours mixes signals; against pair 0's scale that mixing is
  // below 100 epsilon, and a comparison with the largest entry of all pairs missed it.
  std::vector<T> weights = exact.encoded_weight();
  const T mix[7] = {0.3, -0.7, 0.5, 0.2, -0.4, 0.9, -0.1};
  for (int p = 0; p < 7; ++p)
    weights[p * 2 + 1] = mix[p];
  const StrassenTile<T> mixing(stl::strassen_2x2(), 2, 4, weights);
  BOOST_TEST(!mixing.acts_per_signal());
  BOOST_CHECK_THROW(mixing.to_dense(), ShapeError);
  BOOST_CHECK_THROW(kron(Identity<T>(2), mixing), ShapeError);
}

BOOST_AUTO_TEST_CASE(signals_of_one_tile_mix_and_tiles_stay_independent) {
  const StrassenTile<double> A = random_strassen_tile<double>(4, 20, 8, 8);
  HostMatrix<double> X = random_matrix<double>(8, 8), Y1(8, 8), Y2(8, 8);
  A.apply(Op::NoTrans, view(X), view(Y1));
  X(0, 1) += 1;  // signal 1: tile 0 changes, tile 1 (signals 4..7) must not
  A.apply(Op::NoTrans, view(X), view(Y2));
  BOOST_TEST((Y1.col(0) - Y2.col(0)).norm() > 1e-6);  // signal 0 hears signal 1
  BOOST_TEST((Y1.rightCols(4) - Y2.rightCols(4)).norm() == 0.0);
}

BOOST_AUTO_TEST_CASE(reduced_precision_on_the_host_rounds_the_float_result) {
  std::mt19937 gen(6);
  const auto A = StrassenTile<float>::encode(random_matrix<float>(16, 32), stl::strassen_4x4());
  const HostMatrix<float> X = random_matrix<float>(32, 10);
  const HostMatrix<half> xh = X.cast<half>();
  HostMatrix<float> expected(16, 10);
  A.apply(Op::NoTrans, view(HostMatrix<float>(xh.cast<float>())), view(expected));
  HostMatrix<half> yh(16, 10);
  apply_reduced_precision(A, Op::NoTrans, view(xh), view(yh));
  // The float result on the same (half) signals, rounded once to half.
  BOOST_TEST(relative_error(HostMatrix<float>(yh.cast<float>()), expected) <=
             unit_roundoff_v<half>);
  BOOST_TEST(relative_error(HostMatrix<float>(yh.cast<float>()), expected) > 0.0);
  HostMatrix<bfloat16> yb(15, 10);
  const HostMatrix<bfloat16> xb = X.cast<bfloat16>();
  BOOST_CHECK_THROW(apply_reduced_precision(A, Op::NoTrans, view(xb), view(yb)), ShapeError);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_chain_equals_its_layers_applied_one_by_one, T, ScalarTypes) {
  // Ranks differ between layers (the mixing matrices are rectangular); shapes rectangular.
  const StrassenTile<T> A1 = random_strassen_tile<T>(4, 9, 8, 12);
  const StrassenTile<T> A2 = random_strassen_tile<T>(4, 20, 12, 16);
  const StrassenTile<T> A3 = random_strassen_tile<T>(4, 5, 16, 4);
  const StrassenTileChain<T> chain({A1, A2, A3});
  BOOST_TEST(chain.rows() == 8);
  BOOST_TEST(chain.cols() == 4);
  BOOST_TEST(!chain.acts_per_signal());
  // B = 12: the encoded path (one encode, two mixings, one decode); B = 10: layer by layer.
  for (Index batch : {12, 10, 4}) {
    for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
      const bool forward = op == Op::NoTrans;
      const HostMatrix<T> X = random_matrix<T>(forward ? 4 : 8, batch);
      const HostMatrix<T> Y0 = random_matrix<T>(forward ? 8 : 4, batch);
      const T alpha = random_scalar<T>(), beta = random_scalar<T>();
      HostMatrix<T> z3, z2, z1;
      if (forward) {
        z3 = naive_apply(A3, op, X);
        z2 = naive_apply(A2, op, z3);
        z1 = naive_apply(A1, op, z2);
      } else {
        z3 = naive_apply(A1, op, X);
        z2 = naive_apply(A2, op, z3);
        z1 = naive_apply(A3, op, z2);
      }
      const HostMatrix<T> expected = alpha * z1 + beta * Y0;
      for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
        BOOST_TEST_CONTEXT("B=" << batch << " " << to_string(op) << " " << to_string(layout)) {
          HostMatrix<T> got = Y0;
          if (layout == Layout::ColMajor) {
            chain.apply(op, view(X), view(got), alpha, beta);
          } else {
            using RowMajorMatrix =
                Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
            const RowMajorMatrix xr = X;
            RowMajorMatrix yr = Y0;
            chain.apply(op, view(xr), view(yr), alpha, beta);
            got = yr;
          }
          BOOST_TEST(relative_error(got, expected) <= tolerance<T>(20 * 16 * 3));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_chain_of_exact_layers_is_the_product_of_their_matrices) {
  const HostMatrix<double> a = random_matrix<double>(8, 16), b = random_matrix<double>(16, 12);
  const StrassenTileChain<double> chain({StrassenTile<double>::encode(a, stl::strassen_4x4()),
                                         StrassenTile<double>::encode(b, stl::strassen_4x4())});
  BOOST_TEST(chain.acts_per_signal());
  BOOST_TEST(relative_error(chain.to_dense(), HostMatrix<double>(a * b)) <= 1e-12);
  // Products of STL operators join one chain at compile time; mixed tile sizes run layer
  // by layer and still give the product.
  const auto mixed = StrassenTile<double>::encode(a, stl::strassen_4x4()) *
                     StrassenTile<double>::encode(b, stl::strassen_2x2());
  static_assert(std::is_same_v<std::remove_const_t<decltype(mixed)>, StrassenTileChain<double>>);
  BOOST_TEST(!mixed.keeps_encoded(8));
  BOOST_TEST(chain.keeps_encoded(8));
  BOOST_TEST(!chain.keeps_encoded(6));
  BOOST_TEST(relative_error(mixed.to_dense(), HostMatrix<double>(a * b)) <= 1e-12);
  const auto three =
      mixed * StrassenTile<double>::encode(HostMatrix<double>(b.transpose()), stl::strassen_2x2());
  BOOST_TEST(three.layers().size() == 3u);
  BOOST_TEST(relative_error(three.to_dense(), HostMatrix<double>(a * b * b.transpose())) <= 1e-12);
  // Shapes that do not multiply are refused.
  BOOST_CHECK_THROW(
      StrassenTileChain<double>({StrassenTile<double>::encode(a, stl::strassen_4x4()),
                                 StrassenTile<double>::encode(a, stl::strassen_4x4())}),
      ShapeError);
  BOOST_CHECK_THROW(StrassenTileChain<double>(std::vector<StrassenTile<double>>{}), ShapeError);
}

// Which applications the fused GPU path takes (StlPath::Fused; its kernel is tested against
// the CPU in tests/gpu/test_stl_gpu.cpp): the limits of its registers, shared memory and runs.
BOOST_AUTO_TEST_CASE(the_fused_gpu_path_takes_few_signals_of_t4_forward_layers) {
  using detail::stl_fused_refusal;
  using detail::stl_steps;
  std::mt19937 gen(5);
  const stl::Encoders r32 = stl::rank49_subset(32, gen), r49 = stl::strassen_4x4();
  BOOST_TEST(!stl_fused_refusal(stl_steps(r32, 64, 128, Op::NoTrans, 1), false));
  BOOST_TEST(!stl_fused_refusal(stl_steps(r49, 64, 128, Op::NoTrans, 16), false));
  BOOST_TEST(stl_fused_refusal(stl_steps(r32, 64, 128, Op::NoTrans, 17), false));  // 5 tiles
  BOOST_TEST(stl_fused_refusal(stl_steps(r32, 64, 128, Op::Trans, 8), false));
  BOOST_TEST(stl_fused_refusal(stl_steps(r32, 64, 128, Op::Adjoint, 8), false));
  BOOST_TEST(stl_fused_refusal(stl_steps(r32, 64, 128, Op::NoTrans, 8), true));  // complex
  BOOST_TEST(stl_fused_refusal(stl_steps(r32, 64, 36, Op::NoTrans, 8), false));  // 9 input tiles
  BOOST_TEST(stl_fused_refusal(stl_steps(stl::strassen_2x2(), 64, 128, Op::NoTrans, 8), false));
  stl::Encoders wide = r49;
  for (Eigen::MatrixXd* m : {&wide.encode_signal, &wide.encode_weight, &wide.decode})
    m->conservativeResize(65, 16);
  BOOST_TEST(stl_fused_refusal(stl_steps(wide, 64, 128, Op::NoTrans, 8), false));  // r = 65
  // Auto: always for one signal tile, for more only while the weights are small enough.
  using detail::stl_fused_preferred;
  BOOST_TEST(stl_fused_preferred(stl_steps(r32, 16384, 16384, Op::NoTrans, 4)));
  BOOST_TEST(!stl_fused_preferred(stl_steps(r32, 16384, 16384, Op::NoTrans, 5)));
  BOOST_TEST(stl_fused_preferred(stl_steps(r32, 8192, 8192, Op::NoTrans, 8)));
  BOOST_TEST(!stl_fused_preferred(stl_steps(r32, 8192, 8192, Op::NoTrans, 9)));
  BOOST_TEST(stl_fused_preferred(stl_steps(r32, 4096, 4096, Op::NoTrans, 16)));
}

BOOST_AUTO_TEST_CASE(bad_input_is_rejected) {
  const stl::Encoders enc = stl::strassen_2x2();
  BOOST_CHECK_THROW(StrassenTile<float>(enc, 6, 5, std::vector<float>(7 * 3 * 2)), ShapeError);
  BOOST_CHECK_THROW(StrassenTile<float>(enc, 6, 4, std::vector<float>(7 * 3 * 2 - 1)), ShapeError);
  std::vector<float> nan_weights(7 * 3 * 2, 1.0f);
  nan_weights[5] = std::numeric_limits<float>::quiet_NaN();
  BOOST_CHECK_THROW(StrassenTile<float>(enc, 6, 4, nan_weights), NumericalError);
  stl::Encoders bad = enc;
  bad.decode.resize(6, 4);
  BOOST_CHECK_THROW(StrassenTile<float>(bad, 6, 4, std::vector<float>(7 * 6)), ShapeError);
  bad = enc;
  bad.encode_weight(0, 0) = std::numeric_limits<double>::infinity();
  BOOST_CHECK_THROW(StrassenTile<float>::encode(HostMatrix<float>::Ones(4, 4), bad),
                    NumericalError);
  const StrassenTile<float> A(enc, 6, 4, std::vector<float>(7 * 3 * 2, 1.0f));
  HostMatrix<float> X(5, 3), Y(6, 3);
  BOOST_CHECK_THROW(A.apply(Op::NoTrans, view(X), view(Y)), ShapeError);
  // Sizes whose count of encoded weights, r (M/t)(N/t) = 4 * 2^62, wraps to 0 in 64 bits: an
  // empty weight vector must not pass for them (every later read would run past its end).
  stl::Encoders unit;
  unit.tile = 1;
  unit.encode_signal = unit.encode_weight = unit.decode = Eigen::MatrixXd::Ones(4, 1);
  const Index huge = Index(1) << 31;
  BOOST_CHECK_THROW(StrassenTile<float>(unit, huge, huge, {}), ShapeError);
  // A tile size whose t^2 wraps to 0: r x 0 matrices are no encoders for it.
  stl::Encoders wrapped = unit;
  wrapped.tile = Index(1) << 32;
  for (Eigen::MatrixXd* m : {&wrapped.encode_signal, &wrapped.encode_weight, &wrapped.decode})
    m->resize(4, 0);
  BOOST_CHECK_THROW(stl::validate(wrapped), ShapeError);
}

// A chain through a boundary without features is the zero map: Y = beta Y, which with
// beta = 0 overwrites NaNs in Y (the GPU side: tests/gpu/test_stl_gpu.cpp).
BOOST_AUTO_TEST_CASE(a_chain_with_an_empty_inner_dimension_is_zero) {
  const StrassenTileChain<double> chain({StrassenTile<double>(random_encoders(2, 3), 4, 0, {}),
                                         StrassenTile<double>(random_encoders(2, 3), 0, 6, {})});
  const HostMatrix<double> X = random_matrix<double>(6, 5), Y0 = random_matrix<double>(4, 5);
  HostMatrix<double> Y = Y0;
  chain.apply(Op::NoTrans, view(X), view(Y), 2.0, -0.5);
  BOOST_TEST(relative_error(Y, HostMatrix<double>(-0.5 * Y0)) == 0.0);
  Y.setConstant(std::numeric_limits<double>::quiet_NaN());
  chain.apply(Op::NoTrans, view(X), view(Y));
  BOOST_TEST(Y.isZero(0.0));
}

BOOST_AUTO_TEST_SUITE_END()
