#include "io/h5_file.hpp"

#include "io/file_seal.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace strop::io::h5 {

namespace {

// Bounds that no strop file comes near but that stop a hand-crafted one early.
constexpr int kMaxRank = 8;

Handle checked(hid_t id, Handle::Closer close) {
  return Handle(id, close);
}

// is_complex_v for the types this file handles, std::int64_t included.
template <class T>
constexpr bool is_complex_number = !std::is_arithmetic_v<T>;

std::string dims_text(const std::vector<Index>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// The stored-type test behind read_dataset and scalar_attribute: the class and size that T
// needs (compound {r, i} of floats for complex numbers, any integer for indices).
template <class T>
bool stored_type_matches(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  if constexpr (std::is_integral_v<T>) {
    return cls == H5T_INTEGER;
  } else if constexpr (is_complex_number<T>) {
    if (cls != H5T_COMPOUND || H5Tget_nmembers(type) != 2) return false;
    for (unsigned m = 0; m < 2; ++m) {
      char* name = H5Tget_member_name(type, m);
      const bool name_ok = name && std::string(name) == (m == 0 ? "r" : "i");
      H5free_memory(name);
      Handle member = checked(H5Tget_member_type(type, m), H5Tclose);
      if (!name_ok || !member.valid() || H5Tget_class(member.get()) != H5T_FLOAT ||
          H5Tget_size(member.get()) != sizeof(typename T::value_type))
        return false;
    }
    return true;
  } else {
    return cls == H5T_FLOAT && H5Tget_size(type) == sizeof(T);
  }
}

// What the object at link `name` is (H5I_GROUP, H5I_DATASET, ...; H5I_BADID if unreadable).
// H5Oopen + H5Iget_type reads the same on HDF5 1.10 and 1.12+, unlike H5Oget_info.
H5I_type_t object_kind(const Group& g, const std::string& name) {
  Handle object = checked(H5Oopen(g.id(), name.c_str(), H5P_DEFAULT), H5Oclose);
  return object.valid() ? H5Iget_type(object.get()) : H5I_BADID;
}

// "integers" or the scalar's name, for messages.
template <class T>
std::string stored_type_name() {
  if constexpr (std::is_integral_v<T>) {
    return "integers";
  } else {
    return std::string(ScalarTraits<T>::name);
  }
}

// The scalar name of a stored type: "float32", "float64", "complex64", "complex128", or ""
// for any other type.
std::string scalar_type_of(hid_t type) {
  if (stored_type_matches<float>(type)) return "float32";
  if (stored_type_matches<double>(type)) return "float64";
  if (stored_type_matches<std::complex<float>>(type)) return "complex64";
  if (stored_type_matches<std::complex<double>>(type)) return "complex128";
  return "";
}

// What a stored type is, for messages that say why it is refused: its scalar name, else the
// HDF5 class and width ("int32", "16-bit floats").
std::string stored_type_text(hid_t type) {
  if (std::string name = scalar_type_of(type); !name.empty()) return name;
  const std::string bits = std::to_string(H5Tget_size(type) * 8);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + bits;
    case H5T_FLOAT:
      return bits + "-bit floats";
    case H5T_STRING:
      return "strings";
    case H5T_COMPOUND:
      return "a compound type";
    default:
      return "a non-numeric type";
  }
}

// Element count of dims, or -1 on overflow / negative extents.
Index element_count(const std::vector<Index>& dims) {
  Index n = 1;
  for (Index d : dims) {
    if (d < 0 || (d > 0 && n > std::numeric_limits<Index>::max() / d)) return -1;
    n *= d;
  }
  return n;
}

}  // namespace

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}
QuietErrors::~QuietErrors() {
  H5Eset_auto2(H5E_DEFAULT, function_, data_);
}

template <class T>
Handle memory_type() {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return checked(H5Tcopy(H5T_NATIVE_INT64), H5Tclose);
  } else if constexpr (std::is_same_v<T, float>) {
    return checked(H5Tcopy(H5T_NATIVE_FLOAT), H5Tclose);
  } else if constexpr (std::is_same_v<T, double>) {
    return checked(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose);
  } else {
    using R = typename T::value_type;
    Handle type = checked(H5Tcreate(H5T_COMPOUND, sizeof(T)), H5Tclose);
    Handle part = memory_type<R>();
    H5Tinsert(type.get(), "r", 0, part.get());
    H5Tinsert(type.get(), "i", sizeof(R), part.get());
    return type;
  }
}

// ---- files ----------------------------------------------------------------------------

