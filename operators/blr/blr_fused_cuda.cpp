// The one-launch tensor-core path's plan side (blr_fused.hpp): each GEMM step of a plan as a
// step of the kernel (blr_fused.cu).
#include <climits>
#include <variant>

#include "operators/blr/blr_fused.hpp"
#include "operators/blr/blr_fused_kernel.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

static_assert(kFusedArrays == kPlanArrays && int(PlanArray::Z1) == kFusedZ1 &&
              int(PlanArray::Z2) == kFusedZ2);

FusedOperand operand_of(const PlanOperand& p) {
  return {static_cast<int>(p.array), p.offset, p.ld, p.stride, 0};
}

bool fits(const PlanGemm& g) {
  return g.m > 0 && g.n > 0 && g.k > 0 && g.m <= INT_MAX && g.n <= INT_MAX && g.k <= INT_MAX;
}

}  // namespace

bool blr_fused_takes(const BlrGemmPlan& plan) {
  if (plan.steps.empty() || plan.steps.size() > std::size_t(kFusedMaxSteps)) return false;
  for (const PlanStep& step : plan.steps) {
    const auto* g = std::get_if<PlanGemm>(&step);
    if (g == nullptr || !fits(*g)) return false;
  }
  return true;
}

template <class Storage>
void blr_fused_run(const BlrGemmPlan& plan, const std::array<char*, kPlanArrays>& base, float alpha,
                   float beta, Context& ctx) {
  require<DeviceError>(blr_fused_takes(plan),
                       "blr fused: the plan has a step the fused kernel does not run");
  FusedArgs a;
  for (int i = 0; i < kPlanArrays; ++i)
    a.arrays[i] = base[std::size_t(i)];
  a.alpha = alpha, a.beta = beta;
  a.z1_size = plan.z1_size, a.z2_size = plan.z2_size;
  for (const PlanStep& step : plan.steps) {
    const auto& g = std::get<PlanGemm>(step);
    FusedStep& s = a.steps[a.count++];
    s.a = operand_of(g.a), s.b = operand_of(g.b), s.c = operand_of(g.c);
    s.trans_a = g.trans_a, s.trans_b = g.trans_b;
    s.m = int(g.m), s.n = int(g.n), s.k = int(g.k);
    s.batch = g.batch;
    s.to_y = g.c.array == PlanArray::Y;
  }
  launch_blr_fused<Storage>(a, ctx);
}

template void blr_fused_run<half>(const BlrGemmPlan&, const std::array<char*, kPlanArrays>&, float,
                                  float, Context&);
template void blr_fused_run<bfloat16>(const BlrGemmPlan&, const std::array<char*, kPlanArrays>&,
                                      float, float, Context&);

}  // namespace strop::detail
