// KS factors and chains on the GPU, every algorithm, against the CPU application (itself
// tested against the dense matrix in tests/unit/test_ks.cpp).
#include <limits>

#include "gpu_reference.hpp"
#include "operators/ks/ks_device.hpp"
#include "operators/ks/ks_mma_tile.hpp"
#include "runtime/shared_memory.hpp"

using namespace strop;
using namespace strop::testing;

namespace {
const std::vector<KSPattern> kPatterns = {
    {1, 1, 1, 1},   {2, 3, 5, 4},   {3, 4, 2, 1},   {1, 2, 2, 8},   {4, 7, 9, 5},
    {1, 48, 48, 3}, {2, 64, 16, 2}, {2, 33, 70, 1}, {1, 96, 24, 1}, {8, 2, 2, 16}};

// Every op and layout pair (StridedGemm too: batch-first operands with d > 1 go through
// batch-contiguous copies), alpha and beta, on the patterns above.
template <class T>
void check_algorithm(KSAlgorithm algorithm, Index batch) {
  std::mt19937 gen(11);
  for (const KSPattern& p : kPatterns) {
    if (algorithm == KSAlgorithm::Dense && p.rows() * p.cols() > 4096 * 4096) continue;
    BOOST_TEST_CONTEXT("pattern " << p << " algorithm " << to_string(algorithm)) {
      const KSFactor<T> K = KSFactor<T>::random(p, gen);
      KSAlgorithmGuard guard(algorithm);
      check_gpu_against_cpu(K, batch);
    }
  }
}
// Three 300-signal slices of a large batch's result against the CPU (the signals are
// independent; checking all of them would cost more host time than the run).
template <class T>
void check_slices(const KSFactor<float>& K, const HostMatrix<T>& x, const HostMatrix<T>& got,
                  double tol) {
  const Index batch = x.cols(), width = 300;
  for (Index first : {Index(0), batch / 2, batch - width}) {
    const HostMatrix<float> xs = x.middleCols(first, width).template cast<float>();
    HostMatrix<float> expected(K.rows(), width);
    K.apply(Op::NoTrans, view(xs), view(expected));
    const HostMatrix<float> g = got.middleCols(first, width).template cast<float>();
    BOOST_TEST_CONTEXT("signals " << first << " .. " << first + width) {
      check_error_within(double((g - expected).norm()) / double(expected.norm()), tol);
    }
  }
}
}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_ks, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(fused_kernel_any_pattern_and_batch, T, ScalarTypes) {
  for (Index batch : {1, 7, 130})
    check_algorithm<T>(KSAlgorithm::Fused, batch);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(strided_gemm, T, ScalarTypes) {
  for (Index batch : {1, 7, 130})
    check_algorithm<T>(KSAlgorithm::StridedGemm, batch);
}

// StridedGemm where cuBLAS cannot address the groups in place (batch-first, d > 1): the
// copies in and out keep beta = 0 from reading Y (NaN there stays out), for every element
// size the copy kernel moves.
BOOST_AUTO_TEST_CASE_TEMPLATE(strided_gemm_through_copies, T, ScalarTypes) {
  std::mt19937 gen(13);
  const KSFactor<T> K = KSFactor<T>::random({3, 40, 36, 5}, gen);
  const HostMatrix<T> x = random_matrix<T>(K.cols(), 70);
  HostMatrix<T> expected(K.rows(), 70);
  K.apply(Op::NoTrans, view(x), view(expected));
  const KSAlgorithmGuard guard(KSAlgorithm::StridedGemm);
  for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
    const DeviceMatrix<T> xd = to_device(x, Layout::ColMajor);
    DeviceMatrix<T> yd =
        to_device(HostMatrix<T>(HostMatrix<T>::Constant(K.rows(), 70, T(std::nan("")))), ly);
    BOOST_TEST(
        !ks_strided_gemm_supported(K.pattern(), Op::NoTrans, xd.view(), ConstView<T>(yd.view())));
    K.apply(Op::NoTrans, xd.view(), yd.view(), T(1), T(0));
    BOOST_TEST(relative_error(yd.to_host(), expected) <= tolerance<T>(K.cols()),
               "Y " << to_string(ly));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(small_batch_kernel, T, ScalarTypes) {
  // 1, 3, 7 signals (one pass of 1, 4, 8 accumulators), 20: a pass of 16 and one of 4.
  for (Index batch : {1, 3, 7, 20})
    check_algorithm<T>(KSAlgorithm::SmallBatch, batch);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(bmm_and_dense_baselines, T, ScalarTypes) {
  check_algorithm<T>(KSAlgorithm::Bmm, 9);
  check_algorithm<T>(KSAlgorithm::Dense, 9);
  check_algorithm<T>(KSAlgorithm::Auto, 70);
  check_algorithm<T>(KSAlgorithm::Auto, 3);  // SmallBatch on large blocks in ColMajor
  check_algorithm<T>(KSAlgorithm::Auto, 1);  // SmallBatch on every large-block pattern
}

BOOST_AUTO_TEST_CASE(large_batch_fp32) {
  std::mt19937 gen(5);
  KSAlgorithmGuard guard(KSAlgorithm::Fused);
  const KSFactor<float> K = KSFactor<float>::random({2, 8, 8, 4}, gen);
  check_gpu_against_cpu(K, 25088);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(chains_and_expressions_on_the_device, T, ScalarTypes) {
  std::mt19937 gen(3);
  const auto butterfly = KSChain<T>::random(butterfly_patterns(256), gen);
  check_gpu_against_cpu(butterfly, 33, tolerance<T>(256));
  const auto monarch = KSChain<T>::random(monarch_patterns(64, 32, 8), gen);
  check_gpu_against_cpu(monarch, 5);
  const Dense<T> D(random_matrix<T>(64, 32));
  check_gpu_against_cpu(random_scalar<T>() * monarch + D, 6);
}

// The fused multi-factor kernel (what Auto runs for chains of square-block factors):
// radix 2, 4 and mixed radix, a > 1 and d > 1 factors, batch tails of every tile size,
// every op, both layouts of X and Y, alpha and beta.
BOOST_AUTO_TEST_CASE_TEMPLATE(fused_chain_kernel, T, ScalarTypes) {
  std::mt19937 gen(17);
  const std::vector<std::vector<KSPattern>> chains = {
      butterfly_patterns(16),
      butterfly_patterns(1024),
      {{1, 4, 4, 64}, {4, 4, 4, 16}, {16, 4, 4, 4}, {64, 4, 4, 1}},
      {{1, 2, 2, 128}, {2, 8, 8, 16}, {16, 16, 16, 1}},
      {{3, 2, 2, 5}, {6, 5, 5, 1}}};
  for (const auto& patterns : chains) {
    const auto chain = KSChain<T>::random(patterns, gen);
    BOOST_TEST_CONTEXT("chain of " << patterns.size() << " factors, n = " << chain.rows()) {
      BOOST_TEST(detail::ks_chain_fusable(patterns, sizeof(T)));
      for (Index batch : {1, 7, 37, 300})
        check_gpu_against_cpu(chain, batch, tolerance<T>(chain.rows()));
    }
  }
  // Square dyadic of 4096: the largest butterfly that fuses in single precision.
  if constexpr (std::is_same_v<T, float>) {
    const auto patterns = butterfly_patterns(4096);
    BOOST_TEST(detail::ks_chain_fusable(patterns, sizeof(T)));
    check_gpu_against_cpu(KSChain<T>::random(patterns, gen), 45, tolerance<T>(4096));
  }
}

// Half and bfloat16 signals through a float factor (apply_reduced_precision): every
// algorithm with a 16-bit path, every op and layout pair (mixed too), batches across the
// kernel's tiles, alpha = 0.5 and beta = -2 (and beta = 0 over NaN: Y is not read). The
// reference is the float CPU application of the factor with its values rounded to the
// storage type, to the same (representable) inputs. Each output may differ from it by a
// rounding of the product (Bmm rounds its intermediate) and one of the result, plus fp32
// accumulation: 2u (0.5 |op(K)| |x| + 2 |y0|) elementwise; a wrong index or tile is off by
// the size of the values.
using HalfTypes = boost::mpl::list<half, bfloat16>;

namespace {
// K with values exactly representable in S, and |K| for the error bound.
template <class S>
std::pair<KSFactor<float>, KSFactor<float>> representable_factor(const KSPattern& p,
                                                                 std::mt19937& gen) {
  std::vector<float> values = KSFactor<float>::random(p, gen).values(), magnitudes(values.size());
  for (std::size_t e = 0; e < values.size(); ++e) {
    values[e] = float(S(values[e]));
    magnitudes[e] = std::abs(values[e]);
  }
  return {KSFactor<float>(p, values), KSFactor<float>(p, magnitudes)};
}

// One 16-bit application (the thread's forced algorithm and tile) against the bound above.
template <class S>
void check_sixteen_bit(const KSFactor<float>& K, const KSFactor<float>& K_abs, Op op, Layout lx,
                       Layout ly, Index batch) {
  const double u = unit_roundoff_v<S>;
  const Index in = op == Op::NoTrans ? K.cols() : K.rows();
  const Index out = op == Op::NoTrans ? K.rows() : K.cols();
  const HostMatrix<S> xs = random_matrix<float>(in, batch).cast<S>();
  const HostMatrix<S> y0s = random_matrix<float>(out, batch).cast<S>();
  const HostMatrix<float> x = xs.template cast<float>();
  HostMatrix<float> expected = y0s.template cast<float>();
  K.apply(op, view(x), view(expected), 0.5f, -2.0f);
  HostMatrix<float> scale = 2.0f * y0s.template cast<float>().cwiseAbs();
  K_abs.apply(op, view(HostMatrix<float>(x.cwiseAbs())), view(scale), 0.5f, 1.0f);
  const DeviceMatrix<S> xd = to_device(xs, lx);
  DeviceMatrix<S> yd = to_device(y0s, ly);
  BOOST_TEST_CONTEXT(to_string(op)
                     << ", X " << to_string(lx) << ", Y " << to_string(ly) << ", B = " << batch) {
    apply_reduced_precision<S>(K, op, xd.view(), yd.view(), 0.5f, -2.0f);
    const HostMatrix<float> got = yd.to_host().template cast<float>();
    const HostMatrix<float> excess = (got - expected).cwiseAbs() - float(2 * u) * scale;
    BOOST_TEST(excess.maxCoeff() <= 0.0f);
  }
}
}  // namespace
BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_signals, S, HalfTypes) {
  std::vector<KSPattern> patterns = kPatterns;
  // The tensor-core kernel's tile cases: runs of d = 4 and 8 features (ColMajor), d = 12
  // (a partial group tile), several chunks of l and tiles of k, tails everywhere.
  patterns.insert(
      patterns.end(),
      {{1, 64, 64, 4}, {2, 40, 17, 12}, {1, 128, 72, 8}, {1, 200, 136, 1}, {3, 16, 16, 6}});
  std::mt19937 gen(61);
  const double u = unit_roundoff_v<S>;
  for (const KSPattern& p : patterns) {
    const auto [K, K_abs] = representable_factor<S>(p, gen);
    for (KSAlgorithm algorithm : {KSAlgorithm::Auto, KSAlgorithm::Fused, KSAlgorithm::StridedGemm,
                                  KSAlgorithm::Bmm, KSAlgorithm::Dense}) {
      if (algorithm == KSAlgorithm::Dense && p.rows() * p.cols() > 2048 * 2048) continue;
      const KSAlgorithmGuard guard(algorithm);
      BOOST_TEST_CONTEXT("pattern " << p << " " << to_string(algorithm)) {
        for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint})
          for (Layout lx : {Layout::ColMajor, Layout::RowMajor})
            for (Layout ly : {Layout::ColMajor, Layout::RowMajor})
              for (Index batch : {1, 7, 300})
                check_sixteen_bit<S>(K, K_abs, op, lx, ly, batch);
      }
    }
  }
  // beta = 0 never reads Y (NaN there stays out), and SmallBatch has no 16-bit version.
  const KSFactor<float> K = KSFactor<float>::random({2, 48, 40, 3}, gen);
  const HostMatrix<S> xs = random_matrix<float>(K.cols(), 40).cast<S>();
  HostMatrix<float> expected(K.rows(), 40);
  K.apply(Op::NoTrans, view(HostMatrix<float>(xs.template cast<float>())), view(expected));
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    const DeviceMatrix<S> xd = to_device(xs, layout);
    DeviceMatrix<S> yd =
        to_device(HostMatrix<S>(HostMatrix<S>::Constant(K.rows(), 40, S(std::nanf("")))), layout);
    apply_reduced_precision<S>(K, Op::NoTrans, xd.view(), yd.view());
    BOOST_TEST(relative_error(HostMatrix<float>(yd.to_host().template cast<float>()), expected) <=
               4 * u);  // the values rounded on the device too
    const KSAlgorithmGuard guard(KSAlgorithm::SmallBatch);
    BOOST_CHECK_THROW(apply_reduced_precision<S>(K, Op::NoTrans, xd.view(), yd.view()),
                      DeviceError);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_alpha_zero_reads_no_signal, S, HalfTypes) {
  // As in BLAS (and in apply()): alpha = 0 gives beta Y, NaN in X stays out. Every family's
  // 16-bit path starts in reduced_done_without_device, which handles it; KS stands for all.
  std::mt19937 gen(62);
  const KSFactor<float> K = KSFactor<float>::random({2, 48, 40, 3}, gen);
  HostMatrix<S> xs = random_matrix<float>(K.cols(), 9).cast<S>();
  xs(5, 3) = S(std::nanf(""));
  const HostMatrix<S> y0s = random_matrix<float>(K.rows(), 9).cast<S>();
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    const DeviceMatrix<S> xd = to_device(xs, layout);
    DeviceMatrix<S> yd = to_device(y0s, layout);
    apply_reduced_precision<S>(K, Op::NoTrans, xd.view(), yd.view(), 0.0f, -2.0f);
    const HostMatrix<float> got = yd.to_host().template cast<float>();
    BOOST_TEST(got.allFinite());
    // -2 y0 is exact in both storage types.
    BOOST_TEST(relative_error(got, HostMatrix<float>(-2.0f * y0s.template cast<float>())) == 0.0);
  }
}

