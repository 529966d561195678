#pragma once
// The strop tool's subcommands. Each add_*_command registers its options on the parent
// app and returns the function that runs it once the command line has been parsed.
// Runners return the exit code; they throw strop::Error for bad input files or failed
// work (exit 1) and CLI::Error for option combinations CLI11 cannot check itself.
#include <CLI/CLI.hpp>
#include <functional>

namespace strop::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Subcommand add_demo_command(CLI::App& parent);
Subcommand add_factorize_command(CLI::App& parent);
Subcommand add_apply_command(CLI::App& parent);
Subcommand add_info_command(CLI::App& parent);
Subcommand add_bench_command(CLI::App& parent);
Subcommand add_transform_command(CLI::App& parent);

}  // namespace strop::cli
