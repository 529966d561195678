#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "strop/core/error.hpp"

namespace strop::io {

namespace fs = std::filesystem;

namespace {

constexpr fs::perms kAnyWrite =
    fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;

// The file that writing `path` replaces: renaming over a symbolic link would replace the
// link itself with a regular file. A dangling link names the file to create.
fs::path follow_links(const std::string& path) {
  fs::path target(path);
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(target, ec); ++hops) {
    require<IoError>(hops < 40, path, ": too many levels of symbolic links");
    const fs::path to = fs::read_symlink(target, ec);
    require<IoError>(!ec, path, ": cannot read the symbolic link: ", ec.message());
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
  return target;
}

// A new empty file ".NAME.tmp-<pid>-<n>" beside `target`. Created exclusively: a temporary
// that a killed process with our pid left behind is skipped, never reused (its stale
// contents would end up in the file). NAME is cut to 100 bytes: a legal 255-byte name
// plus the decorations would exceed the file system's limit on a name.
fs::path create_temporary(const std::string& path, const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  const std::string name = target.filename().string().substr(0, 100);
  for (;;) {
    // (Built with concat rather than "." + string: GCC 12 at -O3 warns falsely about the latter.)
    const fs::path temp =
        target.parent_path() / detail::concat(".", name, ".tmp-", ::getpid(), "-", counter++);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return temp;
    }
    require<IoError>(errno == EEXIST, path, ": cannot create a temporary file in '",
                     target.parent_path().empty() ? "." : target.parent_path().string(),
                     "': ", std::strerror(errno));
  }
}

}  // namespace

fs::path require_replaceable(const std::string& path) {
  const fs::path target = follow_links(path);
  std::error_code ec;
  const fs::file_status existing = fs::status(target, ec);
  if (fs::exists(existing)) {
    require<IoError>(!fs::is_directory(existing), path, ": is a directory");
    require<IoError>(fs::is_regular_file(existing), path,
                     ": not a regular file (a device, a pipe or a socket); strop replaces whole "
                     "files only");
    // The rename would replace a read-only file as if it were writable. No write bit at all
    // says "keep" even to root, whom access() lets write anything.
    const bool writable = ::access(target.c_str(), W_OK) == 0;
    require<IoError>(writable, path, ": the file is not writable (", std::strerror(errno), ")");
    require<IoError>((existing.permissions() & kAnyWrite) != fs::perms::none, path,
                     ": the file is not writable (read-only)");
  } else {
    const fs::path directory = target.parent_path().empty() ? "." : target.parent_path();
    require<IoError>(fs::is_directory(directory, ec), path, ": no directory '", directory.string(),
                     "'");
  }
  return target;
}

void replace_atomically(
    const std::string& path,
    const std::function<void(const fs::path& target, const fs::path& temp)>& fill) {
  const fs::path target = require_replaceable(path);
  std::error_code ec;
  const fs::file_status existing = fs::status(target, ec);
  const fs::path temp = create_temporary(path, target);
  try {
    fill(target, temp);
    // The new file keeps the old one's mode: a private (0600) file stays private.
    if (fs::exists(existing)) {
      fs::permissions(temp, existing.permissions(), ec);
      require<IoError>(!ec, path,
                       ": cannot set the permissions of the temporary file: ", ec.message());
    }
    fs::rename(temp, target, ec);
    require<IoError>(!ec, path, ": cannot replace the file: ", ec.message());
  } catch (...) {
    fs::remove(temp, ec);
    throw;
  }
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  replace_atomically(path, [&](const fs::path&, const fs::path& temp) {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    require<IoError>(bool(out), path, ": cannot open the temporary file: ", std::strerror(errno));
    write(out);
    out.close();
    require<IoError>(bool(out), path, ": cannot write the temporary file (disk full?)");
  });
}

}  // namespace strop::io