// Every tile configuration of the tensor-core kernel (the candidates tuning measures, for
// either memory order, each forced on both layouts), on patterns whose groups span several
// tiles of k and n, with tails, and d of 1, 2, 4, 6, 8, 12.
BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_tile_configurations, S, HalfTypes) {
  std::mt19937 gen(71);
  const KSAlgorithmGuard fused(KSAlgorithm::Fused);
  for (const KSPattern& p : std::vector<KSPattern>{{1, 200, 72, 1},
                                                   {1, 72, 136, 4},
                                                   {2, 40, 17, 12},
                                                   {1, 136, 48, 8},
                                                   {1, 72, 136, 2},
                                                   {3, 40, 24, 6}}) {
    const auto [K, K_abs] = representable_factor<S>(p, gen);
    for (Op op : {Op::NoTrans, Op::Trans})
      for (Index batch : {7, 300}) {
        const Index out = op == Op::NoTrans ? p.b : p.c;
        std::vector<detail::KSMmaTile> tiles =
            detail::ks_mma_tile_candidates(out, p.d, batch, true);
        for (const auto& t : detail::ks_mma_tile_candidates(out, p.d, batch, false))
          if (std::find(tiles.begin(), tiles.end(), t) == tiles.end()) tiles.push_back(t);
        for (const detail::KSMmaTile& t : tiles) {
          const detail::KSMmaTileGuard tile(t);
          BOOST_TEST_CONTEXT("pattern " << p << " tile " << to_string(t)) {
            for (Layout lx : {Layout::ColMajor, Layout::RowMajor})
              for (Layout ly : {Layout::ColMajor, Layout::RowMajor})
                check_sixteen_bit<S>(K, K_abs, op, lx, ly, batch);
          }
        }
      }
  }
}

