#include "strop/operators/stl_path.hpp"

#include "operators/stl/stl_kernels.hpp"

namespace strop {
namespace {
thread_local StlPath current_path = StlPath::Auto;
thread_local detail::StlCoding current_coding = detail::StlCoding::TensorCores;
}  // namespace

std::string_view to_string(StlPath path) {
  switch (path) {
    case StlPath::Auto:
      return "auto";
    case StlPath::Steps:
      return "steps";
    case StlPath::Fused:
      return "fused";
  }
  return "?";
}

StlPath stl_path() {
  return current_path;
}
void set_stl_path(StlPath path) {
  current_path = path;
}

namespace detail {

StlCoding stl_coding() {
  return current_coding;
}
void set_stl_coding(StlCoding coding) {
  current_coding = coding;
}

}  // namespace detail
}  // namespace strop
