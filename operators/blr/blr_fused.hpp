#pragma once
// Internal: the one-launch tensor-core path of the BLR GEMM plans (issue #9: "full fusion of
// the stages for small ranks where it wins"). Each cuBLAS call of a plan costs the host about
// 10 us on the lent H100 (bench/NOTES-blr.md, session 19), more than a small layer's GPU
// time; one cooperative kernel runs all of a plan's steps instead (blr_fused.cu): 64 x 64
// tiles on tensor cores (m16n8k16, fp32 sums), k split where tiles are few, a grid-wide
// barrier between steps, the intermediates rounded to 16 bits as the cuBLAS plans keep them,
// through L2. Its GPU time is 2-10x cuBLAS's (mma.sync tiles, a barrier and memory latency
// per step), so it only paid where it replaced three launches with one: Monarch's plans while
// their first stage was a pointer-array GEMM (a fill kernel and two cuBLAS calls; 1.38x per
// call, session 19). Since session 27 every plan stage is one strided cuBLAS call and per call
// the kernel tied with the cuBLAS plans (Monarch, B = 4-128: medians ~1.0; LowRank and BLAST
// behind), so Auto no longer takes it; it stays a forced path (PlanPath::Fused).
#include <array>

#include "operators/blr/blr_gemm_plan.hpp"
#include "strop/core/context.hpp"

namespace strop::detail {

// Whether the kernel runs this plan: GEMM steps only (no permutation), at most three.
bool blr_fused_takes(const BlrGemmPlan& plan);

// Runs `plan` (blr_fused_takes) on the arrays `base` (indexed by PlanArray; Z1 and Z2 are
// ignored: the kernel allocates its own) of Storage values, half or bfloat16.
template <class Storage>
void blr_fused_run(const BlrGemmPlan& plan, const std::array<char*, kPlanArrays>& base, float alpha,
                   float beta, Context& ctx);

}  // namespace strop::detail