// Devices whose blocks have less shared memory than an H100's, emulated on this one: the
// tensor-core kernel takes smaller tiles (the pipelined ones need 144-224 KB, ks_mma.cu's
// 64 x 64 warp tiles 130 KB), the fused chain kernel fewer signals per tile. The heuristic's
// tile, every tile tuning would measure and Auto's choice all fit and match the CPU.
BOOST_AUTO_TEST_CASE_TEMPLATE(kernels_on_devices_with_less_shared_memory, S, HalfTypes) {
  std::mt19937 gen(83);
  for (const std::size_t cap : kSmallerSharedMemory) {
    const detail::SharedMemoryCapForTesting capped(cap);
    BOOST_TEST_CONTEXT(cap << " bytes per block") {
      BOOST_TEST(detail::shared_memory_for_plans() == cap);
      // Pipelined tiles of 8, 4 and 2 groups on an H100.
      for (const KSPattern& p :
           std::vector<KSPattern>{{1, 72, 136, 8}, {1, 136, 48, 4}, {3, 96, 96, 6}}) {
        const auto [K, K_abs] = representable_factor<S>(p, gen);
        for (Op op : {Op::NoTrans, Op::Trans}) {
          const Index out = op == Op::NoTrans ? p.b : p.c, batch = 300;
          BOOST_TEST_CONTEXT("pattern " << p) {
            BOOST_TEST(detail::ks_mma_heuristic_tile(out, p.d, batch, false, cap).shared_bytes() <=
                       cap);
            check_sixteen_bit<S>(K, K_abs, op, Layout::ColMajor, Layout::ColMajor, batch);
            const KSAlgorithmGuard fused(KSAlgorithm::Fused);
            check_sixteen_bit<S>(K, K_abs, op, Layout::ColMajor, Layout::ColMajor, batch);
            for (const detail::KSMmaTile& t :
                 detail::ks_mma_tile_candidates(out, p.d, batch, false, cap)) {
              BOOST_TEST(t.shared_bytes() <= cap);
              const detail::KSMmaTileGuard tile(t);
              check_sixteen_bit<S>(K, K_abs, op, Layout::ColMajor, Layout::ColMajor, batch);
            }
          }
        }
      }
      // The largest butterfly the chain kernel fuses in single precision (16 KB a signal).
      if constexpr (std::is_same_v<S, half>) {
        const auto patterns = butterfly_patterns(4096);
        BOOST_TEST(detail::ks_chain_fusable(patterns, sizeof(float)));
        check_gpu_against_cpu(KSChain<float>::random(patterns, gen), 45, tolerance<float>(4096));
      }
    }
  }
}

