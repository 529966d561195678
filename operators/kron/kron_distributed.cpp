// DistributedKron: the plan of local steps and exchanges, validation, and the sequence on the
// host or on the parts' devices (strop/operators/kron_distributed.hpp).
#include "strop/operators/kron_distributed.hpp"

#include <algorithm>
#include <string>

#include "operators/kron/kron_exchange.hpp"
#include "strop/core/buffer.hpp"
#include "strop/expr/elementwise.hpp"
#include "strop/operators/identity.hpp"
#if STROP_HAVE_CUDA
#include "runtime/cuda_check.hpp"
#endif

namespace strop {
namespace detail {

template <class T>
void kron_rotation_pull_host(const KronRotation& r, int part, const KronPartSources<T>& sources,
                             MatrixView<T> out) {
  const Index first = Index(part) * r.part_rows;
  for (Index b = 0; b < out.cols; ++b) {
    for (Index o = 0; o < r.part_rows; ++o) {
      const Index k = r.source_row(first + o);
      out(o, b) = sources.part_data[k / r.part_rows][(k % r.part_rows) * sources.row_stride +
                                                     b * sources.col_stride];
    }
  }
}

}  // namespace detail

namespace {

constexpr const char* kName = "distributed kron";

template <class T>
Index in_extent(const AnyOperator<T>& f, Op op) {
  return op == Op::NoTrans ? f.cols() : f.rows();
}
template <class T>
Index out_extent(const AnyOperator<T>& f, Op op) {
  return op == Op::NoTrans ? f.rows() : f.cols();
}

// One part's scratch: the local step writes `local`, the exchange fills `exchanged` (the next
// step's input), both packed in the layout of the part's X, sized for the largest step.
template <class T>
struct PartScratch {
  Buffer<T> local;
  Buffer<T> exchanged;
};

// Whether two parts' views may share an element: may_overlap's address ranges, except for
// row blocks of one matrix (same strides, the inner extents side by side within the outer
// stride), which interleave in memory without sharing an element.
template <class T>
bool may_share_elements(const MatrixView<T>& a, const MatrixView<T>& b) {
  if (!may_overlap(a, b)) return false;
  if (a.row_stride != b.row_stride || a.col_stride != b.col_stride) return true;
  const bool rows_inner = a.row_stride == 1;
  if (!rows_inner && a.col_stride != 1) return true;
  const Index outer = rows_inner ? a.col_stride : a.row_stride;
  const Index inner_a = rows_inner ? a.rows : a.cols, inner_b = rows_inner ? b.rows : b.cols;
  if (outer <= 0) return true;
  const Index offset = b.data - a.data;
  // b's inner range starts `r` past a's within every outer step (modulo the stride).
  const auto beside = [outer](Index r, Index first_extent, Index second_extent) {
    return r >= first_extent && r + second_extent <= outer;
  };
  const Index r = ((offset % outer) + outer) % outer;
  const Index r_back = ((-offset % outer) + outer) % outer;
  return !(beside(r, inner_a, inner_b) || beside(r_back, inner_b, inner_a));
}

}  // namespace

template <class T>
DistributedKron<T>::DistributedKron(Kron<T> product, int parts)
    : product_(std::move(product)), parts_(parts) {
  require<ShapeError>(parts >= 1, kName, ": needs at least one part, got ", parts);
  require<ShapeError>(parts <= detail::KronPartSources<T>::kMaxParts, kName, ": at most ",
                      detail::KronPartSources<T>::kMaxParts, " parts, got ", parts);
  require<ShapeError>(product_.rows() % parts == 0 && product_.cols() % parts == 0, kName, ": the ",
                      product_.rows(), "x", product_.cols(), " product does not split into ", parts,
                      " equal row blocks");
  // A part's chunks are applied as if they were signals (a Kron of one factor allows any).
  for (const auto& f : product_.factors())
    require<ShapeError>(parts == 1 || f.acts_per_signal(), kName,
                        ": a factor mixes the signals of a batch (a Strassen-Tile operator with",
                        " inexact encoders); it cannot be applied to the chunks of a part");
}

template <class T>
Index DistributedKron<T>::rows_per_part(Op op) const {
  return (op == Op::NoTrans ? product_.rows() : product_.cols()) / parts_;
}

template <class T>
Index DistributedKron<T>::cols_per_part(Op op) const {
  return (op == Op::NoTrans ? product_.cols() : product_.rows()) / parts_;
}

template <class T>
std::vector<KronPartStep> DistributedKron<T>::steps(Op op) const {
  const auto& factors = product_.factors();
  std::vector<KronPartStep> steps;
  Index part_rows = cols_per_part(op);
  std::size_t end = factors.size();
  while (end > 0) {
    KronPartStep step{end, end, 1, 1};
    // The longest run of trailing factors whose chunks lie inside one part.
    while (step.first > 0) {
      const Index in = in_extent(factors[step.first - 1], op) * step.in;
      if (in == 0 || part_rows % in != 0) break;
      step.in = in;
      step.out *= out_extent(factors[step.first - 1], op);
      --step.first;
    }
    require<ShapeError>(step.first < end, kName, ": factor ", end - 1, " of op(A) (", to_string(op),
                        ") takes chunks of ", in_extent(factors[end - 1], op),
                        " rows, which do not divide a part's ", part_rows, " rows (", parts_,
                        " parts); choose a number of parts that its extents divide");
    part_rows = part_rows / step.in * step.out;
    end = step.first;
    steps.push_back(step);
  }
  return steps;
}

namespace {

// Part p's local step: the factors of `step` on every chunk of its rows. On packed signal-
// contiguous data the chunks of all signals form one matrix of step.in rows (no identity
// factor needed); otherwise I ⊗ (the step's factors) on the part's rows.
template <class T>
void local_step(const Kron<T>& product, const KronPartStep& step, Op op, ConstView<T> in,
                MatrixView<T> out, T alpha, Context& ctx) {
  const auto& all = product.factors();
  std::vector<AnyOperator<T>> factors(all.begin() + static_cast<std::ptrdiff_t>(step.first),
                                      all.begin() + static_cast<std::ptrdiff_t>(step.last));
  const Index chunks = in.rows / step.in;
  const bool packed_signals = in.row_stride == 1 && in.col_stride == in.rows &&
                              out.row_stride == 1 && out.col_stride == out.rows;
  if (packed_signals) {
    const ConstView<T> in_chunks{in.data, step.in, chunks * in.cols, 1, step.in, in.space};
    const MatrixView<T> out_chunks{out.data, step.out, chunks * out.cols, 1, step.out, out.space};
    // One factor by its own path (a Dense: one GEMM over every chunk of every signal).
    if (factors.size() == 1)
      return factors.front().apply(op, in_chunks, out_chunks, alpha, T(0), ctx);
    Kron<T>(std::move(factors)).apply(op, in_chunks, out_chunks, alpha, T(0), ctx);
    return;
  }
  if (chunks > 1) factors.insert(factors.begin(), AnyOperator<T>(Identity<T>(chunks)));
  Kron<T>(std::move(factors)).apply(op, in, out, alpha, T(0), ctx);
}

// Orders the parts' streams at each call: every stream waits for every other stream's work
// queued so far (an event per part). The exchange reads every part's local result, and the
// next local step overwrites it only after every part has read it. Also makes each device
// able to read the others' memory. Nothing for host parts.
class PartsBarrier {
 public:
  explicit PartsBarrier(std::span<Context* const> contexts) : contexts_(contexts) {
#if STROP_HAVE_CUDA
    events_.assign(contexts.size(), nullptr);
    try {
      for (std::size_t p = 0; p < contexts.size(); ++p) {
        contexts[p]->stream();  // p's device current
        detail::check_cuda(cudaEventCreateWithFlags(&events_[p], cudaEventDisableTiming),
                           "cudaEventCreateWithFlags");
        for (Context* other : contexts)
          detail::enable_peer_reads(contexts[p]->device(), other->device());
      }
    } catch (...) {
      release();
      throw;
    }
#endif
  }
  ~PartsBarrier() {
    release();
  }
  PartsBarrier(const PartsBarrier&) = delete;
  PartsBarrier& operator=(const PartsBarrier&) = delete;

