#include "strop/operators/stl_path.hpp"

namespace strop {
namespace {
thread_local StlPath current_path = StlPath::Auto;
}

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

}  // namespace strop
