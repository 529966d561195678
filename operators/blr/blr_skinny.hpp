#pragma once
// Internal: the skinny path of the BLR GEMM plans (issue #9). With a few signals (the tokens
// of a decode step, B <= 16) every stage is a skinny product whose cost is reading its
// weights once. Each stage runs as its own launch of our kernel (blr_skinny.cu), and the
// launches are chained by programmatic dependent launch: a stage starts while the previous
// one runs and reads its weights before it waits for the previous stage's output. BLAST's
// coupling stage is folded into the last stage's activations. The stages' sums stay in fp32
// on chip; the intermediates between stages are rounded to the signals' type, as in the
// cuBLAS plans.
#include <array>

#include "operators/blr/blr_gemm_plan.hpp"
#include "operators/blr/blr_skinny_kernel.hpp"
#include "strop/core/context.hpp"

namespace strop::detail {

// Whether the skinny path runs this plan: 1 to kSkinnyMaxTokens signals and GEMM steps whose
// weights have their output rows contiguous (decode_stage_of: the NoTrans plans of BLAST,
// Monarch and LowRank, both layouts).
bool blr_skinny_takes(const BlrGemmPlan& plan, Index batch);

// Runs `plan` (blr_skinny_takes) on the arrays `base` (indexed by PlanArray; every array
// holds Storage values: float, half or bfloat16; Z1 and Z2 are the plan's workspaces).
template <class Storage>
void blr_skinny_run(const BlrGemmPlan& plan, const std::array<char*, kPlanArrays>& base,
                    Index batch, float alpha, float beta, Context& ctx);

}  // namespace strop::detail
