// The public HDF5 entry points: files, names, versions and atomic saves. The per-node
// codecs live in operator_codecs.cpp, the checked HDF5 access in h5_file.cpp.
#include "strop/io/hdf5.hpp"

#include <filesystem>
#include <mutex>
#include <new>
#include <stdexcept>

#include "io/atomic_file.hpp"
#include "io/file_seal.hpp"
#include "io/h5_file.hpp"
#include "io/operator_codecs.hpp"
#include "strop/version.hpp"

namespace strop::io {

namespace {

namespace fs = std::filesystem;
using h5::Group;

constexpr const char* kVersionAttribute = "strop_format_version";
constexpr Index kMaxListedLinks = 1 << 16;

// One path component: no "/", not "." or "..", not empty. No NUL either: HDF5 takes names
// as C strings, so "a\0b" would silently be "a".
void require_valid_name(const std::string& name, const char* what) {
  require<IoError>(!name.empty() && name != "." && name != ".." &&
                       name.find_first_of(std::string("/\0", 2)) == std::string::npos,
                   "invalid ", what, " '", name, "': use one path component such as \"dft\"");
}

// The components of an absolute dataset path "/a/b/c".
std::vector<std::string> dataset_components(const std::string& dataset) {
  require<IoError>(!dataset.empty() && dataset.front() == '/', "dataset path '", dataset,
                   "' must be absolute, such as \"/signals\"");
  std::vector<std::string> parts;
  std::size_t start = 1;
  while (start <= dataset.size()) {
    const std::size_t end = std::min(dataset.find('/', start), dataset.size());
    parts.push_back(dataset.substr(start, end - start));
    require_valid_name(parts.back(), "dataset path component");
    start = end + 1;
  }
  return parts;
}

void check_version(const Group& root) {
  if (!root.has_attribute(kVersionAttribute))
    root.fail("not a strop file (no '", kVersionAttribute, "' attribute on the root group)");
  const std::int64_t version = root.scalar_attribute<std::int64_t>(kVersionAttribute);
  if (version < 1 || version > kFormatVersion)
    root.fail("format version ", version, " is not supported (this library reads 1 to ",
              kFormatVersion, ")");
}

// Runs `edit` on a writable copy of `path` (or on a new file) and renames the copy over
// `path` only once everything is written: a failure leaves the old file untouched.
// Edits are read-copy-update: two at once (threads saving different names into one file)
// would each copy the old file and the later rename would drop the other's operator, so
// the edits of this process run one at a time (other processes need their own locking).
// One lock for every kind of edit (operators and matrices of all scalar types): a static
// inside the template below would be one mutex per instantiation.
std::mutex& edit_mutex() {
  static std::mutex edits;
  return edits;
}

template <class Edit>
void edit_atomically(const std::string& path, Edit edit) {
  const std::lock_guard lock(edit_mutex());
  replace_atomically(path, [&](const fs::path& target, const fs::path& temp) {
    std::error_code ec;
    // (replace_atomically has refused a read-only file: it says it is not to be changed.)
    const bool existing = fs::exists(target, ec);
    try {
      {
        h5::QuietErrors quiet;
        // Read into memory and edited there, then written to the temporary: whatever
        // fails, HDF5 is never left with a file that it cannot close (see FileInMemory).
        h5::FileInMemory file(existing ? target.string() : std::string(), temp.string());
        edit(file.root());
        file.commit();  // HDF5 has closed the file: its bytes are final
      }
      seal::write(temp.string());
    } catch (const IoError& e) {
      // Messages from the layers below name the temporary, which is about to be removed, or
      // the file a link resolved to: name the caller's file instead.
      std::string message = e.what();
      for (const std::string& named : {temp.string(), target.string()})
        for (std::size_t at; named != path && (at = message.find(named)) != std::string::npos;)
          message.replace(at, named.size(), path);
      throw IoError(message);
    }
  });
}

// Runs a read of `path`. A huge (or hostile) file can ask for more memory than there is:
// that is an IoError naming the file too, not a std::bad_alloc from deep inside.
template <class Read>
auto reading(const std::string& path, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::bad_alloc&) {
    throw IoError(detail::concat(path, ": not enough memory to read it"));
  } catch (const std::length_error&) {
    throw IoError(detail::concat(path, ": not enough memory to read it"));
  }
}

// Bytes of parameters a load may read: each dataset of a well-formed file is read once and
// stores at least the bytes it yields, so the file's size bounds the total; the factor 2 is
// slack. (Subgroups shared through hard links would read the same bytes over and over.)
Index load_byte_budget(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  require<IoError>(!ec, path, ": cannot read the file size: ", ec.message());
  return 2 * Index(size);
}

// What a reader refuses in a provenance ("" if nothing): saving checks it too, so that
// every saved operator lists and loads.
std::string provenance_problem(const Provenance& p) {
  const Index max = codecs::ReadLimits{}.max_extent;
  if (p.source_rows < 0 || p.source_rows > max || p.source_cols < 0 || p.source_cols > max)
    return detail::concat("source shape ", p.source_rows, "x", p.source_cols, " outside [0, ", max,
                          "]");
  if (p.algorithm.size() > h5::kMaxStringBytes || p.source.size() > h5::kMaxStringBytes)
    return detail::concat("an algorithm or source longer than ", h5::kMaxStringBytes,
                          " bytes (readers stop there)");
  // HDF5 strings end at the first NUL: the rest would be lost.
  if (p.algorithm.find('\0') != std::string::npos || p.source.find('\0') != std::string::npos)
    return "a NUL character in the algorithm or source";
  return "";
}

// The root attributes that make a file a strop file (list_operators and load check them).
void mark_as_strop_file(const Group& root) {
  root.write_attribute(kVersionAttribute, std::int64_t(kFormatVersion));
  root.write_attribute("strop_library_version", std::string(version_string));
}

void write_provenance(const Group& g, const Provenance& p) {
  g.write_attribute("provenance_algorithm", p.algorithm);
  g.write_attribute("provenance_relative_error", p.relative_error);
  g.write_attribute("provenance_source_rows", std::int64_t(p.source_rows));
  g.write_attribute("provenance_source_cols", std::int64_t(p.source_cols));
  g.write_attribute("provenance_source", p.source);
}

std::optional<Provenance> read_provenance(const Group& g) {
  if (!g.has_attribute("provenance_algorithm")) return std::nullopt;
  Provenance p;
  p.algorithm = g.string_attribute("provenance_algorithm");
  p.relative_error = g.double_attribute("provenance_relative_error");
  p.source_rows = g.scalar_attribute<std::int64_t>("provenance_source_rows");
  p.source_cols = g.scalar_attribute<std::int64_t>("provenance_source_cols");
  if (g.has_attribute("provenance_source")) p.source = g.string_attribute("provenance_source");
  if (const std::string why = provenance_problem(p); !why.empty())
    g.fail("invalid provenance: ", why);
  return p;
}

// True if `name` in g is an operator's top group (other groups hold plain data).
bool is_operator(const Group& g, const std::string& name) {
  return g.has_group(name) && g.child(name).has_attribute("strop_type");
}

// Removes link `name` from g if present (the file keeps the space; h5repack reclaims it).
void unlink_if_present(const Group& g, const std::string& name) {
  if (g.has_link(name) && H5Ldelete(g.id(), name.c_str(), H5P_DEFAULT) < 0)
    g.fail("cannot replace '", name, "'");
}

}  // namespace

