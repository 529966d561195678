// The strided-batched GEMM every operator's cuBLAS products go through
// (src/runtime/strided_gemm.hpp), with tuning on: the first call of a product measures cuBLAS's
// default against cuBLASLt's proposals and caches the fastest; every call must still give the
// product, checked against a double-precision loop over the same (rounded) inputs. Covered:
// the four real types, all transposes, beta zero and not (so a measurement that wrote the
// caller's C would show), starts and strides that break 16-byte alignment, every cuBLASLt
// algorithm forced through the cache, cache values that are out of range or malformed (they
// must fall back to cuBLAS's default), and a tuned call replayed from a CUDA graph.
#include <cmath>
#include <vector>

#include "gpu_reference.hpp"

#if STROP_HAVE_CUDA
#include <cuda_runtime.h>

#include "src/runtime/cuda_types.hpp"
#include "src/runtime/strided_gemm.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

// strop's 16-bit types (cuda_fp16.h's ::half is visible here too).
using GemmTypes = boost::mpl::list<float, double, strop::half, strop::bfloat16>;

// double for double, float (fp32 sums) for the others, as cuBLAS takes the scalars.
template <class T>
using ScaleOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Tuning on with an empty in-memory cache for one test; off and empty afterwards.
struct TuningOn {
  TuningOn() {
    clear_tuned_choices();
    set_tuning_enabled(true);
  }
  ~TuningOn() {
    set_tuning_enabled(false);
    clear_tuned_choices();
  }
};

struct Case {
  cublasOperation_t ta, tb;
  int m, n, k, batch;
  int offset;  // elements before each matrix's start (1: not 16-byte aligned)
  double beta;
};

// One product and its operands, on the host and the device.
template <class T>
struct Problem {
  Case c;
  int lda, ldb, ldc;
  long long sa, sb, sc;
  std::vector<T> a, b, c0;
  Buffer<T> da, db, dc;

  Problem(const Case& cs, Context& ctx) : c(cs) {
    const int a_rows = c.ta == CUBLAS_OP_N ? c.m : c.k, a_cols = c.ta == CUBLAS_OP_N ? c.k : c.m;
    const int b_rows = c.tb == CUBLAS_OP_N ? c.k : c.n, b_cols = c.tb == CUBLAS_OP_N ? c.n : c.k;
    lda = a_rows + 3, ldb = b_rows + 1, ldc = c.m + 2;  // padded leading dimensions
    sa = (long long)lda * a_cols + 5, sb = (long long)ldb * b_cols, sc = (long long)ldc * c.n + 1;
    a = random_values(c.offset + sa * c.batch);
    b = random_values(c.offset + sb * c.batch);
    c0 = random_values(c.offset + sc * c.batch);
    da = upload(a, ctx), db = upload(b, ctx), dc = upload(c0, ctx);
  }

  static std::vector<T> random_values(long long count) {
    const HostMatrix<float> r = random_matrix<float>(Index(count), 1);
    std::vector<T> v(static_cast<std::size_t>(count));
    for (long long i = 0; i < count; ++i)
      v[std::size_t(i)] = T(r(Index(i), 0));
    return v;
  }
  static Buffer<T> upload(const std::vector<T>& v, Context& ctx) {
    Buffer<T> d(Index(v.size()), MemorySpace::Device, ctx);
    detail::copy_bytes(d.data(), MemorySpace::Device, v.data(), MemorySpace::Host,
                       v.size() * sizeof(T), ctx);
    return d;
  }

  // C := the starting values, then the product through strided_batched_gemm.
  cublasStatus_t run(double alpha, Context& ctx) {
    detail::copy_bytes(dc.data(), MemorySpace::Device, c0.data(), MemorySpace::Host,
                       c0.size() * sizeof(T), ctx);
    const ScaleOf<T> al = ScaleOf<T>(alpha), be = ScaleOf<T>(c.beta);
    return detail::strided_batched_gemm(
        ctx, c.ta, c.tb, c.m, c.n, c.k, &al, da.data() + c.offset, detail::cuda_data_type<T>(), lda,
        sa, db.data() + c.offset, ldb, sb, &be, dc.data() + c.offset, ldc, sc, c.batch,
        std::is_same_v<T, double> ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F);
  }

