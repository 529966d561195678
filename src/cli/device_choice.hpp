#pragma once
// --device cpu|cuda|auto, shared by the subcommands that can run on the GPU.
#include <CLI/CLI.hpp>
#include <string>

#include "strop/core/context.hpp"
#include "strop/core/error.hpp"

namespace strop::cli {

inline CLI::Option* add_device_option(CLI::App& app, std::string& device, bool with_auto) {
  auto* option = app.add_option("--device", device,
                                with_auto ? "Where to run: cpu, cuda, or auto (cuda when a GPU "
                                            "is visible)"
                                          : "Where to run: cpu or cuda");
  option->check(with_auto ? CLI::IsMember({"cpu", "cuda", "auto"})
                          : CLI::IsMember({"cpu", "cuda"}));
  return option->capture_default_str();
}

// True for the GPU. "cuda" without a visible device is a DeviceError; "auto" falls back.
inline bool use_gpu(const std::string& device, const char* command) {
  if (device == "cpu") return false;
  if (cuda_available()) return true;
  require<DeviceError>(device != "cuda", command,
                       ": --device cuda, but no CUDA device is visible (or strop was built "
                       "without CUDA)");
  return false;
}

}  // namespace strop::cli
