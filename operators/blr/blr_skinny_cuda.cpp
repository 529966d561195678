// The skinny path's plan side (blr_skinny.hpp): each GEMM step of a plan as a skinny stage
// (blr_skinny_kernel.hpp), with BLAST's coupling step folded into the stage after it.
#include <variant>
#include <vector>

#include "operators/blr/blr_decode.hpp"
#include "operators/blr/blr_skinny.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

// The largest inner dimension of a step folded into the next stage's activations: each
// activation then costs that many multiply-adds in the stage's prologue.
constexpr long long kFoldMaxDepth = 32;

// A GEMM step (decode_stage_of) as a stage over the arrays `base` of `value_bytes` values.
SkinnyStage stage_of(const PlanGemm& g, const DecodeStage& d,
                     const std::array<char*, kPlanArrays>& base, std::size_t value_bytes,
                     Index tokens) {
  auto at = [&](const DecodeOperand& o) -> char* {
    return base[std::size_t(o.array)] + o.offset * static_cast<long long>(value_bytes);
  };
  SkinnyStage s;
  // W_e(p, j) = W(row j, k p); S_e(i, p) = act(k p, token i); C_e(i, j) = C(row j, token i).
  s.w = {at(d.w), d.w.stride, d.w_ld, 1};
  s.s = {at(d.act), d.act.stride, d.act_token, d.act_k};
  s.c = {at(d.out), d.out.stride, d.out_token, d.out_row};
  s.entries = g.batch, s.columns = d.rows, s.depth = d.depth;
  s.tokens = int(tokens);
  return s;
}

// Whether `next` reads exactly what the small product `prev` writes, with prev's entries as
// next's depth and prev's columns as next's entries: S_e(i, p) = C_p(i, e).
bool reads_output_of(const SkinnyStage& next, const SkinnyStage& prev) {
  return next.s.data == prev.c.data && next.s.col == prev.c.entry && next.s.entry == prev.c.col &&
         next.s.row == prev.c.row && next.depth == prev.entries && next.entries == prev.columns &&
         prev.depth <= kFoldMaxDepth && prev.alpha == 1.0f && prev.beta == 0.0f;
}

}  // namespace

bool blr_skinny_takes(const BlrGemmPlan& plan, Index batch) {
  if (batch < 1 || batch > kSkinnyMaxTokens || !every_step_is_a_decode_stage(plan)) return false;
  // The launch's grid: entries and column tiles each at most kSkinnyMaxGrid.
  for (const PlanStep& step : plan.steps) {
    const auto& g = std::get<PlanGemm>(step);
    if (g.batch > kSkinnyMaxGrid || decode_stage_of(g)->rows > kSkinnyMinTile * kSkinnyMaxGrid)
      return false;
  }
  return true;
}

template <class Storage>
void blr_skinny_run(const BlrGemmPlan& plan, const std::array<char*, kPlanArrays>& base,
                    Index batch, float alpha, float beta, Context& ctx) {
  require<DeviceError>(blr_skinny_takes(plan, batch),
                       "blr skinny path: the plan has a step the skinny kernel does not run");
  std::vector<SkinnyStage> stages;
  for (const PlanStep& step : plan.steps) {
    const auto& g = std::get<PlanGemm>(step);
    stages.push_back(stage_of(g, *decode_stage_of(g), base, sizeof(Storage), batch));
    if (g.c.array == PlanArray::Y) stages.back().alpha = alpha, stages.back().beta = beta;
  }
  // Fold from the last stage back, one level deep: BLAST's coupling goes into its last stage,
  // and the stage before a folded pair (its first stage, small as it may be) stays a stage of
  // its own.
  for (std::size_t k = stages.size(); k-- > 1;) {
    SkinnyStage& next = stages[k];
    const SkinnyStage& prev = stages[k - 1];
    if (!reads_output_of(next, prev)) continue;
    // G_p(q, e) = W_p(q, e) and Z_p(i, q) = S_p(i, q) of the small product, which no longer
    // runs on its own.
    next.coupling = prev.w;
    next.coupled = prev.s;
    next.coupling_depth = int(prev.depth);
    stages.erase(stages.begin() + std::ptrdiff_t(k - 1));
    --k;  // skip the folded pair
  }
  for (const SkinnyStage& s : stages)
    launch_blr_skinny<Storage>(s, ctx);
}

template void blr_skinny_run<float>(const BlrGemmPlan&, const std::array<char*, kPlanArrays>&,
                                    Index, float, float, Context&);
template void blr_skinny_run<half>(const BlrGemmPlan&, const std::array<char*, kPlanArrays>&, Index,
                                   float, float, Context&);
template void blr_skinny_run<bfloat16>(const BlrGemmPlan&, const std::array<char*, kPlanArrays>&,
                                       Index, float, float, Context&);

}  // namespace strop::detail
