// Several host threads, each with its own Context, and contexts on a second device: every
// family's GPU path against its CPU application. What this catches is process-wide state
// that belongs to one device or one context: a kernel attribute that one thread lowers while
// another launches (the dynamic shared memory opt-in, src/runtime/cuda_check.hpp), device
// properties kept for the first device only (occupancy of the cooperative BLR kernels, the
// skinny stages' cluster support), device copies of an operator made by one thread and read
// by another, tuning caches shared by concurrent measurements.
//
// The inputs and CPU references are made on the main thread (the test helpers' random
// numbers are not thread-safe) and the workers only report their errors: Boost.Test's
// assertions stay on the main thread.
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu_reference.hpp"
#include "operators/ks/ks_mma_tile.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

using strop::bfloat16;
using strop::half;

// One GPU application and its reference, runnable from any thread: the relative error of
// Y = A X on ctx's device (applied `calls` times over the same Y) against the reference, or
// an exception.
struct Case {
  std::string name;
  std::function<double(Context&, int calls)> error;
  double tolerance;
};

template <class S>
using ApplyOn = std::function<void(ConstView<S>, MatrixView<S>, Context&)>;

// X in `layout` on ctx's device, Y filled with NaN (beta = 0 never reads it, so a launch
// that did not run shows); each call of `apply` must give the same Y.
template <class S, class R>
Case make_case(std::string name, HostMatrix<S> x, HostMatrix<R> expected, Layout layout,
               double tolerance, ApplyOn<S> apply) {
  struct Data {
    HostMatrix<S> x, nan_y;
    HostMatrix<R> expected;
  };
  HostMatrix<S> nan_y = HostMatrix<S>::Constant(expected.rows(), expected.cols(),
                                                S(std::numeric_limits<float>::quiet_NaN()));
  auto data =
      std::make_shared<const Data>(Data{std::move(x), std::move(nan_y), std::move(expected)});
  return {std::move(name),
          [data, layout, apply = std::move(apply)](Context& ctx, int calls) {
            const DeviceMatrix<S> xd = to_device(data->x, layout, ctx);
            DeviceMatrix<S> yd = to_device(data->nan_y, layout, ctx);
            for (int call = 0; call < calls; ++call)
              apply(xd.view(), yd.view(), ctx);
            return relative_error(HostMatrix<R>(yd.to_host().template cast<R>()), data->expected);
          },
          tolerance};
}

// A (on its own scalar type) against its CPU application.
template <class A>
Case operator_case(std::string name, std::shared_ptr<const A> op, Index batch, Layout layout,
                   double tolerance, ApplyOn<typename A::Scalar> apply = {}) {
  using T = typename A::Scalar;
  HostMatrix<T> x = random_matrix<T>(op->cols(), batch);
  HostMatrix<T> expected(op->rows(), batch);
  op->apply(Op::NoTrans, view(x), view(expected));
  if (!apply)
    apply = [op](ConstView<T> X, MatrixView<T> Y, Context& ctx) {
      op->apply(Op::NoTrans, X, Y, T(1), T(0), ctx);
    };
  return make_case<T, T>(std::move(name), std::move(x), std::move(expected), layout, tolerance,
                         std::move(apply));
}

// A float operator on 16-bit signals (apply_reduced_precision) against the float CPU
// application to the same (representable) inputs; a KS factor with `tile` forced on the
// fused tensor-core kernel.
template <class S, class A>
Case reduced_case(std::string name, std::shared_ptr<const A> op, Index batch, Layout layout,
                  double tolerance, std::optional<detail::KSMmaTile> tile = std::nullopt) {
  HostMatrix<S> x = random_matrix<float>(op->cols(), batch).template cast<S>();
  HostMatrix<float> expected(op->rows(), batch);
  op->apply(Op::NoTrans, view(HostMatrix<float>(x.template cast<float>())), view(expected));
  return make_case<S, float>(std::move(name), std::move(x), std::move(expected), layout, tolerance,
                             [op, tile](ConstView<S> X, MatrixView<S> Y, Context& ctx) {
                               const detail::KSMmaTileGuard forced_tile(tile);
                               std::optional<KSAlgorithmGuard> fused;
                               if (tile) fused.emplace(KSAlgorithm::Fused);
                               apply_reduced_precision<S>(*op, Op::NoTrans, X, Y, 1.0f, 0.0f, ctx);
                             });
}

