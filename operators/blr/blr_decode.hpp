#pragma once
// Internal: the decode path of the BLR GEMM plans (issue #9). With a few signals (B <= 8,
// the tokens of a decode step) every stage of a plan is a skinny product whose cost is
// reading its weights once, and separate cuBLAS launches cost more than the reads. One
// cooperative kernel runs all of a plan's stages instead (blr_decode.cu): blocks stream the
// weights in coalesced 16-byte loads over chunks of k and add their sums into fp32
// accumulators, a grid-wide barrier separates the stages, and the block that completes a
// row set of the last stage writes it to Y.
#include <array>
#include <optional>

#include "operators/blr/blr_decode_kernel.hpp"
#include "operators/blr/blr_gemm_device.hpp"
#include "operators/blr/blr_gemm_plan.hpp"
#include "strop/core/context.hpp"

namespace strop::detail {

// A GEMM step as a stage C(row, token) = sum_k W(row, k) act(k, token) whose weights (the
// operand that is neither a signal nor a workspace) have their output rows contiguous; none
// for other steps (A^T plans read their weights along the other direction). Fills every
// field but the launch's (entries and after).
std::optional<DecodeStage> decode_stage_of(const PlanGemm& g);
// Whether every step of the plan is a GEMM step that decode_stage_of takes.
bool every_step_is_a_decode_stage(const BlrGemmPlan& plan);

// Whether the decode kernel runs this plan: at most kDecodeMaxBatch signals, GEMM steps
// only (no permutation), and in each stage the weights' output rows contiguous in memory
// (the NoTrans plans of BLAST, Monarch and LowRank, both layouts; A^T plans read the
// weights along the other direction and stay on cuBLAS).
bool blr_decode_takes(const BlrGemmPlan& plan, Index batch);

// BLAST's couplings in the operator's layout, s_{k,l}[t] at k o_stride + l j_stride + t of
// `array` (block row k: the output block of A's plan): with them the decode kernel folds the
// coupling stage into the last stage (blr_decode_kernel.hpp, DecodeArgs::Coupling).
struct DecodeCouplingSource {
  PlanArray array = PlanArray::Unfused;
  Index o_stride = 0, j_stride = 0;
};

// Runs `plan` (blr_decode_takes) on the arrays `base` (indexed by PlanArray; X, Y and the
// weights hold Storage values: float, half or bfloat16; Z1 and Z2 are ignored: the decode
// path keeps its intermediates in fp32 workspaces of its own). y_extent: 1 + the largest
// offset of Y's values.
template <class Storage>
void blr_decode_run(const BlrGemmPlan& plan, const std::array<char*, kPlanArrays>& base,
                    Index batch, Index y_extent, float alpha, float beta, Context& ctx,
                    const DecodeCouplingSource* coupling = nullptr);

}  // namespace strop::detail
