#include "operators/transforms/radix_plan.hpp"

#include <algorithm>

#include "strop/core/error.hpp"
#include "strop/operators/ks_pattern.hpp"

namespace strop::transforms {

SizeSplit split_odd(Index n) {
  SizeSplit s{n, 0};
  while (s.leading > 1 && s.leading % 2 == 0) {
    s.leading /= 2;
    ++s.stages;
  }
  return s;
}

int default_factors(int stages) {
  return std::max(1, (stages + 1) / 2);
}

std::vector<Index> radices(const SizeSplit& split, const TransformOptions& options) {
  const int factors = options.factors;
  require<PatternError>(factors >= 0, "transform: the number of factors must be >= 0 (0 picks ",
                        "the default), got ", factors);
  // Checked here, where every transform reads its options: an unknown value (a cast integer)
  // would otherwise pick one of the scalings silently.
  const auto norm = options.normalization;
  require<PatternError>(norm == Normalization::Backward || norm == Normalization::Orthonormal ||
                            norm == Normalization::None,
                        "transform: unknown normalization value ", static_cast<int>(norm));
  std::vector<Index> out;
  if (split.leading > 1) out.push_back(split.leading);
  if (split.stages > 0) {
    const int groups =
        std::min(factors == 0 ? default_factors(split.stages) : factors, split.stages);
    for (int g = 0; g < groups; ++g) {
      // The first stages % groups runs get one stage more.
      const int length = split.stages / groups + (g < split.stages % groups ? 1 : 0);
      out.push_back(Index(1) << length);
    }
  }
  if (out.empty()) out.push_back(1);
  return out;
}

std::vector<Stage> stages_of(const std::vector<Index>& radices) {
  Index n = 1;
  for (Index r : radices)
    n *= r;
  std::vector<Stage> out;
  Index a = 1;
  for (Index r : radices) {
    const Stage stage{a, r, n / (a * r)};
    KSPattern{stage.a, stage.r, stage.r, stage.d}.validate();  // before a builder allocates
    out.push_back(stage);
    a *= r;
  }
  return out;
}

std::vector<Index> digit_reversal(const std::vector<Index>& radices) {
  Index n = 1;
  for (Index r : radices)
    n *= r;
  std::vector<Index> perm(static_cast<std::size_t>(n));
  std::vector<Index> digits(radices.size());
  for (Index x = 0; x < n; ++x) {
    Index rest = x;
    for (std::size_t l = radices.size(); l-- > 0;) {
      digits[l] = rest % radices[l];
      rest /= radices[l];
    }
    Index y = 0;
    for (std::size_t l = radices.size(); l-- > 0;)
      y = y * radices[l] + digits[l];
    perm[static_cast<std::size_t>(x)] = y;
  }
  return perm;
}

std::vector<Index> inverse_permutation(const std::vector<Index>& p) {
  std::vector<Index> q(p.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    q[static_cast<std::size_t>(p[i])] = static_cast<Index>(i);
  return q;
}

}  // namespace strop::transforms

namespace strop {
int default_transform_factors(Index n) {
  return transforms::default_factors(transforms::split_odd(std::max<Index>(n, 1)).stages);
}
}  // namespace strop