template <class A, class... Args>
std::shared_ptr<const A> shared(Args&&... args) {
  return std::make_shared<const A>(std::forward<Args>(args)...);
}

Kron<float> dense_kron(const std::vector<std::pair<Index, Index>>& shapes) {
  std::vector<AnyOperator<float>> factors;
  for (auto [rows, cols] : shapes)
    factors.emplace_back(Dense<float>(random_matrix<float>(rows, cols)));
  return Kron<float>(factors);
}

// The families, a kernel's sizes next to each other (threads that start one case apart then
// launch one kernel with different shared memory at about the same time). The large sizes
// need more than 48 KB of dynamic shared memory per block: butterflies of 1024 and 4096
// (fused chain kernel), Walsh-Hadamard of 16384 and 32768 (CUDA cores) and 32768 in 16 bits
// (tensor cores), FFTs of 8192 and 16384, the fused Kron passes, the large tiles of the
// 16-bit KS kernels.
std::vector<Case> family_cases() {
  std::mt19937 gen(97);
  std::vector<Case> cases;
  const auto add = [&](Case c) { cases.push_back(std::move(c)); };
  const Layout cm = Layout::ColMajor, rm = Layout::RowMajor;

  add(operator_case("dense 200x300", shared<Dense<float>>(random_matrix<float>(200, 300)), 33, cm,
                    tolerance<float>(300)));
  for (Index n : {256, 1024, 4096})
    add(operator_case(detail::concat("butterfly ", n),
                      shared<KSChain<float>>(KSChain<float>::random(butterfly_patterns(n), gen)),
                      40, cm, tolerance<float>(n)));
  add(operator_case("butterfly 1024, batch-contiguous",
                    shared<KSChain<std::complex<float>>>(
                        KSChain<std::complex<float>>::random(butterfly_patterns(1024), gen)),
                    37, rm, tolerance<std::complex<float>>(1024)));

  // Kron-matmul: mixed shapes (Auto), and each engine's kernels forced.
  struct KronCase {
    std::vector<std::pair<Index, Index>> shapes;
    KronAlgorithm algorithm;
  };
  for (const KronCase& k :
       std::vector<KronCase>{{{{5, 3}, {2, 7}, {4, 4}}, KronAlgorithm::Auto},
                             {{{20, 33}, {40, 20}}, KronAlgorithm::Sliced},
                             {{{64, 64}, {2, 2}}, KronAlgorithm::Sliced},
                             {{{8, 8}, {8, 8}, {8, 8}}, KronAlgorithm::Fused},
                             {{{16, 16}, {16, 16}, {16, 16}}, KronAlgorithm::Fused},
                             {{{40, 40}, {32, 32}, {32, 32}}, KronAlgorithm::Fused},
                             {{{16, 16}, {16, 16}, {16, 16}, {16, 16}}, KronAlgorithm::Fused},
                             {{{16, 12}, {24, 16}, {5, 8}}, KronAlgorithm::Fused}}) {
    auto A = shared<Kron<float>>(dense_kron(k.shapes));
    std::string name = detail::concat("kron ", to_string(k.algorithm));
    for (auto [rows, cols] : k.shapes)
      name += detail::concat(" ", rows, "x", cols);
    add(operator_case(
        name, A, 24, cm, tolerance<float>(A->cols()),
        [A, algorithm = k.algorithm](ConstView<float> X, MatrixView<float> Y, Context& ctx) {
          const KronAlgorithmGuard guard(algorithm);
          A->apply(Op::NoTrans, X, Y, 1.0f, 0.0f, ctx);
        }));
  }
  // Pairs of 32 x 32 factors in 16 bits: the tensor-core pass in clusters.
  add(reduced_case<half>("kron 32x32^3 half",
                         shared<Kron<float>>(dense_kron({{32, 32}, {32, 32}, {32, 32}})), 3, cm,
                         2.0 * 4 * unit_roundoff_v<half>));

  // Block low-rank in float and bfloat16: 1 signal (the cooperative decode kernel), 5 (the
  // skinny stages, in clusters), 64 (the GEMM plans).
  const auto monarch = shared<Monarch<float>>(Monarch<float>::random(256, 256, 4, 4, 8, gen));
  const auto blast = shared<Blast<float>>(Blast<float>::random(192, 256, 4, 4, 6, gen));
  const auto large = shared<Monarch<float>>(Monarch<float>::random(1024, 512, 4, 4, 64, gen));
  for (Index batch : {1, 5, 64}) {
    const std::string b = detail::concat(", B = ", batch);
    add(operator_case(detail::concat("monarch float", b), monarch, batch, cm,
                      tolerance<float>(256)));
    add(reduced_case<bfloat16>(detail::concat("monarch bf16", b), monarch, batch, cm,
                               8 * unit_roundoff_v<bfloat16>));
    add(operator_case(detail::concat("blast float", b), blast, batch, rm, tolerance<float>(256)));
    add(reduced_case<bfloat16>(detail::concat("blast bf16", b), blast, batch, cm,
                               8 * unit_roundoff_v<bfloat16>));
    add(reduced_case<bfloat16>(detail::concat("monarch 1024x512 bf16", b), large, batch, cm,
                               8 * unit_roundoff_v<bfloat16>));
  }

  // 16-bit KS factors on tensor cores: every tile candidate (ks_mma.cu and the pipelined
  // kernel), forced on the applying thread.
  const KSPattern pattern{1, 72, 136, 4};
  const auto factor = shared<KSFactor<float>>(KSFactor<float>::random(pattern, gen));
  for (const detail::KSMmaTile& tile :
       detail::ks_mma_tile_candidates(pattern.b, pattern.d, 300, false))
    add(reduced_case<bfloat16>(detail::concat("ks bf16 tile ", to_string(tile)), factor, 300, cm,
                               8 * unit_roundoff_v<bfloat16>, tile));

  add(operator_case("strassen-tile 256x512",
                    shared<StrassenTile<float>>(StrassenTile<float>::encode(
                        random_matrix<float>(256, 512), stl::strassen_4x4())),
                    37, cm, 100 * exact_tolerance<float>()));

  for (Index n : {1024, 16384, 32768})
    add(operator_case(detail::concat("hadamard ", n),
                      shared<KSChain<float>>(hadamard<float>(n, {Normalization::Orthonormal})), 8,
                      cm, tolerance<float>(n)));
  add(reduced_case<bfloat16>(
      "hadamard 32768 bf16",
      shared<KSChain<float>>(hadamard<float>(32768, {Normalization::Orthonormal})), 4, cm,
      2 * unit_roundoff_v<bfloat16>));
  using C = std::complex<float>;
  for (Index n : {64, 4096, 8192, 16384})
    add(operator_case(detail::concat("dft ", n), shared<decltype(dft<C>(n))>(dft<C>(n)), 8, cm,
                      tolerance<C>(n)));
  return cases;
}