void require_valid_operator_name(const std::string& name) {
  require_valid_name(name, "operator name");
}

template <class T>
void save(const std::string& path, const AnyOperator<T>& op, const std::string& name,
          const std::optional<Provenance>& provenance) {
  require_valid_name(name, "operator name");
  // Refused before anything is written: a file that load would refuse is no save.
  const std::string too_large = codecs::limits_exceeded(op);
  require<IoError>(too_large.empty(), path, ": cannot save operator '", name, "': ", too_large,
                   ", beyond what a strop file may hold");
  if (provenance) {
    const std::string why = provenance_problem(*provenance);
    require<IoError>(why.empty(), path, ": cannot save operator '", name,
                     "': invalid provenance: ", why);
  }
  edit_atomically(path, [&](const Group& root) {
    if (root.has_attribute(kVersionAttribute)) check_version(root);
    // Replacing deletes: only an operator of that name, never other data.
    require<IoError>(!root.has_link(name) || is_operator(root, name), path, ": '", name,
                     "' exists and is not a strop operator (data of save_matrix or another ",
                     "program?): saving would delete it; choose another name");
    mark_as_strop_file(root);
    unlink_if_present(root, name);
    const Group g = root.create_child(name);
    g.write_attribute("scalar_type", std::string(ScalarTraits<T>::name));
    if (provenance) write_provenance(g, *provenance);
    codecs::write_operator(g, op);
  });
}

namespace {

// The names of the operators in the root group (links to groups with a strop_type).
std::vector<std::string> operator_names(const Group& root) {
  H5G_info_t info{};
  if (H5Gget_info(root.id(), &info) < 0) root.fail("cannot list the root group");
  if (info.nlinks > hsize_t(kMaxListedLinks)) root.fail("more than ", kMaxListedLinks, " links");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    // Names may be of any length: ask for it first.
    const ssize_t length =
        H5Lget_name_by_idx(root.id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (length < 0) root.fail("cannot read the name of link ", i);
    std::string name(std::size_t(length) + 1, '\0');
    if (H5Lget_name_by_idx(root.id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(),
                           H5P_DEFAULT) != length)
      root.fail("cannot read the name of link ", i);
    name.resize(std::size_t(length));
    if (is_operator(root, name)) names.push_back(name);  // not a signals dataset or data group
  }
  return names;
}

std::vector<StoredOperator> list_stored_operators(const std::string& path) {
  h5::QuietErrors quiet;
  const Group root = h5::open_file_root(path);
  check_version(root);
  std::vector<StoredOperator> out;
  for (const std::string& name : operator_names(root)) {
    const Group g = root.child(name);
    StoredOperator s;
    s.name = name;
    s.strop_type = g.string_attribute("strop_type");
    s.scalar_type = g.string_attribute("scalar_type");
    s.rows = g.int_attribute("rows", 0, Index(1) << 40);
    s.cols = g.int_attribute("cols", 0, Index(1) << 40);
    s.provenance = read_provenance(g);
    out.push_back(std::move(s));
  }
  return out;
}

template <class T>
AnyOperator<T> load_operator(const std::string& path, const std::string& name) {
  h5::QuietErrors quiet;
  const Group root = h5::open_file_root(path);
  check_version(root);
  if (!root.has_link(name)) {
    std::string names;  // (names only: a malformed other operator must not hide this error)
    for (const std::string& other : operator_names(root))
      names += " '" + other + "'";
    root.fail("no operator named '", name, "' (the file holds:", names.empty() ? " none" : names,
              ")");
  }
  const Group g = root.child(name);
  const std::string stored = g.string_attribute("scalar_type");
  if (stored != ScalarTraits<T>::name)
    g.fail("stored as ", stored, ", requested as ", ScalarTraits<T>::name,
           " (list_operators tells the type)");
  codecs::ReadLimits limits;
  limits.max_bytes = load_byte_budget(path);
  return codecs::read_operator<T>(g, limits);
}

}  // namespace

