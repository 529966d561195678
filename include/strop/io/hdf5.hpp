#pragma once
// HDF5 persistence of operators and matrices (DESIGN.md section 7, docs/hdf5-format.md).
//
// A file holds any number of named operators, each a group whose subgroups mirror the
// expression graph. Every file is readable with h5py alone. Saving writes a temporary file
// beside the target and renames it, so a failed save never destroys an existing file.
// Loading validates everything before allocating: a truncated, corrupted or hand-crafted
// file raises IoError naming the file, the object path and the problem.
#include <optional>
#include <string>
#include <vector>

#include "strop/core/scalar.hpp"
#include "strop/expr/any_operator.hpp"

namespace strop::io {

// Where a factorized operator came from; stored as attributes of its group.
struct Provenance {
  std::string algorithm;       // "ks hierarchical (balanced)", "monarch projection", ...
  double relative_error = -1;  // achieved ||A - Â||_F / ||A||_F (negative: unknown)
  Index source_rows = 0;       // shape of the matrix that was factorized
  Index source_cols = 0;
  std::string source;  // where the matrix came from (a path), may be empty
};

// The format version this library writes; it reads versions 1..kFormatVersion.
inline constexpr int kFormatVersion = 1;

// Writes `op` as `name` into the file at `path` (through a symbolic link: into the file it
// names). Other operators already in the file are kept; an operator of the same name is
// replaced, but anything else of that name (a matrix, a group of other data) is not: IoError.
// Names are one path component ("dft", "layer1"), never "/", "." or with a NUL character.
// IoError before anything is written for an operator that load would refuse (more than 64
// levels of nesting, 65536 nodes or 4096 children of a node) and for an invalid provenance
// (strings over 64 KiB or with a NUL character, a negative or absurd source shape). IoError
// too if the file exists and is not writable (a read-only file is left as it is).
// Saves and save_matrix calls (any scalar types) from several threads of a process into one
// file run one after another; processes
// saving into one file at the same time must coordinate (the later rename drops the other's).
template <class T>
void save(const std::string& path, const AnyOperator<T>& op, const std::string& name = "operator",
          const std::optional<Provenance>& provenance = std::nullopt);

// IoError unless save() accepts `name` (checked before long work that ends in a save).
void require_valid_operator_name(const std::string& name);

// Reads the operator `name`. IoError if it is missing, malformed, or stored with another
// scalar type than T (list_operators tells which), or if it would read more parameter bytes
// than the file can hold (subgroups shared through hard links) or than memory holds.
template <class T>
AnyOperator<T> load(const std::string& path, const std::string& name = "operator");

// What a file holds, without reading the parameters.
struct StoredOperator {
  std::string name;
  std::string strop_type;   // "ks_chain", "product", ...
  std::string scalar_type;  // "float32", "float64", "complex64", "complex128"
  Index rows = 0;
  Index cols = 0;
  std::optional<Provenance> provenance;
};
std::vector<StoredOperator> list_operators(const std::string& path);

// Plain matrices: a 2-D dataset (rows x cols, row-major as numpy shows it) or a 1-D one
// (read as a column). `dataset` is an absolute path inside the file ("/signals").
// load_matrix<T> needs a dataset of T's own scalar type (an IoError names both types
// otherwise; unlike load_npy it does not widen): matrix_scalar_type says which to load.
template <class T>
HostMatrix<T> load_matrix(const std::string& path, const std::string& dataset);
// save_matrix marks the file as a strop file (the root's format version), like save.
template <class T>
void save_matrix(const std::string& path, const std::string& dataset, const HostMatrix<T>& m);
// The scalar type of a stored matrix dataset ("float32", ..., as above).
std::string matrix_scalar_type(const std::string& path, const std::string& dataset);

}  // namespace strop::io