// Runs `c` on ctx; a failure goes to `failures`, after `who`.
void run_case(const Case& c, Context& ctx, int calls, const std::string& who,
              std::vector<std::string>& failures) {
  const std::string where = detail::concat(who, " (device ", ctx.device(), "), ", c.name);
  try {
    const double error = c.error(ctx, calls);
    if (!(error <= c.tolerance))
      failures.push_back(detail::concat(where, ": relative error ", error, " above ", c.tolerance));
  } catch (const std::exception& e) {
    failures.push_back(detail::concat(where, ": ", e.what()));
  }
}

// One thread per entry of `devices`, each with its own Context there, runs every case
// `rounds` times (twice each), starting at its own index in the list.
std::vector<std::string> run_on_threads(const std::vector<Case>& cases,
                                        const std::vector<int>& devices, int rounds) {
  std::vector<std::vector<std::string>> failures(devices.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < devices.size(); ++t)
    threads.emplace_back([&, t] {
      Context ctx(devices[t]);
      for (int round = 0; round < rounds; ++round)
        for (std::size_t i = 0; i < cases.size(); ++i)
          run_case(cases[(i + t) % cases.size()], ctx, 2, detail::concat("thread ", t),
                   failures[t]);
    });
  for (std::thread& thread : threads)
    thread.join();
  std::vector<std::string> all;
  for (const auto& f : failures)
    all.insert(all.end(), f.begin(), f.end());
  return all;
}