namespace {

// The checks before HDF5 parses an existing file.
void require_hdf5_file(const std::string& path) {
  std::error_code ec;
  require<IoError>(std::filesystem::is_regular_file(path, ec), path, ": no such file");
  seal::verify(path);  // before HDF5 parses anything of a corrupted file
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  require<IoError>(is_hdf5 > 0, path, ": not an HDF5 file (or truncated before its superblock)");
}

}  // namespace

Group open_file_root(const std::string& path) {
  require_hdf5_file(path);
  Handle file = checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  require<IoError>(file.valid(), path, ": HDF5 cannot open the file (corrupted or truncated?)");
  Handle root = checked(H5Gopen2(file.get(), "/", H5P_DEFAULT), H5Gclose);
  require<IoError>(root.valid(), path, ": cannot open the root group");
  // The file stays open while the root group (or any object in it) is open.
  return Group(std::move(root), path, "/");
}

// The memory of the core driver's file, through HDF5's file image callbacks: grown
// geometrically (HDF5 resizes it on every write past its end), and kept, not freed, when
// HDF5 closes the file.
struct FileInMemory::Image {
  void* bytes = nullptr;
  std::size_t size = 0, capacity = 0;
  bool closed = false;  // HDF5 has closed the file and handed `bytes` over

  Image() = default;
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;
  ~Image() { std::free(bytes); }  // (once HDF5 has closed the file: see ~FileInMemory)

  static Image& of(void* udata) { return *static_cast<Image*>(udata); }
  static void* allocate(std::size_t size, H5FD_file_image_op_t, void* udata) {
    Image& image = of(udata);
    image.bytes = std::malloc(std::max<std::size_t>(size, 1));
    image.size = image.capacity = image.bytes ? size : 0;
    return image.bytes;
  }
  static void* copy(void* to, const void* from, std::size_t size, H5FD_file_image_op_t, void*) {
    return std::memcpy(to, from, size);
  }
  static void* resize(void* bytes, std::size_t size, H5FD_file_image_op_t, void* udata) {
    Image& image = of(udata);
    if (size > image.capacity) {
      const std::size_t capacity = std::max(size, image.capacity + image.capacity / 2);
      void* grown = std::realloc(bytes, capacity);
      if (!grown) return nullptr;
      image.bytes = grown;
      image.capacity = capacity;
    }
    image.size = size;
    return image.bytes;
  }
  static herr_t release(void* bytes, H5FD_file_image_op_t op, void* udata) {
    if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE) {
      of(udata).closed = true;  // freed with the Image, once commit() has written them
    } else {
      std::free(bytes);
    }
    return 0;
  }
  static void* share(void* udata) { return udata; }
  static herr_t unshare(void*) { return 0; }
};

FileInMemory::FileInMemory(const std::string& source, const std::string& destination)
    : path_(destination), image_(std::make_unique<Image>()) {
  const bool create = source.empty();
  const std::string& path = create ? destination : source;
  if (!create) require_hdf5_file(path);
  // The 1.10 file format checksums all metadata (superblock v3, object headers v2, chunk
  // indexes), so HDF5 detects corrupted metadata instead of trusting it. h5py built on
  // HDF5 >= 1.10 reads these files. Objects added to an existing file get them too.
  Handle fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST);
  H5FD_file_image_callbacks_t callbacks = {&Image::allocate, &Image::copy,  &Image::resize,
                                           &Image::release,  &Image::share, &Image::unshare,
                                           image_.get()};
  // Resized to the byte (Image grows geometrically): the image ends where HDF5's
  // allocations end, as the file on disk would.
  require<IoError>(H5Pset_fapl_core(fapl.get(), 1, false) >= 0 &&
                       H5Pset_file_image_callbacks(fapl.get(), &callbacks) >= 0,
                   path, ": cannot set up HDF5's in-memory file driver");
  if (create) {
    // A user block for the seal (file_seal.hpp).
    Handle fcpl = checked(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
    H5Pset_userblock(fcpl.get(), seal::kUserBlockBytes);
    file_ = checked(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose);
    require<IoError>(file_.valid(), path, ": cannot create the file");
  } else {
    file_ = checked(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose);
    require<IoError>(file_.valid(), path, ": HDF5 cannot open the file (corrupted or truncated?)");
  }
  Handle root = checked(H5Gopen2(file_.get(), "/", H5P_DEFAULT), H5Gclose);
  require<IoError>(root.valid(), path, ": cannot open the root group");
  root_.emplace(std::move(root), path, "/");
}

