// The GPU path of StrassenTileChain: the stages of stl_run_device with each boundary's mixing
// matrix (the fused decode-encode) cached on the device per role (A or its adjoint) and type.
#include <cstdint>
#include <cstring>

#include "operators/stl/stl_device.hpp"

namespace strop::detail {
namespace {

// The mixing matrices of consecutive stages, column-major with leading dimension
// stl_mixing_ld (zero padded), one after the other.
template <class Value>
std::vector<Value> mixing_values(const std::vector<StlSteps>& stages) {
  std::vector<Value> values;
  for (std::size_t k = 0; k + 1 < stages.size(); ++k) {
    const Eigen::MatrixXd m = stl_mixing(stages[k], stages[k + 1]);
    const Index ld = stl_mixing_ld(m.rows());
    for (Index c = 0; c < m.cols(); ++c)
      for (Index r = 0; r < ld; ++r) {
        const double v = r < m.rows() ? m(r, c) : 0.0;
        if constexpr (is_reduced_precision_v<Value>) {
          values.push_back(Value(float(v)));
        } else {
          values.push_back(Value(v));
        }
      }
  }
  return values;
}

template <class Storage, class T>
const Storage* device_mixing(const typename StrassenTileChain<T>::DeviceForm& form,
                             const std::vector<StlSteps>& stages, Index count, Context& ctx) {
  const bool adjoint = stages.front().adjoint_roles();
  if constexpr (is_reduced_precision_v<Storage>) {
    const bool is_half = std::is_same_v<Storage, half>;
    const auto& cache = adjoint ? (is_half ? form.adjoint_half : form.adjoint_bf16)
                                : (is_half ? form.forward_half : form.forward_bf16);
    return reinterpret_cast<const Storage*>(cache.get_or_make(count, ctx, [&] {
      const std::vector<Storage> rounded = mixing_values<Storage>(stages);
      std::vector<std::uint16_t> bits(rounded.size());
      std::memcpy(bits.data(), rounded.data(), bits.size() * sizeof(std::uint16_t));
      return bits;
    }));
  } else {
    const auto& cache = adjoint ? form.adjoint : form.forward;
    return cache.get_or_make(count, ctx, [&] { return mixing_values<T>(stages); });
  }
}

}  // namespace

template <class Storage>
void stl_chain_apply_device(const StrassenTileChain<StlCompute<Storage>>& A,
                            const std::vector<StlSteps>& stages, ConstView<Storage> X,
                            MatrixView<Storage> Y, StlCompute<Storage> alpha,
                            StlCompute<Storage> beta, Context& ctx) {
  using T = StlCompute<Storage>;
  const auto& layers = A.layers();
  Index mixing_count = 0;
  for (std::size_t k = 0; k + 1 < stages.size(); ++k)
    mixing_count += stages[k].rank * stl_mixing_ld(stages[k + 1].rank);
  const Storage* mixing =
      mixing_count > 0 ? device_mixing<Storage, T>(A.device_form(ctx), stages, mixing_count, ctx)
                       : nullptr;
  std::vector<StlDeviceStage<Storage>> device_stages;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const auto& layer = stages[k].adjoint_roles() ? layers[k] : layers[layers.size() - 1 - k];
    StlDeviceStage<Storage> stage{stages[k], stl_operands<Storage>(layer, stages[k], ctx), nullptr};
    if (k + 1 < stages.size()) {
      stage.mix_to_next = mixing;
      stage.mix_ld = stl_mixing_ld(stages[k + 1].rank);
      mixing += stages[k].rank * stage.mix_ld;
    }
    device_stages.push_back(stage);
  }
  stl_run_device<Storage>(device_stages, X, Y, alpha, beta, ctx);
}

#define STROP_INSTANTIATE(S)                                                          \
  template void stl_chain_apply_device<S>(const StrassenTileChain<StlCompute<S>>&,    \
                                          const std::vector<StlSteps>&, ConstView<S>, \
                                          MatrixView<S>, StlCompute<S>, StlCompute<S>, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
