#pragma once
// The GPU side of StrassenTile (internal header): the cached device copies of an operator
// and the three-step application (operators/stl/strassen_tile_cuda.cpp).
#include <cstdint>
#include <vector>

#include "operators/stl/stl_kernels.hpp"
#include "operators/stl/stl_steps.hpp"
#include "strop/core/device_cache.hpp"
#include "strop/operators/strassen_tile.hpp"

namespace strop {

namespace detail {

// E_X then D, each r x t^2 row-major, as the coefficient type.
template <class Coef>
std::vector<Coef> stl_coder_values(const stl::Encoders& enc) {
  const Index r = enc.rank(), t2 = enc.tile * enc.tile;
  std::vector<Coef> values(static_cast<std::size_t>(2 * r * t2));
  for (Index p = 0; p < r; ++p)
    for (Index k = 0; k < t2; ++k) {
      values[p * t2 + k] = Coef(enc.encode_signal(p, k));
      values[r * t2 + p * t2 + k] = Coef(enc.decode(p, k));
    }
  return values;
}

}  // namespace detail

template <class T>
struct StrassenTile<T>::DeviceForm {
  DeviceCache<T> weight;                   // Ŵ, colour-major as on the host (and conjugated)
  std::vector<RealOf<T>> coders_host;      // E_X then D, each r x t^2 row-major
  DeviceCache<RealOf<T>> coders;           // their device copy
  DeviceCache<std::uint16_t> weight_half;  // Ŵ as half (float operators only)
  DeviceCache<std::uint16_t> weight_bf16;  // Ŵ as bfloat16 (float operators only)
};

template <class T>
const typename StrassenTile<T>::DeviceForm& StrassenTile<T>::device_form(Context&) const {
  return *device_->get([this] {
    auto form = std::make_shared<DeviceForm>();
    form->coders_host = detail::stl_coder_values<RealOf<T>>(encoders());
    return form;
  });
}

template <class T>
struct StrassenTileChain<T>::DeviceForm {
  // The mixing matrices of all layer boundaries one after the other (column-major), for A
  // (forward roles) and for A^T, A^H (adjoint roles), in T and as half/bfloat16 bits.
  DeviceCache<T> forward, adjoint;
  DeviceCache<std::uint16_t> forward_half, adjoint_half, forward_bf16, adjoint_bf16;
};

template <class T>
const typename StrassenTileChain<T>::DeviceForm& StrassenTileChain<T>::device_form(Context&) const {
  return *device_->get([] { return std::make_shared<DeviceForm>(); });
}

namespace detail {

// Device pointers of one stage (one operator) of an application.
template <class Storage>
struct StlOperands {
  using Coef = StlCoef<Storage>;
  const Coef* encoder = nullptr;  // r x t^2 row-major
  const Coef* decoder = nullptr;
  const Coef* encoder_host = nullptr;  // the same on the host (kernel parameters)
  const Coef* decoder_host = nullptr;
  const Storage* weight = nullptr;       // Ŵ colour-major
  const Storage* weight_conj = nullptr;  // conj(Ŵ), only for A^H into a feature-fast Y
};

// A stage of a device application: its steps, operands, and the mixing into the next stage
// (r_next x r column-major, stl_mixing), null for the last.
template <class Storage>
struct StlDeviceStage {
  StlSteps steps;
  StlOperands<Storage> operands;
  const Storage* mix_to_next = nullptr;
  Index mix_ld = 0;  // its leading dimension (r_next rounded up to 8 for tensor cores)
};

// Leading dimension of a mixing matrix with `rows` rows: a multiple of 8 elements, which
// cuBLAS needs to run 16-bit GEMMs on tensor cores (r = 49 would otherwise fall back).
inline Index stl_mixing_ld(Index rows) {
  return (rows + 7) / 8 * 8;
}

#if STROP_HAVE_CUDA
// Y = alpha (stage_last ... stage_0)(X) + beta Y on device views, the colours kept encoded
// between stages (strassen_tile_cuda.cpp).
template <class Storage>
void stl_run_device(const std::vector<StlDeviceStage<Storage>>& stages, ConstView<Storage> X,
                    MatrixView<Storage> Y, StlCompute<Storage> alpha, StlCompute<Storage> beta,
                    Context& ctx);
// The device operands of one operator in one application (cached device copies).
template <class Storage>
StlOperands<Storage> stl_operands(const StrassenTile<StlCompute<Storage>>& A, const StlSteps& steps,
                                  Context& ctx);
// op(A) X on device views: Storage is A's scalar type, or half/bfloat16 for a float A.
template <class Storage>
void stl_apply_device(const StrassenTile<StlCompute<Storage>>& A, const StlSteps& steps,
                      ConstView<Storage> X, MatrixView<Storage> Y, StlCompute<Storage> alpha,
                      StlCompute<Storage> beta, Context& ctx);
// op(A_1 ... A_L) X on device views with the activations kept encoded; B a multiple of t.
template <class Storage>
void stl_chain_apply_device(const StrassenTileChain<StlCompute<Storage>>& A,
                            const std::vector<StlSteps>& stages, ConstView<Storage> X,
                            MatrixView<Storage> Y, StlCompute<Storage> alpha,
                            StlCompute<Storage> beta, Context& ctx);
#endif

// The stages of op(A_1 ... A_L) in the order they run (A_L first for A; A_1 first for A^T
// and A^H, whose encoders are the layers' decoders).
template <class T>
std::vector<StlSteps> stl_chain_stages(const StrassenTileChain<T>& A, Op op, Index batch) {
  std::vector<StlSteps> stages;
  const auto& layers = A.layers();
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const auto& layer = op == Op::NoTrans ? layers[layers.size() - 1 - k] : layers[k];
    stages.push_back(stl_steps(layer.encoders(), layer.rows(), layer.cols(), op, batch));
  }
  return stages;
}

// True when some layer boundary of the chain has no features: the chain is then the zero
// map, which its layers' application (the GPU's colour GEMMs need leading dimensions >= 1)
// does not take.
template <class T>
bool stl_chain_has_empty_inner(const StrassenTileChain<T>& A) {
  const auto& layers = A.layers();
  for (std::size_t k = 0; k + 1 < layers.size(); ++k)
    if (layers[k].cols() == 0) return true;
  return false;
}

}  // namespace detail
}  // namespace strop
