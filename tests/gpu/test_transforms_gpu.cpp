// Fast transforms and permutations on the GPU against the CPU path (itself tested against
// naive transforms and FFTW in tests/unit/test_transforms.cpp): the chains go through the
// fused multi-factor kernel where they fit, the digit reversal through the row gather.
#include <limits>
#include "gpu_reference.hpp"

#include "operators/ks/ks_device.hpp"
#include "operators/transforms/fft_device.hpp"
#include "operators/transforms/hadamard_device.hpp"
#include "operators/transforms/hadamard_mma.hpp"
#include "runtime/shared_memory.hpp"

using namespace strop;
using namespace strop::testing;

namespace {
using DftTypes = boost::mpl::list<std::complex<float>, std::complex<double>>;
using HalfTypes = boost::mpl::list<half, bfloat16>;

// Sizes that exercise each plan of the Walsh-Hadamard kernel: registers only (n <= 32), two
// to three passes through shared memory, several signals per tile, the digit of m alone and
// after power-of-two passes, one whole signal of 2^15 and of 12 x 2^12 per tile, and, with
// batch-contiguous signals, two launches (above 2048 floats or 1024 16-bit values).
const Index kHadamardKernelSizes[] = {1,  2,  32,      64,       1024,      4096,     32768,
                                      12, 40, 28 * 32, 12 * 512, 28 * 1024, 12 * 4096};

// Relative error of half/bfloat16 signals through apply_reduced_precision against the float
// CPU application to the same (representable) values, alpha = 0.5 and beta = -2.
template <class Storage>
double reduced_error_vs_float(const KSChain<float>& A, Op op, Index batch, Layout lx, Layout ly) {
  const HostMatrix<Storage> xs = random_matrix<float>(A.cols(), batch).cast<Storage>();
  const HostMatrix<Storage> y0s = random_matrix<float>(A.rows(), batch).cast<Storage>();
  HostMatrix<float> expected = y0s.template cast<float>();
  A.apply(op, view(HostMatrix<float>(xs.template cast<float>())), view(expected), 0.5f, -2.0f);
  const DeviceMatrix<Storage> xd = to_device(xs, lx);
  DeviceMatrix<Storage> yd = to_device(y0s, ly);
  apply_reduced_precision(A, op, xd.view(), yd.view(), 0.5f, -2.0f);
  return relative_error(HostMatrix<float>(yd.to_host().template cast<float>()), expected);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_transforms, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(permutation_gathers_rows, T, ScalarTypes) {
  std::mt19937 gen(23);
  std::vector<Index> perm(37);
  std::iota(perm.begin(), perm.end(), Index(0));
  std::shuffle(perm.begin(), perm.end(), gen);
  // Exact: a permutation only moves values (alpha and beta add one rounding each).
  check_gpu_against_cpu(Permutation<T>(perm), 9);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(hadamard_and_dct_on_the_device, T, ScalarTypes) {
  for (Index n : {256, 1024, 12 * 64, 28 * 16}) {
    for (int factors : {0, kFullRadix2Chain}) {
      BOOST_TEST_CONTEXT("n = " << n << ", factors " << factors) {
        const KSChain<T> h = hadamard<T>(n, {Normalization::Orthonormal, factors});
        // H_28's radix is above the fused kernel's 16: that one goes factor by factor.
        BOOST_TEST(detail::ks_chain_fusable(h.patterns(), sizeof(T)) == (n != 28 * 16));
        check_gpu_against_cpu(h, 19, tolerance<T>(n));
        if (n == 12 * 64 || n == 28 * 16) continue;  // the DCT needs n = m 2^k, m odd
        check_gpu_against_cpu(dct<T>(n, {Normalization::Orthonormal, factors}), 19,
                              tolerance<T>(n));
        check_gpu_against_cpu(inverse_dct<T>(n, {Normalization::Orthonormal, factors}), 19,
                              tolerance<T>(n));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dft_on_the_device, T, DftTypes) {
  for (Index n : {64, 1024, 3 * 128}) {
    BOOST_TEST_CONTEXT("n = " << n) {
      check_gpu_against_cpu(dft<T>(n, {Normalization::Orthonormal}), 21, tolerance<T>(n));
      check_gpu_against_cpu(inverse_dft<T>(n, {Normalization::Orthonormal}), 21, tolerance<T>(n));
    }
  }
}

BOOST_AUTO_TEST_CASE(fft_kernel_matches_the_cpu) {
  // Every size the Stockham kernel takes: each first-stage radix, several signals per block
  // with a partial last block, blocks of 512 and 1024 threads, 2^15 in two halves; both
  // directions, every op and layout, against the host FFT.
  using T = std::complex<float>;
  for (Index n = 16; n <= detail::kFftDeviceMaxSize; n *= 2) {
    BOOST_TEST_CONTEXT("n = " << n) {
      BOOST_TEST(detail::fft_device_supported(n));
      check_gpu_against_cpu(dft<T>(n), 37, tolerance<T>(n));
      check_gpu_against_cpu(inverse_dft<T>(n, {Normalization::Orthonormal}), 5, tolerance<T>(n));
    }
  }
  BOOST_TEST(!detail::fft_device_supported(3 * 128));
  BOOST_TEST(!detail::fft_device_supported(2 * detail::kFftDeviceMaxSize));
  BOOST_TEST(!detail::fft_device_supported(8));
}

BOOST_AUTO_TEST_CASE(fft_kernel_takes_strided_views_and_skips_y_without_beta) {
  // Signals three values into a taller matrix, in both layouts; Y full of NaN, which beta = 0
  // must not read; the rows around the view stay untouched.
  using T = std::complex<float>;
  const Index n = 4096, batch = 11;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto f = dft<T>(n, {Normalization::Orthonormal});
  const HostMatrix<T> x = random_matrix<T>(n + 3, batch);
  HostMatrix<T> expected(n, batch);
  f.apply(Op::NoTrans, view(HostMatrix<T>(x.block(3, 0, n, batch))), view(expected));
  const HostMatrix<T> all_nan = HostMatrix<T>::Constant(n + 3, batch, T(nan, nan));
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    const DeviceMatrix<T> xd = to_device(x, layout);
    DeviceMatrix<T> yd = to_device(all_nan, layout);
    f.apply(Op::NoTrans, xd.view().row_block(3, n), yd.view().row_block(3, n));
    const HostMatrix<T> got = yd.to_host();
    BOOST_TEST_CONTEXT(to_string(layout)) {
      check_error_within(relative_error(HostMatrix<T>(got.block(3, 0, n, batch)), expected),
                         tolerance<T>(n));
      BOOST_TEST(got.topRows(3).array().isNaN().all());
    }
  }
}

BOOST_AUTO_TEST_CASE(hadamard_kernel_matches_the_cpu_chain) {
  for (Index n : kHadamardKernelSizes)
    for (bool inverse : {false, true}) {
      const TransformOptions options{inverse ? Normalization::Backward
                                             : Normalization::Orthonormal};
      const KSChain<float> h =
          inverse ? inverse_hadamard<float>(n, options) : hadamard<float>(n, options);
      BOOST_TEST_CONTEXT("n = " << n << (inverse ? ", inverse" : "")) {
        BOOST_REQUIRE(h.hadamard_form().has_value());
        check_gpu_against_cpu(h, n >= 4096 ? 5 : 37, tolerance<float>(n));
      }
    }
}

BOOST_AUTO_TEST_CASE(hadamard_kernel_plans_of_large_batches) {
  // With 2^23 values in all the kernel takes its long runs (up to 128 values per thread, one
  // pass fewer) from n = 2048 to 16384 and for 12 x 2^11, and 32 values per thread above;
  // the small batches of the other cases take short runs. Contiguous signals, float and half.
  for (Index n :
       {Index(2048), Index(4096), Index(8192), Index(16384), Index(12 * 2048), Index(32768)}) {
    const Index batch = (Index(1) << 23) / n;
    const KSChain<float> h = hadamard<float>(n, {Normalization::Orthonormal});
    BOOST_TEST_CONTEXT("n = " << n << ", B = " << batch) {
      for (Op op : {Op::NoTrans, Op::Trans}) {
        const HostMatrix<float> x = random_matrix<float>(n, batch);
        HostMatrix<float> expected(n, batch);
        h.apply(op, view(x), view(expected));
        const DeviceMatrix<float> xd = to_device(x);
        DeviceMatrix<float> yd(n, batch);
        h.apply(op, xd.view(), yd.view());
        check_error_within(relative_error(yd.to_host(), expected), tolerance<float>(n));
      }
      check_error_within(
          reduced_error_vs_float<half>(h, Op::NoTrans, batch, Layout::ColMajor, Layout::ColMajor),
          2 * unit_roundoff_v<half>);
    }
  }
}

BOOST_AUTO_TEST_CASE(hadamard_kernel_takes_strided_and_misaligned_views) {
  // Signals that start one value into a taller matrix (no 16-byte alignment) with a column
  // stride of n + 1, and batch-contiguous signals with a row stride above the batch.
  const Index n = 2048, batch = 9;
  const KSChain<float> h = hadamard<float>(n, {Normalization::Orthonormal});
  const HostMatrix<float> x = random_matrix<float>(n + 1, batch + 3);
  HostMatrix<float> expected(n, batch);
  h.apply(Op::NoTrans, view(HostMatrix<float>(x.block(1, 0, n, batch))), view(expected));
  // Y's padding holds values that must survive (and leaves no device memory unwritten, which
  // compute-sanitizer's initcheck would report when the whole matrix is copied back).
  const HostMatrix<float> y0 = random_matrix<float>(n + 1, batch + 3);
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    const DeviceMatrix<float> xd = to_device(x, layout);
    DeviceMatrix<float> yd = to_device(y0, layout);
    const ConstView<float> xv = xd.view().row_block(1, n).col_block(0, batch);
    const MatrixView<float> yv = yd.view().row_block(1, n).col_block(0, batch);
    h.apply(Op::NoTrans, xv, yv);
    HostMatrix<float> whole = yd.to_host();
    const HostMatrix<float> got = whole.block(1, 0, n, batch);
    BOOST_TEST_CONTEXT(to_string(layout)) {
      check_error_within(relative_error(got, expected), tolerance<float>(n));
      whole.block(1, 0, n, batch) = y0.block(1, 0, n, batch);
      BOOST_TEST((whole.array() == y0.array()).all());
    }
  }
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_hadamard_match_the_float_path) {
  for (Index n : kHadamardKernelSizes)
    for (Op op : {Op::NoTrans, Op::Trans})
      for (Layout lx : {Layout::ColMajor, Layout::RowMajor})
        for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
          const KSChain<float> h = hadamard<float>(n, {Normalization::Orthonormal});
          const Index batch = n >= 4096 ? 5 : 37;
          BOOST_TEST_CONTEXT("n = " << n << ", " << to_string(op) << " X " << to_string(lx) << " Y "
                                    << to_string(ly)) {
            // fp32 arithmetic, the output rounded once (twice where batch-contiguous signals
            // take two launches; a few times on tensor cores, for contiguous signals of
            // n >= 256): within two units of roundoff of the storage type.
            check_error_within(reduced_error_vs_float<half>(h, op, batch, lx, ly),
                               2 * unit_roundoff_v<half>);
            check_error_within(reduced_error_vs_float<bfloat16>(h, op, batch, lx, ly),
                               2 * unit_roundoff_v<bfloat16>);
          }
        }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(hadamard_tensor_core_kernel_matches_the_float_path, S, HalfTypes) {
  // Every size the tensor-core kernel takes (operators/transforms/hadamard_mma_kernel.cu,
  // called directly, as is the CUDA-core kernel it replaces there): 2^8 ... 2^15 and m 2^k for
  // 2^k = 128 ... 2048, batches that end inside a warp's chunks, signals with a column stride
  // of n + 8, beta = 0 over a NaN-filled Y and then alpha = 0.5, beta = -2 over that result,
  // both directions (H_m^T for op = Trans). A column stride of n + 1 (no 16-byte runs) is
  // refused.
  std::vector<Index> sizes;
  for (int k = 8; k <= 15; ++k)
    sizes.push_back(Index(1) << k);
  for (Index m : {12, 20, 28})
    for (int k = 7; k <= 11; ++k)
      sizes.push_back(m << k);
  for (Index n : sizes)
    for (Op op : {Op::NoTrans, Op::Trans}) {
      const KSChain<float> h = hadamard<float>(n, {Normalization::Orthonormal});
      const detail::HadamardForm form = *h.hadamard_form();
      const Index batch = n >= 8192 ? 3 : 11, pad = 8;
      const HostMatrix<S> xs = random_matrix<float>(n + pad, batch).cast<S>();
      const HostMatrix<float> x = xs.template cast<float>().topRows(n);
      HostMatrix<float> expected(n, batch);
      h.apply(op, view(x), view(expected));
      const DeviceMatrix<S> xd = to_device(xs);
      DeviceMatrix<S> yd = to_device(HostMatrix<S>(
          HostMatrix<float>::Constant(n + pad, batch, std::numeric_limits<float>::quiet_NaN())
              .cast<S>()));
      const ConstView<S> xv = xd.view().row_block(0, n);
      const MatrixView<S> yv = yd.view().row_block(0, n);
      BOOST_TEST_CONTEXT("n = " << n << ", " << to_string(op)) {
        BOOST_REQUIRE(detail::hadamard_mma_takes(form, xv, yv));
        detail::hadamard_mma_apply(form, op, xv, yv, 1.0f, 0.0f, default_context());
        const HostMatrix<float> got = yd.to_host().template cast<float>();
        // Each 16-bit rounding of the intermediates (one per 8 bits of the index, one after
        // the top digit) adds about a third of a unit of roundoff to the relative error, the
        // output's own rounding as much.
        check_error_within(relative_error(HostMatrix<float>(got.topRows(n)), expected),
                           2 * unit_roundoff_v<S>);
        BOOST_TEST(got.bottomRows(pad).array().isNaN().all());
        // alpha = 0.5, beta = -2 over that result: 0.5 H x - 2 y.
        const HostMatrix<float> y0 =
            HostMatrix<float>(got.topRows(n)).template cast<S>().template cast<float>();
        const HostMatrix<float> expected2 = 0.5f * expected - 2.0f * y0;
        detail::hadamard_mma_apply(form, op, xv, yv, 0.5f, -2.0f, default_context());
        const HostMatrix<float> got2 = yd.to_host().template cast<float>();
        check_error_within(relative_error(HostMatrix<float>(got2.topRows(n)), expected2),
                           4 * unit_roundoff_v<S>);
        // The default path (the tensor-core kernel here, 28 x 2048 included).
        BOOST_REQUIRE(detail::hadamard_device_takes(form, xv, yv));
        apply_reduced_precision<S>(h, op, xv, yv);
        const HostMatrix<float> got3 = yd.to_host().template cast<float>();
        check_error_within(relative_error(HostMatrix<float>(got3.topRows(n)), expected),
                           2 * unit_roundoff_v<S>);
        // The CUDA-core kernel on the same views where it fits: fp32 throughout, one rounding
        // per output.
        if (detail::hadamard_device_supported(form, xv.row_stride, xv.col_stride)) {
          detail::hadamard_cuda_core_apply(form, op, xv, yv, 1.0f, 0.0f, default_context());
          const HostMatrix<float> got4 = yd.to_host().template cast<float>();
          check_error_within(relative_error(HostMatrix<float>(got4.topRows(n)), expected),
                             unit_roundoff_v<S>);
        }
      }
    }
  // Large batches: 8 chunks per warp (small ones take one signal per warp), ending inside a
  // warp's chunks.
  for (Index n : {Index(256), Index(1024)}) {
    const KSChain<float> h = hadamard<float>(n);
    const Index batch = (Index(1) << 23) / n + 3;
    const HostMatrix<S> xs = random_matrix<float>(n, batch).cast<S>();
    HostMatrix<float> expected(n, batch);
    h.apply(Op::NoTrans, view(HostMatrix<float>(xs.template cast<float>())), view(expected));
    const DeviceMatrix<S> xd = to_device(xs);
    DeviceMatrix<S> yd(n, batch);
    detail::hadamard_mma_apply(*h.hadamard_form(), Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.0f,
                               default_context());
    BOOST_TEST_CONTEXT("n = " << n << ", B = " << batch) {
      BOOST_TEST(relative_error(HostMatrix<float>(yd.to_host().template cast<float>()), expected) <=
                 2 * unit_roundoff_v<S>);
    }
  }
  // Signals without 16-byte runs (column stride n + 1) go to the general kernel.
  const Index n = 1024;
  const KSChain<float> h = hadamard<float>(n);
  const DeviceMatrix<S> xd(n + 1, 4);
  DeviceMatrix<S> yd(n + 1, 4);
  BOOST_TEST(!detail::hadamard_mma_takes(*h.hadamard_form(), xd.view().row_block(0, n),
                                         yd.view().row_block(0, n)));
  // One signal: its column stride does not matter.
  BOOST_TEST(detail::hadamard_mma_takes(*h.hadamard_form(),
                                        xd.view().row_block(0, n).col_block(0, 1),
                                        yd.view().row_block(0, n).col_block(0, 1)));
}

// Devices whose blocks have less shared memory than an H100's, emulated on this one: signals
// that no longer fit a block leave the FFT and Hadamard kernels for the KS chain paths, and
// every transform still matches the CPU.
BOOST_AUTO_TEST_CASE(transforms_on_devices_with_less_shared_memory) {
  using C = std::complex<float>;
  for (const std::size_t cap : kSmallerSharedMemory) {
    const detail::SharedMemoryCapForTesting capped(cap);
    BOOST_TEST_CONTEXT(cap << " bytes per block") {
      // A block of the FFT holds 2^14 complex values, padded: 132 KiB; 2^15 runs as two.
      for (Index n : {8192, 16384, 32768}) {
        BOOST_TEST(detail::fft_device_supported(n) == (n <= 8192 || cap >= 132 * 1024));
        check_gpu_against_cpu(dft<C>(n), 3, tolerance<C>(n));
      }
      // The CUDA-core Hadamard kernel holds a signal of 2^15 floats (128 KiB and padding).
      const KSChain<float> h = hadamard<float>(32768);
      BOOST_TEST(detail::hadamard_device_supported(*h.hadamard_form(), 1, 32768) ==
                 (cap > 160 * 1024));
      check_gpu_against_cpu(h, 3, tolerance<float>(32768));
      // The tensor-core kernel holds a 16-bit signal: 28 x 2^11 takes 112 KiB.
      const Index n = 28 * 2048, batch = 3;
      const KSChain<float> h28 = hadamard<float>(n, {Normalization::Orthonormal});
      const HostMatrix<half> xs = random_matrix<float>(n, batch).cast<half>();
      HostMatrix<float> expected(n, batch);
      h28.apply(Op::NoTrans, view(HostMatrix<float>(xs.cast<float>())), view(expected));
      const DeviceMatrix<half> xd = to_device(xs);
      DeviceMatrix<half> yd(n, batch);
      BOOST_TEST(detail::hadamard_mma_takes(*h28.hadamard_form(), xd.view(), yd.view()) ==
                 (cap >= 112 * 1024));
      apply_reduced_precision(h28, Op::NoTrans, xd.view(), yd.view());
      // Factor by factor where no kernel takes it: each intermediate rounded to 16 bits.
      check_error_within(relative_error(HostMatrix<float>(yd.to_host().cast<float>()), expected),
                         4 * double(h28.size()) * unit_roundoff_v<half>);
    }
  }
}

BOOST_AUTO_TEST_CASE(half_signals_through_any_chain) {
  // Chains without a Hadamard form (and a Hadamard chain with a forced algorithm) go through
  // float copies of the signals.
  std::mt19937 gen(5);
  const KSChain<float> butterfly = KSChain<float>::random(butterfly_patterns(256), gen);
  check_error_within(
      reduced_error_vs_float<half>(butterfly, Op::NoTrans, 17, Layout::ColMajor, Layout::RowMajor),
      2 * unit_roundoff_v<half>);
  const KSAlgorithmGuard forced(KSAlgorithm::Fused);
  check_error_within(reduced_error_vs_float<bfloat16>(hadamard<float>(512), Op::Trans, 17,
                                                      Layout::RowMajor, Layout::RowMajor),
                     2 * unit_roundoff_v<bfloat16>);
}

BOOST_AUTO_TEST_SUITE_END()
