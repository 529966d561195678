// The decode path's plan side (blr_decode.hpp): each GEMM step of a plan as a stage of the
// decode kernel (blr_decode.cu), whose weights are the operand that is neither a signal nor
// a workspace.
#include <climits>
#include <optional>
#include <variant>

#include "operators/blr/blr_decode.hpp"
#include "operators/blr/blr_decode_kernel.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

static_assert(kDecodeArrays == kPlanArrays && int(PlanArray::X) == kDecodeX &&
              int(PlanArray::Y) == kDecodeY && int(PlanArray::Z1) == kDecodeZ1 &&
              int(PlanArray::Z2) == kDecodeZ2);

bool is_activation(PlanArray a) {
  return a == PlanArray::X || a == PlanArray::Z1 || a == PlanArray::Z2;
}

DecodeOperand operand_of(const PlanOperand& p) {
  return {static_cast<int>(p.array), p.offset, p.stride};
}

}  // namespace

std::optional<DecodeStage> decode_stage_of(const PlanGemm& g) {
  DecodeStage s;
  const bool weights_a = !is_activation(g.a.array), weights_b = !is_activation(g.b.array);
  const bool writes_workspace_or_y =
      g.c.array == PlanArray::Y || g.c.array == PlanArray::Z1 || g.c.array == PlanArray::Z2;
  const bool sized =
      g.m > 0 && g.n > 0 && g.k > 0 && g.m <= INT_MAX && g.n <= INT_MAX && g.k <= INT_MAX;
  if (weights_a == weights_b || !writes_workspace_or_y || !sized) return std::nullopt;
  if (weights_b) {
    // C (tokens x rows) = op(a) op(b), op(b)(k, row) = b[row + k ld] (op T).
    if (!g.trans_b) return std::nullopt;
    s.rows = int(g.n);
    s.w = operand_of(g.b), s.w_ld = g.b.ld;
    s.act = operand_of(g.a);
    s.act_k = g.trans_a ? 1 : g.a.ld;
    s.act_token = g.trans_a ? g.a.ld : 1;
    s.out_row = g.c.ld, s.out_token = 1;
  } else {
    // C (rows x tokens) = op(a) op(b), op(a)(row, k) = a[row + k ld] (op N).
    if (g.trans_a) return std::nullopt;
    s.rows = int(g.m);
    s.w = operand_of(g.a), s.w_ld = g.a.ld;
    s.act = operand_of(g.b);
    s.act_k = g.trans_b ? g.b.ld : 1;
    s.act_token = g.trans_b ? 1 : g.b.ld;
    s.out_row = 1, s.out_token = g.c.ld;
  }
  s.out = operand_of(g.c);
  s.depth = int(g.k);
  return s;
}

bool every_step_is_a_decode_stage(const BlrGemmPlan& plan) {
  for (const PlanStep& step : plan.steps) {
    const auto* g = std::get_if<PlanGemm>(&step);
    if (g == nullptr || !decode_stage_of(*g)) return false;
  }
  return true;
}

bool blr_decode_takes(const BlrGemmPlan& plan, Index batch) {
  return batch >= 1 && batch <= kDecodeMaxBatch &&
         plan.steps.size() <= std::size_t(kDecodeMaxStages) && every_step_is_a_decode_stage(plan);
}

template <class Storage>
void blr_decode_run(const BlrGemmPlan& plan, const std::array<char*, kPlanArrays>& base,
                    Index batch, Index y_extent, float alpha, float beta, Context& ctx,
                    const DecodeCouplingSource* coupling) {
  require<DeviceError>(blr_decode_takes(plan, batch),
                       "blr decode: the plan has a step the decode kernel does not run");
  DecodeArgs a;
  for (int i = 0; i < kPlanArrays; ++i)
    a.arrays[i] = base[std::size_t(i)];
  a.tokens = int(batch);
  a.z1_size = plan.z1_size, a.z2_size = plan.z2_size, a.y_extent = y_extent;
  a.alpha = alpha, a.beta = beta;
  if (coupling != nullptr) {
    a.coupling.array = static_cast<int>(coupling->array);
    a.coupling.o_stride = coupling->o_stride, a.coupling.j_stride = coupling->j_stride;
  }
  for (const PlanStep& step : plan.steps) {
    const auto& g = std::get<PlanGemm>(step);
    DecodeStage s = *decode_stage_of(g);
    s.entries = g.batch;  // launch_blr_decode cuts the entries into row groups and items
    a.stages[a.count++] = s;
  }
  launch_blr_decode<Storage>(a, ctx);
}

template void blr_decode_run<float>(const BlrGemmPlan&, const std::array<char*, kPlanArrays>&,
                                    Index, Index, float, float, Context&,
                                    const DecodeCouplingSource*);
template void blr_decode_run<half>(const BlrGemmPlan&, const std::array<char*, kPlanArrays>&, Index,
                                   Index, float, float, Context&, const DecodeCouplingSource*);
template void blr_decode_run<bfloat16>(const BlrGemmPlan&, const std::array<char*, kPlanArrays>&,
                                       Index, Index, float, float, Context&,
                                       const DecodeCouplingSource*);

}  // namespace strop::detail