FileInMemory::~FileInMemory() {
  root_.reset();
  file_ = Handle();  // closes the file in memory: nothing there fails for want of disk
  // Were an object of the file still open (a bug), HDF5 would keep the file, and its
  // pointer to the image, until that object is closed (at exit at the latest).
  if (!image_->closed) static_cast<void>(image_.release());
}

void FileInMemory::commit() {
  // Brings the image up to date, sized to the end of HDF5's allocations.
  if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) root_->fail("cannot flush");
  root_.reset();
  file_ = Handle();
  require<IoError>(image_->closed, path_, ": HDF5 objects are still open: the file is not closed");
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(image_->bytes), std::streamsize(image_->size));
  out.close();
  require<IoError>(bool(out), path_, ": cannot write the file (disk full?)");
}

// ---- writing --------------------------------------------------------------------------

Group Group::create_child(const std::string& name) const {
  Handle g =
      checked(H5Gcreate2(id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail("cannot create group '", name, "'");
  return Group(std::move(g), file_, path_ == "/" ? "/" + name : path_ + "/" + name);
}

namespace {
void write_raw_attribute(const Group& g, const std::string& name, hid_t type, hid_t space,
                         const void* data) {
  if (H5Aexists(g.id(), name.c_str()) > 0) H5Adelete(g.id(), name.c_str());
  Handle attr =
      checked(H5Acreate2(g.id(), name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid() || H5Awrite(attr.get(), type, data) < 0)
    g.fail("cannot write attribute '", name, "'");
}
}  // namespace

void Group::write_attribute(const std::string& name, const std::string& value) const {
  Handle type = checked(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle space = checked(H5Screate(H5S_SCALAR), H5Sclose);
  const char* text = value.c_str();
  write_raw_attribute(*this, name, type.get(), space.get(), &text);
}

void Group::write_attribute(const std::string& name, std::int64_t value) const {
  write_scalar_attribute(name, value);
}

void Group::write_attribute(const std::string& name, double value) const {
  write_scalar_attribute(name, value);
}

void Group::write_attribute(const std::string& name,
                            const std::vector<std::int64_t>& values) const {
  const hsize_t n = values.size();
  Handle space = checked(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle type = memory_type<std::int64_t>();
  write_raw_attribute(*this, name, type.get(), space.get(), values.data());
}

template <class T>
void Group::write_scalar_attribute(const std::string& name, T value) const {
  Handle space = checked(H5Screate(H5S_SCALAR), H5Sclose);
  Handle type = memory_type<T>();
  write_raw_attribute(*this, name, type.get(), space.get(), &value);
}

template <class T>
void Group::write_dataset(const std::string& name, const T* data,
                          const std::vector<Index>& dims) const {
  std::vector<hsize_t> extent(dims.begin(), dims.end());
  Handle space = checked(H5Screate_simple(int(extent.size()), extent.data(), nullptr), H5Sclose);
  Handle type = memory_type<T>();
  Handle dcpl = checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  const Index count = element_count(dims);
  if (count > 0) {
    // Chunks of whole trailing dimensions, at most ~1 MiB each (HDF5 caps a chunk at 4 GiB).
    std::vector<hsize_t> chunk = extent;
    Index bytes = count * Index(sizeof(T));
    for (std::size_t d = 0; d < chunk.size() && bytes > (Index(1) << 20); ++d) {
      const Index inner = bytes / Index(chunk[d]);
      chunk[d] = hsize_t(std::max<Index>(1, (Index(1) << 20) / std::max<Index>(inner, 1)));
      bytes = inner * Index(chunk[d]);
    }
    H5Pset_chunk(dcpl.get(), int(chunk.size()), chunk.data());
    H5Pset_fletcher32(dcpl.get());
  }
  Handle set = checked(
      H5Dcreate2(id(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
      H5Dclose);
  if (!set.valid()) fail("cannot create dataset '", name, "'");
  if (count > 0 && H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail("cannot write dataset '", name, "' (disk full?)");
}

// ---- reading --------------------------------------------------------------------------

bool Group::has_attribute(const std::string& name) const {
  return H5Aexists(id(), name.c_str()) > 0;
}

bool Group::has_link(const std::string& name) const {
  return H5Lexists(id(), name.c_str(), H5P_DEFAULT) > 0;
}

namespace {
// Opens attribute `name` and checks that it holds one value (scalar or 1-element array)
// of a type accepted by `type_ok`.
template <class TypeOk>
Handle open_scalar_attribute(const Group& g, const std::string& name, const std::string& what,
                             TypeOk type_ok) {
  if (!g.has_attribute(name)) g.fail("missing attribute '", name, "'");
  Handle attr = checked(H5Aopen(g.id(), name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) g.fail("cannot open attribute '", name, "'");
  Handle type = checked(H5Aget_type(attr.get()), H5Tclose);
  Handle space = checked(H5Aget_space(attr.get()), H5Sclose);
  if (!type.valid() || !space.valid() || !type_ok(type.get()))
    g.fail("attribute '", name, "' must be ", what);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    g.fail("attribute '", name, "' must hold one value");
  return attr;
}
}  // namespace

std::string Group::string_attribute(const std::string& name) const {
  Handle attr = open_scalar_attribute(*this, name, "a string",
                                      [](hid_t t) { return H5Tget_class(t) == H5T_STRING; });
  Handle stored = checked(H5Aget_type(attr.get()), H5Tclose);
  Handle type = checked(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_cset(type.get(), H5Tget_cset(stored.get()));
  if (H5Tis_variable_str(stored.get()) > 0) {
    H5Tset_size(type.get(), H5T_VARIABLE);
    char* text = nullptr;
    if (H5Aread(attr.get(), type.get(), &text) < 0) fail("cannot read attribute '", name, "'");
    const std::size_t length = text ? strnlen(text, kMaxStringBytes + 1) : 0;
    std::string value = text ? std::string(text, std::min(length, kMaxStringBytes)) : "";
    H5free_memory(text);
    if (length > kMaxStringBytes) fail("attribute '", name, "' has an absurd length");
    return value;
  }
  const std::size_t size = H5Tget_size(stored.get());
  if (size == 0 || size > kMaxStringBytes) fail("attribute '", name, "' has an absurd length");
  H5Tset_size(type.get(), size);
  std::string value(size, '\0');
  if (H5Aread(attr.get(), type.get(), value.data()) < 0) fail("cannot read attribute '", name, "'");
  value.resize(strnlen(value.c_str(), size));
  return value;
}

template <class T>
T Group::scalar_attribute(const std::string& name) const {
  const std::string what =
      std::is_integral_v<T> ? "an integer"
      : is_complex_number<T>
          ? "a complex number {r, i}"
          : detail::concat("a floating-point number of at most ", 8 * sizeof(T), " bits");
  Handle attr = open_scalar_attribute(*this, name, what, [](hid_t t) {
    if constexpr (std::is_floating_point_v<T>) {
      // A narrower float widens exactly; a wider one would be rounded silently.
      return H5Tget_class(t) == H5T_FLOAT && H5Tget_size(t) <= sizeof(T);
    } else {
      return stored_type_matches<T>(t);
    }
  });
  Handle type = memory_type<T>();
  T value{};
  if (H5Aread(attr.get(), type.get(), &value) < 0) fail("cannot read attribute '", name, "'");
  return value;
}

std::int64_t Group::int_attribute(const std::string& name, std::int64_t lo, std::int64_t hi) const {
  const std::int64_t value = scalar_attribute<std::int64_t>(name);
  if (value < lo || value > hi)
    fail("attribute '", name, "' is ", value, ", outside [", lo, ", ", hi, "]");
  return value;
}

double Group::double_attribute(const std::string& name) const {
  return scalar_attribute<double>(name);
}

std::vector<std::int64_t> Group::int_array_attribute(const std::string& name,
                                                     std::size_t size) const {
  if (!has_attribute(name)) fail("missing attribute '", name, "'");
  Handle attr = checked(H5Aopen(id(), name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle type = checked(H5Aget_type(attr.get()), H5Tclose);
  Handle space = checked(H5Aget_space(attr.get()), H5Sclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_INTEGER ||
      H5Sget_simple_extent_ndims(space.get()) != 1 ||
      H5Sget_simple_extent_npoints(space.get()) != hssize_t(size))
    fail("attribute '", name, "' must be ", size, " integers");
  std::vector<std::int64_t> values(size);
  Handle memory = memory_type<std::int64_t>();
  if (H5Aread(attr.get(), memory.get(), values.data()) < 0)
    fail("cannot read attribute '", name, "'");
  return values;
}

bool Group::has_group(const std::string& name) const {
  H5L_info_t link{};
  return has_link(name) && H5Lget_info(id(), name.c_str(), &link, H5P_DEFAULT) >= 0 &&
         link.type == H5L_TYPE_HARD && object_kind(*this, name) == H5I_GROUP;
}

Group Group::reopen() const {
  Handle g = checked(H5Gopen2(id(), ".", H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail("cannot reopen the group");
  return Group(std::move(g), file_, path_);
}

Group Group::child(const std::string& name) const {
  const std::string child_path = path_ == "/" ? "/" + name : path_ + "/" + name;
  if (!has_link(name)) fail("missing group '", name, "'");
  H5L_info_t link{};
  if (H5Lget_info(id(), name.c_str(), &link, H5P_DEFAULT) < 0 || link.type != H5L_TYPE_HARD)
    fail("'", name, "' is a soft or external link; strop files use hard links only");
  if (object_kind(*this, name) != H5I_GROUP) fail("'", name, "' is not a group");
  Handle g = checked(H5Gopen2(id(), name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail("cannot open group '", name, "'");
  return Group(std::move(g), file_, child_path);
}

namespace {
struct OpenDataset {
  Handle set, type, space;
};
OpenDataset open_dataset(const Group& g, const std::string& name) {
  if (!g.has_link(name)) g.fail("missing dataset '", name, "'");
  H5L_info_t link{};
  if (H5Lget_info(g.id(), name.c_str(), &link, H5P_DEFAULT) < 0 || link.type != H5L_TYPE_HARD)
    g.fail("'", name, "' is a soft or external link; strop files use hard links only");
  if (object_kind(g, name) != H5I_DATASET) g.fail("'", name, "' is not a dataset");
  OpenDataset d;
  d.set = checked(H5Dopen2(g.id(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.set.valid()) g.fail("cannot open dataset '", name, "'");
  d.type = checked(H5Dget_type(d.set.get()), H5Tclose);
  d.space = checked(H5Dget_space(d.set.get()), H5Sclose);
  if (!d.type.valid() || !d.space.valid()) g.fail("cannot read the header of dataset '", name, "'");
  return d;
}
}  // namespace

std::vector<Index> Group::dataset_dims(const std::string& name) const {
  OpenDataset d = open_dataset(*this, name);
  const int rank = H5Sget_simple_extent_ndims(d.space.get());
  if (rank < 0 || rank > kMaxRank) fail("dataset '", name, "' has an unsupported rank");
  std::vector<hsize_t> extent(std::size_t(rank) + 1);
  H5Sget_simple_extent_dims(d.space.get(), extent.data(), nullptr);
  std::vector<Index> dims(static_cast<std::size_t>(rank));
  for (int r = 0; r < rank; ++r) {
    if (extent[r] > hsize_t(std::numeric_limits<Index>::max()))
      fail("dataset '", name, "' has an absurd extent");
    dims[r] = Index(extent[r]);
  }
  return dims;
}

std::string Group::dataset_scalar_type(const std::string& name) const {
  return scalar_type_of(open_dataset(*this, name).type.get());
}

template <class T>
std::vector<T> Group::read_dataset(const std::string& name, const std::vector<Index>& dims) const {
  const std::vector<Index> stored = dataset_dims(name);
  if (stored != dims)
    fail("dataset '", name, "' has shape ", dims_text(stored), ", expected ", dims_text(dims));
  OpenDataset d = open_dataset(*this, name);
  if (!stored_type_matches<T>(d.type.get()))
    fail("dataset '", name, "' does not hold ", stored_type_name<T>(), " (it holds ",
         stored_type_text(d.type.get()), ")");
  const Index count = element_count(dims);
  if (count < 0) fail("dataset '", name, "' has an absurd shape");
  // Never allocate more than the file stores: a lazily allocated or compressed dataset
  // could claim any shape. (Compared in elements: count * sizeof(T) can overflow.)
  // (In stored elements: indices may be stored as narrower integers than they are read.)
  if (count > 0 && H5Dget_storage_size(d.set.get()) / H5Tget_size(d.type.get()) < hsize_t(count))
    fail("dataset '", name,
         "' stores fewer bytes than its shape needs (compressed, sparse or "
         "truncated; strop files store data uncompressed)");
  std::vector<T> values(static_cast<std::size_t>(count));
  Handle type = memory_type<T>();
  if (count > 0 &&
      H5Dread(d.set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    fail("cannot read dataset '", name, "' (checksum mismatch or corrupted file)");
  return values;
}

#define STROP_H5_INSTANTIATE(T)                                                                  \
  template Handle memory_type<T>();                                                              \
  template void Group::write_scalar_attribute<T>(const std::string&, T) const;                   \
  template void Group::write_dataset<T>(const std::string&, const T*, const std::vector<Index>&) \
      const;                                                                                     \
  template T Group::scalar_attribute<T>(const std::string&) const;                               \
  template std::vector<T> Group::read_dataset<T>(const std::string&, const std::vector<Index>&)  \
      const;
STROP_H5_INSTANTIATE(std::int64_t)
STROP_FOR_EACH_SCALAR(STROP_H5_INSTANTIATE)
#undef STROP_H5_INSTANTIATE

}  // namespace strop::io::h5
