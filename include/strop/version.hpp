#pragma once
// strop's version, in one place: CMake reads these three lines for project(strop VERSION ...)
// and the installed package's version check, the strop tool prints it (--version), and every
// HDF5 file records the version that wrote it (root attribute strop_library_version).
#define STROP_VERSION_MAJOR 0
#define STROP_VERSION_MINOR 1
#define STROP_VERSION_PATCH 0

#define STROP_VERSION_TEXT_(major, minor, patch) #major "." #minor "." #patch
#define STROP_VERSION_TEXT(major, minor, patch) STROP_VERSION_TEXT_(major, minor, patch)
// "0.1.0"
#define STROP_VERSION_STRING \
  STROP_VERSION_TEXT(STROP_VERSION_MAJOR, STROP_VERSION_MINOR, STROP_VERSION_PATCH)

namespace strop {
inline constexpr const char* version_string = STROP_VERSION_STRING;
}  // namespace strop