template <class T>
AnyOperator<T> load(const std::string& path, const std::string& name) {
  require_valid_name(name, "operator name");
  return reading(path, [&] { return load_operator<T>(path, name); });
}

std::vector<StoredOperator> list_operators(const std::string& path) {
  return reading(path, [&] { return list_stored_operators(path); });
}

namespace {
// Opens the group that holds the dataset at `parts` (all but the last component).
Group open_parent(Group root, const std::vector<std::string>& parts) {
  for (std::size_t i = 0; i + 1 < parts.size(); ++i)
    root = root.child(parts[i]);
  return root;
}
}  // namespace

std::string matrix_scalar_type(const std::string& path, const std::string& dataset) {
  const std::vector<std::string> parts = dataset_components(dataset);
  h5::QuietErrors quiet;
  const Group parent = open_parent(h5::open_file_root(path), parts);
  const std::string type = parent.dataset_scalar_type(parts.back());
  if (type.empty())
    parent.fail("dataset '", parts.back(), "' is not float32, float64, complex64 or complex128");
  return type;
}

template <class T>
HostMatrix<T> load_matrix(const std::string& path, const std::string& dataset) {
  const std::vector<std::string> parts = dataset_components(dataset);
  return reading(path, [&]() -> HostMatrix<T> {
    h5::QuietErrors quiet;
    const Group parent = open_parent(h5::open_file_root(path), parts);
    const std::vector<Index> dims = parent.dataset_dims(parts.back());
    if (dims.size() != 1 && dims.size() != 2)
      parent.fail("dataset '", parts.back(), "' has rank ", dims.size(), "; a matrix needs 1 or 2");
    const Index rows = dims[0], cols = dims.size() == 2 ? dims[1] : 1;  // a vector is one column
    const std::vector<T> values = parent.read_dataset<T>(parts.back(), dims);
    // Row-major in the file, as numpy shows it.
    return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        values.data(), rows, cols);
  });
}

template <class T>
void save_matrix(const std::string& path, const std::string& dataset, const HostMatrix<T>& m) {
  const std::vector<std::string> parts = dataset_components(dataset);
  edit_atomically(path, [&](const Group& root) {
    // Only a matrix is replaced: an operator, or a group of other data, at the path (or on
    // the way to it) would be lost or changed.
    // The file becomes a strop file too, so that one holding only matrices lists (no
    // operators) and loads ("no operator named ...") like any other.
    if (root.has_attribute(kVersionAttribute)) {
      check_version(root);
    } else {
      mark_as_strop_file(root);
    }
    Group parent = root.reopen();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const bool last = i + 1 == parts.size();
      require<IoError>(!is_operator(parent, parts[i]) && !(last && parent.has_group(parts[i])),
                       path, ": '", dataset, "' would replace or write into ",
                       is_operator(parent, parts[i]) ? "the operator '" : "the group '", parts[i],
                       "'; choose another path");
      if (!last)
        parent = parent.has_link(parts[i]) ? parent.child(parts[i]) : parent.create_child(parts[i]);
    }
    unlink_if_present(parent, parts.back());
    const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = m;
    parent.write_dataset(parts.back(), row_major.data(), {m.rows(), m.cols()});
  });
}

#define STROP_HDF5_INSTANTIATE(T)                                                      \
  template void save<T>(const std::string&, const AnyOperator<T>&, const std::string&, \
                        const std::optional<Provenance>&);                             \
  template AnyOperator<T> load<T>(const std::string&, const std::string&);             \
  template HostMatrix<T> load_matrix<T>(const std::string&, const std::string&);       \
  template void save_matrix<T>(const std::string&, const std::string&, const HostMatrix<T>&);
STROP_FOR_EACH_SCALAR(STROP_HDF5_INSTANTIATE)
#undef STROP_HDF5_INSTANTIATE

}  // namespace strop::io