  // The device's C against the exact product of the same inputs: every entry within the
  // storage type's rounding of its value plus the sums' rounding (fp32, or fp64 for double)
  // of the terms' magnitudes; the padding between C's columns and entries must be untouched.
  void check(double alpha, Context& ctx) const {
    std::vector<T> got(c0.size());
    detail::copy_bytes(got.data(), MemorySpace::Host, dc.data(), MemorySpace::Device,
                       got.size() * sizeof(T), ctx);
    double storage = 0x1p-53;  // the storage type's unit roundoff
    if constexpr (std::is_same_v<T, float>) storage = 0x1p-24;
    if constexpr (is_reduced_precision_v<T>) storage = unit_roundoff_v<T>;
    // The classic bound on a k-term sum's rounding, (k + 1) u, with a factor 2 for the order
    // (split sums) a cuBLASLt algorithm may choose.
    const double sums = 2.0 * (c.k + 1) * (std::is_same_v<T, double> ? 0x1p-53 : 0x1p-24);
    auto at = [](const std::vector<T>& v, long long i) {
      if constexpr (std::is_same_v<T, double>)
        return v[std::size_t(i)];
      else
        return double(float(v[std::size_t(i)]));
    };
    long long wrong = 0, padding_changed = 0;
    for (int e = 0; e < c.batch; ++e)
      for (int j = 0; j < c.n; ++j)
        for (int i = 0; i < c.m; ++i) {
          double exact = 0, magnitude = 0;
          for (int l = 0; l < c.k; ++l) {
            const long long ia =
                c.offset + e * sa +
                (c.ta == CUBLAS_OP_N ? i + (long long)l * lda : l + (long long)i * lda);
            const long long ib =
                c.offset + e * sb +
                (c.tb == CUBLAS_OP_N ? l + (long long)j * ldb : j + (long long)l * ldb);
            exact += alpha * at(a, ia) * at(b, ib);
            magnitude += std::abs(alpha * at(a, ia) * at(b, ib));
          }
          const long long ic = c.offset + e * sc + i + (long long)j * ldc;
          exact += c.beta * at(c0, ic);
          magnitude += std::abs(c.beta * at(c0, ic));
          const double bound = 2 * storage * std::abs(exact) + sums * magnitude + 1e-30;
          wrong += !(std::abs(at(got, ic) - exact) <= bound);
        }
    for (long long i = 0; i < (long long)got.size(); ++i) {
      const long long local = (i - c.offset) % sc, e = (i - c.offset) / sc;
      const bool inside = i >= c.offset && e < c.batch && local % ldc < c.m && local / ldc < c.n;
      if (!inside) padding_changed += at(got, i) != at(c0, i);
    }
    BOOST_TEST(wrong == 0, wrong << " entries outside the rounding bound");
    BOOST_TEST(padding_changed == 0);
  }
};

