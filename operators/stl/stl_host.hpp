#pragma once
// The host path of Strassen-Tile operators and chains (internal header): the steps of
// stl_steps.hpp with Eigen. Colours are a (pairs x r) matrix whose column p is the colour-p
// matrix (signal tiles x feature tiles, column-major).
#include <vector>

#include "operators/stl/stl_steps.hpp"
#include "strop/core/view.hpp"
#include "strop/expr/operator_base.hpp"

namespace strop::detail {

// One stage of a chain: its steps and its encoded weights (colour-major, host).
template <class T>
struct StlHostStage {
  StlSteps steps;
  const T* weights = nullptr;
};

// Y = alpha (stage_last ... stage_0)(X) + beta Y with the colours kept encoded between the
// stages (one encode, one decode). A single stage is one operator's application.
template <class T>
void stl_run_host(const std::vector<StlHostStage<T>>& stages, ConstView<T> X, MatrixView<T> Y,
                  T alpha, T beta);

}  // namespace strop::detail