  void operator()() {
#if STROP_HAVE_CUDA
    const auto stream = [&](std::size_t p) {
      return static_cast<cudaStream_t>(contexts_[p]->stream());
    };
    for (std::size_t p = 0; p < events_.size(); ++p)
      detail::check_cuda(cudaEventRecord(events_[p], stream(p)), "cudaEventRecord");
    for (std::size_t p = 0; p < events_.size(); ++p)
      for (std::size_t q = 0; q < events_.size(); ++q)
        if (q != p)
          detail::check_cuda(cudaStreamWaitEvent(stream(p), events_[q], 0), "cudaStreamWaitEvent");
#endif
  }

 private:
  void release() noexcept {
#if STROP_HAVE_CUDA
    for (cudaEvent_t e : events_)
      if (e != nullptr) cudaEventDestroy(e);  // pending events are released when they complete
    events_.clear();
#endif
  }

  std::span<Context* const> contexts_;
#if STROP_HAVE_CUDA
  std::vector<cudaEvent_t> events_;
#endif
};

}  // namespace

template <class T>
void DistributedKron<T>::apply(Op op, std::span<const ConstView<T>> X,
                               std::span<const MatrixView<T>> Y, std::span<Context* const> contexts,
                               T alpha, T beta) const {
  const int G = parts_;
  require<ShapeError>(X.size() == std::size_t(G) && Y.size() == std::size_t(G), kName, ": ", G,
                      " parts, got ", X.size(), " X and ", Y.size(), " Y views");
  const MemorySpace space = X[0].space;
  const bool on_device = space == MemorySpace::Device;
  require<ShapeError>(contexts.size() == std::size_t(G) || (!on_device && contexts.empty()), kName,
                      ": ", on_device ? "device parts need" : "host parts take none or",
                      " one context each (", G, "), got ", contexts.size());
  const Index signals = X[0].cols;
  const detail::DeviceScope device_scope(on_device);
  for (int p = 0; p < G; ++p) {
    const std::string name = detail::concat(kName, " part ", p);
    require<ShapeError>(X[p].space == space && Y[p].space == space, name,
                        ": the parts must all be in host or all in device memory");
    require<ShapeError>(X[p].cols == signals, name, ": every part holds the same ", signals,
                        " signals, got ", X[p].cols);
    detail::check_application(name.c_str(), rows_per_part(), cols_per_part(), op, X[p], Y[p], alpha,
                              beta);
    for (int q = 0; q < G; ++q) {
      // q == p: check_application's check above.
      require<ShapeError>(q == p || !may_overlap(X[q], ConstView<T>(Y[p])), name,
                          ": Y overlaps X of part ", q);
      require<ShapeError>(q == p || !may_share_elements(Y[q], Y[p]), name,
                          ": Y overlaps Y of part ", q);
    }
    require<ShapeError>(contexts.empty() || contexts[p] != nullptr, name, ": a null context");
    if (on_device) detail::check_device_views(name.c_str(), X[p], Y[p], *contexts[p]);
  }
  const auto context = [&](int p) -> Context& {
    return contexts.empty() ? default_context() : *contexts[p];
  };
  if (Y[0].rows == 0 || signals == 0) return;
  if (X[0].rows == 0 || alpha == T(0)) {
    for (int p = 0; p < G; ++p)
      detail::scale(beta, Y[p], context(p));
    return;
  }
  if (G == 1) return product_.apply(op, X[0], Y[0], alpha, beta, context(0));

  const std::vector<KronPartStep> plan = steps(op);
  Index largest = 0, rows = cols_per_part(op);
  for (const KronPartStep& s : plan) {
    rows = rows / s.in * s.out;
    largest = std::max(largest, rows);
  }
  const Layout layout = X[0].is_col_major() ? Layout::ColMajor : Layout::RowMajor;
  std::vector<PartScratch<T>> scratch(static_cast<std::size_t>(G));
  for (int p = 0; p < G; ++p) {
    const Index count = detail::checked_element_count(kName, largest, signals);
    scratch[p].local = Buffer<T>(count, space, context(p));
    if (plan.size() > 1 || beta != T(0)) scratch[p].exchanged = Buffer<T>(count, space, context(p));
  }

  PartsBarrier barrier(on_device ? contexts : std::span<Context* const>{});

  Index part_rows = cols_per_part(op);
  for (std::size_t s = 0; s < plan.size(); ++s) {
    const KronPartStep& step = plan[s];
    const Index out_rows = part_rows / step.in * step.out;
    detail::KronPartSources<T> sources;
    sources.parts = G;
    for (int p = 0; p < G; ++p) {
      const ConstView<T> in = s == 0 ? X[p]
                                     : ConstView<T>(make_view(scratch[p].exchanged.data(),
                                                              part_rows, signals, layout, space));
      const MatrixView<T> out =
          make_view(scratch[p].local.data(), out_rows, signals, layout, space);
      local_step(product_, step, op, in, out, s == 0 ? alpha : T(1), context(p));
      sources.part_data[p] = out.data;
      sources.row_stride = out.row_stride;
      sources.col_stride = out.col_stride;
    }
    barrier();
    const detail::KronRotation rotation{out_rows, step.out, out_rows * G / step.out};
    const bool last = s + 1 == plan.size();
    for (int p = 0; p < G; ++p) {
      const MatrixView<T> target =
          last && beta == T(0)
              ? Y[p]
              : make_view(scratch[p].exchanged.data(), out_rows, signals, layout, space);
      if (on_device) {
#if STROP_HAVE_CUDA
        detail::kron_rotation_pull_device(rotation, p, sources, target, context(p));
#endif
      } else {
        detail::kron_rotation_pull_host(rotation, p, sources, target);
      }
      if (last && beta != T(0))
        detail::axpby(T(1), ConstView<T>(target), beta, Y[p], false, context(p));
    }
    barrier();
    part_rows = out_rows;
  }
}

template class DistributedKron<float>;
template class DistributedKron<double>;
template class DistributedKron<std::complex<float>>;
template class DistributedKron<std::complex<double>>;

}  // namespace strop
