// The strop command-line tool. Subcommands live in their own files (demo.cpp, ...).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "strop/core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"strop: structured linear operators, composed lazily, applied on CPU or GPU"};
  app.set_version_flag("--version", "strop 0.1.0");
  app.require_subcommand(1);

  strop::cli::DemoOptions demo;
  auto* demo_cmd = app.add_subcommand(
      "demo",
      "Build structured operators, apply them to a batch of signals on the CPU (and the "
      "GPU when present), and print their error against the dense matrix and their speed");
  demo_cmd->add_option("-n,--size", demo.size, "Operator size n (a power of two >= 16)")
      ->check(CLI::Range(16, 1 << 14));
  demo_cmd->add_option("-b,--batch", demo.batch, "Number of signals")
      ->check(CLI::Range(1, 1 << 20));
  demo_cmd->add_option("--device", demo.device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));

  CLI11_PARSE(app, argc, argv);
  try {
    if (*demo_cmd) return strop::cli::run_demo(demo);
  } catch (const strop::Error& e) {
    std::cerr << "strop: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
