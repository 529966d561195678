#pragma once
// Entry points of the strop tool's subcommands.
#include <string>

namespace strop::cli {

struct DemoOptions {
  int size = 1024;
  int batch = 256;
  std::string device = "auto";
};
int run_demo(const DemoOptions& options);

}  // namespace strop::cli