// The pipelined kernel's persistent launch (short products, more tiles than
// multiprocessors: each block walks several tiles and copies the next one's first chunks
// during its epilogue), with beta != 0 (y read per output) and beta = 0 over NaN.
BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_persistent_tiles, S, HalfTypes) {
  std::mt19937 gen(79);
  const KSAlgorithmGuard fused(KSAlgorithm::Fused);
  const Index batch = 64 * 140 + 5;  // 141 signal tiles of 64, the last one partial
  for (const KSPattern& p :
       std::vector<KSPattern>{{2, 48, 64, 16}, {1, 72, 96, 12}, {1, 96, 48, 6}}) {
    const auto [K, K_abs] = representable_factor<S>(p, gen);
    BOOST_TEST_CONTEXT("pattern " << p) {
      check_sixteen_bit<S>(K, K_abs, Op::NoTrans, Layout::ColMajor, Layout::ColMajor, batch);
      const HostMatrix<S> xs = random_matrix<float>(K.cols(), batch).template cast<S>();
      const HostMatrix<float> x = xs.template cast<float>();
      HostMatrix<float> expected = HostMatrix<float>::Zero(K.rows(), batch);
      K.apply(Op::NoTrans, view(x), view(expected), 1.0f, 0.0f);
      HostMatrix<float> scale = HostMatrix<float>::Zero(K.rows(), batch);
      K_abs.apply(Op::NoTrans, view(HostMatrix<float>(x.cwiseAbs())), view(scale), 1.0f, 0.0f);
      const DeviceMatrix<S> xd = to_device(xs, Layout::ColMajor);
      HostMatrix<S> nan_y(K.rows(), batch);
      nan_y.setConstant(S(std::numeric_limits<float>::quiet_NaN()));
      DeviceMatrix<S> yd = to_device(nan_y, Layout::ColMajor);
      apply_reduced_precision<S>(K, Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.0f);
      const HostMatrix<float> got = yd.to_host().template cast<float>();
      const float u = float(unit_roundoff_v<S>);
      BOOST_TEST(((got - expected).cwiseAbs() - 2 * u * scale).maxCoeff() <= 0.0f);
    }
  }
}

