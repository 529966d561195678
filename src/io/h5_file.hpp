#pragma once
// A thin, checked layer over the HDF5 C API for the codecs: RAII handles, typed attribute
// and dataset access, and error messages that name the file and the object. Every read
// validates type, rank, shape and stored size before it allocates, so a hand-crafted file
// cannot make us allocate more than the file holds.
#include <hdf5.h>

#include <complex>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strop/core/error.hpp"
#include "strop/core/scalar.hpp"

namespace strop::io::h5 {

// The longest string attribute a reader takes (longer ones are refused, or cut by HDF5's
// variable-length reads): writers refuse longer ones.
inline constexpr std::size_t kMaxStringBytes = 1 << 16;

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept {
    std::swap(id_, other.id_);
    std::swap(close_, other.close_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0 && close_) close_(id_);
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// While alive, HDF5 prints nothing to stderr: its failures become our IoErrors instead.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

// The memory type of a scalar: native integers and floats, and for complex numbers the
// h5py-compatible compound {r, i}.
template <class T>
Handle memory_type();

// An open group inside a file, with the path used in messages ("/dft/0/1").
class Group {
 public:
  Group(Handle handle, std::string file, std::string path)
      : handle_(std::move(handle)), file_(std::move(file)), path_(std::move(path)) {}
  hid_t id() const { return handle_.get(); }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  // Throws IoError "<file>: <path>: <message>".
  template <class... Parts>
  [[noreturn]] void fail(Parts&&... parts) const {
    throw IoError(detail::concat(file_, ": ", path_, ": ", std::forward<Parts>(parts)...));
  }

  // ---- writing ----
  Group create_child(const std::string& name) const;
  void write_attribute(const std::string& name, const std::string& value) const;
  void write_attribute(const std::string& name, std::int64_t value) const;
  void write_attribute(const std::string& name, double value) const;
  void write_attribute(const std::string& name, const std::vector<std::int64_t>& values) const;
  template <class T>
  void write_scalar_attribute(const std::string& name, T value) const;
  // A dataset of dims (row-major), chunked with Fletcher-32 checksums so that flipped bits
  // in the data are detected on reading.
  template <class T>
  void write_dataset(const std::string& name, const T* data, const std::vector<Index>& dims) const;

  // ---- reading ----
  bool has_attribute(const std::string& name) const;
  bool has_link(const std::string& name) const;
  // True if `name` is a hard link to a group.
  bool has_group(const std::string& name) const;
  // A second handle on this group (to walk down from it while keeping it).
  Group reopen() const;
  std::string string_attribute(const std::string& name) const;
  // An integer attribute within [lo, hi].
  std::int64_t int_attribute(const std::string& name, std::int64_t lo, std::int64_t hi) const;
  double double_attribute(const std::string& name) const;
  std::vector<std::int64_t> int_array_attribute(const std::string& name, std::size_t size) const;
  template <class T>
  T scalar_attribute(const std::string& name) const;
  // The subgroup `name`, which must be a hard link to a group.
  Group child(const std::string& name) const;
  // The dataset `name`, which must have exactly `dims` and the stored type of T.
  template <class T>
  std::vector<T> read_dataset(const std::string& name, const std::vector<Index>& dims) const;
  // The dims of dataset `name` (rank 1 or 2 expected by the callers).
  std::vector<Index> dataset_dims(const std::string& name) const;
  // "float32", "float64", "complex64", "complex128", or "" for any other type.
  std::string dataset_scalar_type(const std::string& name) const;

 private:
  Handle handle_;
  std::string file_;
  std::string path_;
};

// The root group of the HDF5 file at `path`, opened for reading.
Group open_file_root(const std::string& path);

// A file that HDF5 edits in memory (its core driver, no backing store) and that commit()
// writes to disk: HDF5 itself never writes to disk here. HDF5 1.10 cannot recover from a
// write that fails while it closes a file (a full disk): the identifier it failed to close
// stays registered, pointing at freed memory, and the process crashes at exit when H5close
// closes it again. Here a failed save closes a file in memory, which cannot fail, and a
// failed write to disk is ours: an IoError. The whole file is held in memory meanwhile.
class FileInMemory {
 public:
  // Reads the HDF5 file at `source` into memory (`source` itself is never written), or, with
  // an empty `source`, creates a new, empty one with the user block for the seal. commit()
  // writes it to `destination`.
  FileInMemory(const std::string& source, const std::string& destination);
  // Closes the file; unless committed, its edits are lost and `destination` stays as it was.
  ~FileInMemory();
  FileInMemory(const FileInMemory&) = delete;
  FileInMemory& operator=(const FileInMemory&) = delete;

  const Group& root() const { return *root_; }
  // Closes the file (every object in it must be closed) and writes its bytes over
  // `destination`:
  // IoError if they cannot be written (disk full).
  void commit();

  struct Image;  // the bytes of the file, which HDF5 hands over when it closes it

 private:
  std::string path_;
  std::unique_ptr<Image> image_;  // outlives the handles below
  Handle file_;
  std::optional<Group> root_;
};

}  // namespace strop::io::h5
