#pragma once
// The HDF5 codec of every expression node (docs/hdf5-format.md): how a node's parameters
// and children map to a group, and back. Writing follows AnyOperator's graph; reading
// checks every attribute against the datasets and the limits below before it builds.
#include <limits>
#include <string>

#include "io/h5_file.hpp"
#include "strop/expr/any_operator.hpp"

namespace strop::io::codecs {

// What a file may ask of the reader: deeper nesting means a cycle of hard links or a
// hand-crafted file, more nodes a graph that shares subgroups to blow up. Saving refuses
// operators beyond them (limits_exceeded), so that every file strop writes loads.
struct ReadLimits {
  int max_depth = 64;
  Index max_nodes = Index(1) << 16;
  Index max_children = 4096;
  Index max_extent = Index(1) << 40;  // rows, cols, block counts, ranks
  // Bytes of parameters read in all. io::load sets it from the file's size: subgroups that
  // hard links share would otherwise make a small file read its data over and over.
  Index max_bytes = std::numeric_limits<Index>::max();
};

// Why writing `op` would make a file that read_operator refuses with these limits (nesting,
// node or children counts, extents), or "" if it would load.
template <class T>
std::string limits_exceeded(const AnyOperator<T>& op, const ReadLimits& limits = {});

template <class T>
void write_operator(const h5::Group& group, const AnyOperator<T>& op);

template <class T>
AnyOperator<T> read_operator(const h5::Group& group, const ReadLimits& limits = {});

}  // namespace strop::io::codecs