// Auto with tuning on: each problem is measured once over the algorithms and tiles, the
// choice is cached under a key naming the GPU, dtype, op, layouts, batch and pattern, and
// the result is right whatever was chosen.
BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_tuning, S, HalfTypes) {
  std::mt19937 gen(73);
  clear_tuned_choices();
  set_tuning_enabled(true);
  const std::vector<KSPattern> patterns = {{1, 64, 64, 8}, {2, 96, 48, 1}, {4, 4, 4, 16}};
  for (const KSPattern& p : patterns) {
    const auto [K, K_abs] = representable_factor<S>(p, gen);
    for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
      const std::size_t before = tuned_keys("ks|").size();
      check_sixteen_bit<S>(K, K_abs, Op::NoTrans, layout, layout, 300);
      BOOST_TEST(tuned_keys("ks|").size() == before + 1);
      check_sixteen_bit<S>(K, K_abs, Op::NoTrans, layout, layout, 300);  // from the cache
      BOOST_TEST(tuned_keys("ks|").size() == before + 1);
    }
  }
  const auto choice = tuned_choice(detail::concat(
      "ks|", device_name(0), "|", reduced_precision_name_v<S>, "|", to_string(Op::NoTrans),
      "|X=", to_string(Layout::ColMajor), "|Y=", to_string(Layout::ColMajor), "|B=300|1,64,64,8"));
  BOOST_REQUIRE(choice.has_value());
  BOOST_TEST_MESSAGE("tuned choice for (1,64,64,8), ColMajor, B = 300: " << *choice);
  const bool known = *choice == "bmm" || *choice == "dense" || *choice == "strided_gemm" ||
                     choice->rfind("fused:tj8.", 0) == 0;
  BOOST_TEST(known, *choice);
  set_tuning_enabled(false);
  clear_tuned_choices();
}