const std::vector<Case> kCases = {
    {CUBLAS_OP_N, CUBLAS_OP_N, 64, 48, 32, 3, 0, 0.0},
    {CUBLAS_OP_T, CUBLAS_OP_N, 37, 19, 23, 2, 1, -0.5},
    {CUBLAS_OP_N, CUBLAS_OP_T, 128, 8, 96, 4, 0, 0.25},
    {CUBLAS_OP_T, CUBLAS_OP_T, 24, 72, 40, 1, 3, 0.0},
    {CUBLAS_OP_N, CUBLAS_OP_N, 1, 33, 17, 5, 1, 1.0},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_gemm_tuning, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(tuned_products_match_the_exact_ones, T, GemmTypes) {
  TuningOn tuning;
  Context ctx(0);
  for (const Case& c : kCases) {
    BOOST_TEST_CONTEXT("m " << c.m << " n " << c.n << " k " << c.k << " batch " << c.batch
                            << " ops " << int(c.ta) << int(c.tb) << " offset " << c.offset
                            << " beta " << c.beta) {
      Problem<T> p(c, ctx);
      const std::size_t before = tuned_keys("gemm|").size();
      BOOST_TEST(p.run(0.75, ctx) == CUBLAS_STATUS_SUCCESS);  // measures, then runs the choice
      p.check(0.75, ctx);
      BOOST_TEST(tuned_keys("gemm|").size() == before + 1);
      BOOST_TEST(p.run(-1.25, ctx) == CUBLAS_STATUS_SUCCESS);  // the cached choice
      p.check(-1.25, ctx);
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(every_algorithm_and_bad_cache_values_give_the_product, T, GemmTypes) {
  TuningOn tuning;
  Context ctx(0);
  for (const Case& c : {kCases[1], kCases[2]}) {
    Problem<T> p(c, ctx);
    BOOST_TEST(p.run(1.0, ctx) == CUBLAS_STATUS_SUCCESS);
    const std::vector<std::string> keys = tuned_keys("gemm|");
    BOOST_TEST_REQUIRE(keys.size() == 1u);
    for (const std::string value : {"cublas", "lt0", "lt1", "lt2", "lt3", "lt4", "lt5", "lt6",
                                    "lt7", "lt999", "lt", "ltx", "lt1x", "something"}) {
      BOOST_TEST_CONTEXT("cached choice " << value) {
        store_tuned_choice(keys.front(), value);
        BOOST_TEST(p.run(0.5, ctx) == CUBLAS_STATUS_SUCCESS);
        p.check(0.5, ctx);
      }
    }
    clear_tuned_choices();
  }
}

// Captures one call of p's product with alpha = 2 into a graph, replays it once and checks C.
void check_replay(Problem<strop::bfloat16>& p, Context& ctx) {
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  detail::copy_bytes(p.dc.data(), MemorySpace::Device, p.c0.data(), MemorySpace::Host,
                     p.c0.size() * sizeof(strop::bfloat16), ctx);
  ctx.synchronize();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  BOOST_TEST_REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) ==
                     cudaSuccess);
  const float alpha = 2, beta = float(p.c.beta);
  const cublasStatus_t status = detail::strided_batched_gemm(
      ctx, p.c.ta, p.c.tb, p.c.m, p.c.n, p.c.k, &alpha, p.da.data() + p.c.offset, CUDA_R_16BF,
      p.lda, p.sa, p.db.data() + p.c.offset, p.ldb, p.sb, &beta, p.dc.data() + p.c.offset, p.ldc,
      p.sc, p.c.batch, CUBLAS_COMPUTE_32F);
  BOOST_TEST_REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  BOOST_TEST(status == CUBLAS_STATUS_SUCCESS);
  BOOST_TEST_REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  BOOST_TEST(cudaGraphLaunch(exec, stream) == cudaSuccess);
  ctx.synchronize();
  p.check(2.0, ctx);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// Under capture nothing is measured: a product first met there runs cuBLAS's default (and is
// still right); the next call outside a capture measures it, and a capture then replays the
// tuned choice.
BOOST_AUTO_TEST_CASE(a_tuned_product_replays_from_a_graph) {
  TuningOn tuning;
  Context ctx(0);
  Problem<strop::bfloat16> p(kCases[2], ctx);
  ctx.cublas();  // the handle is made outside the capture, as any earlier call would
  check_replay(p, ctx);
  BOOST_TEST(tuned_keys("gemm|").empty());
  BOOST_TEST(p.run(1.0, ctx) == CUBLAS_STATUS_SUCCESS);
  p.check(1.0, ctx);
  BOOST_TEST(tuned_keys("gemm|").size() == 1u);
  check_replay(p, ctx);
}

BOOST_AUTO_TEST_SUITE_END()
#endif