void report(const std::vector<std::string>& failures) {
  BOOST_TEST(failures.empty(), failures.size() << " failed applications");
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i)
    BOOST_ERROR(failures[i]);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_concurrency, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE(four_threads_with_their_own_contexts) {
  report(run_on_threads(family_cases(), {0, 0, 0, 0}, 6));
}

// One kernel launched back to back by four threads with different dynamic shared memory
// (each thread one size, on its own context): the opt-in above 48 KB is an attribute of the
// kernel on the device that all threads share.
BOOST_AUTO_TEST_CASE(one_kernel_four_shared_memory_sizes_at_once) {
  std::mt19937 gen(101);
  std::vector<Case> chains, hadamards;
  for (Index n : {256, 1024, 2048, 4096})  // the fused chain kernel: 9 to 80 KB
    chains.push_back(
        operator_case(detail::concat("butterfly ", n),
                      shared<KSChain<float>>(KSChain<float>::random(butterfly_patterns(n), gen)),
                      40, Layout::ColMajor, tolerance<float>(n)));
  for (Index n : {16384, 32768, 16384, 32768})  // the Walsh-Hadamard kernel: 72 and 144 KB
    hadamards.push_back(
        operator_case(detail::concat("hadamard ", n),
                      shared<KSChain<float>>(hadamard<float>(n, {Normalization::Orthonormal})), 8,
                      Layout::ColMajor, tolerance<float>(n)));
  for (const std::vector<Case>* group : {&chains, &hadamards}) {
    std::vector<std::vector<std::string>> failures(group->size());
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < group->size(); ++t)
      threads.emplace_back([&, t] {
        Context ctx(0);
        run_case((*group)[t], ctx, 300, detail::concat("thread ", t), failures[t]);
      });
    for (std::thread& thread : threads)
      thread.join();
    for (const auto& f : failures)
      report(f);
  }
}

BOOST_AUTO_TEST_CASE(four_threads_tuning_at_once) {
  clear_tuned_choices();
  set_tuning_enabled(true);
  const std::vector<std::string> failures = run_on_threads(family_cases(), {0, 0, 0, 0}, 2);
  const std::size_t tuned = tuned_choice_count();
  set_tuning_enabled(false);
  clear_tuned_choices();
  report(failures);
  BOOST_TEST(tuned > 0u);  // the engines measured choices (and the threads then shared them)
}

// Context(1): the same applications on the second device alone (after device 0 above made
// its per-device state first), alternating with device 0 on one thread, and two threads on
// each device at once.
BOOST_AUTO_TEST_CASE(a_second_device, *utf::precondition(HasTwoDevices())) {
  const std::vector<Case> cases = family_cases();
  report(run_on_threads(cases, {1}, 1));
  std::vector<std::string> failures;
  {
    Context ctx0(0), ctx1(1);
    for (int round = 0; round < 2; ++round)
      for (std::size_t i = 0; i < cases.size(); ++i)
        run_case(cases[i], (i + round) % 2 == 0 ? ctx0 : ctx1, 2, "one thread", failures);
  }
  report(failures);
  report(run_on_threads(cases, {0, 1, 0, 1}, 2));
}

BOOST_AUTO_TEST_SUITE_END()