// Float chains on half/bfloat16 signals: the fused multi-factor kernel (Auto, butterflies)
// rounds each output once; factor by factor (forced, or a chain that does not fuse) rounds
// every intermediate, so its bound grows with the number of factors. Against the float CPU
// application to the same inputs.
BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_chains, S, HalfTypes) {
  std::mt19937 gen(67);
  const double u = unit_roundoff_v<S>;
  const std::vector<std::vector<KSPattern>> chains = {
      butterfly_patterns(256), {{1, 48, 40, 4}, {2, 20, 24, 4}}, {{1, 96, 96, 1}, {16, 6, 4, 1}}};
  for (const auto& patterns : chains) {
    const auto K = KSChain<float>::random(patterns, gen);
    for (KSAlgorithm algorithm : {KSAlgorithm::Auto, KSAlgorithm::Fused})
      for (Op op : {Op::NoTrans, Op::Trans})
        for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
          const KSAlgorithmGuard guard(algorithm);
          const Index in = op == Op::NoTrans ? K.cols() : K.rows();
          const Index out = op == Op::NoTrans ? K.rows() : K.cols();
          const HostMatrix<S> xs = random_matrix<float>(in, 37).cast<S>();
          const HostMatrix<S> y0s = random_matrix<float>(out, 37).cast<S>();
          const double error = reduced_precision_error<S>(K, op, xs, y0s, layout, layout);
          const bool fused = algorithm == KSAlgorithm::Auto &&
                             detail::ks_chain_fusable(K.patterns(), sizeof(float));
          BOOST_TEST_CONTEXT(K.size()
                             << " factors, " << to_string(algorithm) << " " << to_string(op) << " "
                             << to_string(layout) << (fused ? " (fused kernel)" : "")) {
            // Factor by factor: the weights and each intermediate rounded too.
            const double bound = fused ? 2 * u : 4 * double(K.size()) * u;
            check_error_within(error, bound);
          }
        }
  }
}

