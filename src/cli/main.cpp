// The strop command-line tool. Each subcommand lives in its own file (demo.cpp, ...).
// Exit codes: 0 success; 1 a strop::Error (bad file, shape mismatch, no GPU, ...), with
// its message on stderr; CLI11's codes for bad arguments (usage on stderr).
#include <CLI/CLI.hpp>
#include <iostream>
#include <vector>

#include "cli/commands.hpp"
#include "strop/core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "strop: structured linear operators (butterflies, Monarch, BLAST, low rank, Kronecker),\n"
      "factorized from dense matrices, saved as HDF5, applied on the CPU or the GPU.",
      "strop"};
  app.set_version_flag("--version", "strop 0.1.0");
  app.require_subcommand(1);
  app.footer("Run 'strop COMMAND --help' for the options of a command.");

  const std::vector<strop::cli::Subcommand> commands = {
      strop::cli::add_demo_command(app),  strop::cli::add_factorize_command(app),
      strop::cli::add_apply_command(app), strop::cli::add_info_command(app),
      strop::cli::add_bench_command(app), strop::cli::add_transform_command(app)};

  CLI11_PARSE(app, argc, argv);
  try {
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const strop::Error& e) {
    std::cerr << "strop: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "strop: error: out of memory\n";
    return 1;
  }
  return 0;
}
