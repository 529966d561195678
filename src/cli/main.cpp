// The strop command-line tool. Each subcommand lives in its own file (demo.cpp, ...).
// Exit codes: 0 success; 1 a strop::Error (bad file, shape mismatch, no GPU, ...) or any
// other error (standard output that could not be written, ...), with its message on
// stderr; CLI11's codes for bad arguments (usage on stderr).
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "strop/core/error.hpp"
#include "strop/version.hpp"

namespace {

int fail(const std::string& message) {
  std::cerr << "strop: error: " << message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "strop: structured linear operators (butterflies, Monarch, BLAST, low rank, Kronecker),\n"
      "factorized from dense matrices, saved as HDF5, applied on the CPU or the GPU.",
      "strop"};
  app.set_version_flag("--version", std::string("strop ") + strop::version_string);
  app.require_subcommand(1);
  app.footer("Run 'strop COMMAND --help' for the options of a command.");

  const std::vector<strop::cli::Subcommand> commands = {
      strop::cli::add_demo_command(app),  strop::cli::add_factorize_command(app),
      strop::cli::add_apply_command(app), strop::cli::add_info_command(app),
      strop::cli::add_bench_command(app), strop::cli::add_transform_command(app)};

  int code = 0;
  try {
    app.parse(argc, argv);
    for (const auto& command : commands)
      if (command.app->parsed()) code = command.run();
  } catch (const CLI::Error& e) {  // bad arguments, and --help
    code = app.exit(e);
  } catch (const strop::Error& e) {
    code = fail(e.what());
  } catch (const std::bad_alloc&) {
    code = fail("out of memory");
  } catch (const std::exception& e) {  // from the standard library: still a message, no abort
    code = fail(e.what());
  }
  // Output goes through buffers; an error writing it (a full disk) surfaces only when they
  // are flushed. A run whose report was lost has failed.
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (!flushed || std::ferror(stdout) || !std::cout)
    code = fail(std::string("cannot write the standard output") +
                (flushed ? "" : std::string(": ") + std::strerror(error)));
  return code;
}