// Tuning on: the algorithms that apply are measured once per problem (into scratch memory:
// Y keeps its beta term), the fastest is cached and gives the same product; another batch
// size is another problem.
BOOST_AUTO_TEST_CASE(tuned_algorithm_is_cached_and_correct) {
  std::mt19937 gen(29);
  const auto K = KSFactor<float>::random({2, 32, 48, 2}, gen);
  const HostMatrix<float> dense = K.to_dense();
  clear_tuned_choices();
  set_tuning_enabled(true);
  for (Index batch : {Index(64), Index(64), Index(3)}) {
    const HostMatrix<float> x = random_matrix<float>(K.cols(), batch);
    const HostMatrix<float> y0 = random_matrix<float>(K.rows(), batch);
    const DeviceMatrix<float> xd = to_device(x, Layout::RowMajor);
    DeviceMatrix<float> yd = to_device(y0, Layout::RowMajor);
    K.apply(Op::NoTrans, xd.view(), yd.view(), 2.0f, -1.0f);
    check_error_within(relative_error(yd.to_host(), HostMatrix<float>(2.0f * dense * x - y0)),
                       tolerance<float>(K.cols()));
  }
  BOOST_TEST(tuned_keys("ks|").size() == 2u);  // B = 64 once, B = 3 once
  set_tuning_enabled(false);
  clear_tuned_choices();
}

// More signal tiles than gridDim.y allows (65535): the fused and tensor-core kernels threw
// DeviceError ("grid too large") where they now run the batch in slices of columns.
BOOST_AUTO_TEST_CASE(fused_kernel_more_signal_tiles_than_grid_y) {
  // Pattern (1,16,8,2) takes tiles of 64 signals: 65536 * 64 + 3 signals need 65537 tiles.
  std::mt19937 gen(7);
  const KSFactor<float> K = KSFactor<float>::random({1, 16, 8, 2}, gen);
  const Index batch = Index(65536) * 64 + 3;
  const HostMatrix<float> x = random_matrix<float>(K.cols(), batch);
  const DeviceMatrix<float> xd = to_device(x, Layout::RowMajor);
  DeviceMatrix<float> yd(K.rows(), batch, Layout::RowMajor);
  const KSAlgorithmGuard guard(KSAlgorithm::Fused);
  K.apply(Op::NoTrans, xd.view(), yd.view());
  check_slices<float>(K, x, yd.to_host(), 1e-5);
}

BOOST_AUTO_TEST_CASE(mma_kernel_more_signal_tiles_than_grid_y) {
  // The forced tile tj1.k16x8.n32x1 (32 signals) on pattern (1,128,16,1), half signals.
  std::mt19937 gen(8);
  std::vector<float> values = KSFactor<float>::random({1, 128, 16, 1}, gen).values();
  for (float& v : values)
    v = float(half(v));  // representable: only the accumulation and the output round
  const KSFactor<float> K({1, 128, 16, 1}, values);
  const Index batch = Index(65536) * 32 + 5;
  const HostMatrix<half> x = random_matrix<float>(K.cols(), batch).cast<half>();
  const DeviceMatrix<half> xd = to_device(x, Layout::RowMajor);
  DeviceMatrix<half> yd(K.rows(), batch, Layout::RowMajor);
  const KSAlgorithmGuard guard(KSAlgorithm::Fused);
  const detail::KSMmaTileGuard tile(detail::parse_ks_mma_tile("tj1.k16x8.n32x1"));
  apply_reduced_precision<half>(K, Op::NoTrans, xd.view(), yd.view());
  check_slices<half>(K, x, yd.to_host(), 2e-3);
}

BOOST_AUTO_TEST_SUITE_END()
