#include "io/atomic_file.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "strop/core/error.hpp"

namespace strop::io {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  static std::atomic<unsigned> counter{0};
  const fs::path target(path);
  // (Built with concat rather than "." + string: GCC 12 at -O3 warns falsely about the latter.)
  const fs::path temp = target.parent_path() / detail::concat(".", target.filename().string(),
                                                              ".tmp-", ::getpid(), "-", counter++);
  std::error_code ec;
  try {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    require<IoError>(bool(out), path, ": cannot create a temporary file in '",
                     target.parent_path().empty() ? "." : target.parent_path().string(),
                     "': ", std::strerror(errno));
    write(out);
    out.close();
    require<IoError>(bool(out), path, ": cannot write the temporary file (disk full?)");
    fs::rename(temp, target, ec);
    require<IoError>(!ec, path, ": cannot replace the file: ", ec.message());
  } catch (...) {
    fs::remove(temp, ec);
    throw;
  }
}

}  // namespace strop::io
