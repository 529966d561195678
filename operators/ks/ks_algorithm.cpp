#include "strop/operators/ks_algorithm.hpp"

namespace strop {
namespace {
thread_local KSAlgorithm current_algorithm = KSAlgorithm::Auto;
}

std::string_view to_string(KSAlgorithm algorithm) {
  switch (algorithm) {
    case KSAlgorithm::Auto:
      return "auto";
    case KSAlgorithm::Fused:
      return "fused";
    case KSAlgorithm::StridedGemm:
      return "strided_gemm";
    case KSAlgorithm::Bmm:
      return "bmm";
    case KSAlgorithm::Dense:
      return "dense";
    case KSAlgorithm::SmallBatch:
      return "small_batch";
  }
  return "?";
}

KSAlgorithm ks_algorithm() {
  return current_algorithm;
}
void set_ks_algorithm(KSAlgorithm algorithm) {
  current_algorithm = algorithm;
}

}  // namespace strop
