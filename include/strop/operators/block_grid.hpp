#pragma once
// BlockGrid: the shape shared by the block low-rank operators (Monarch, Blast). An M x N
// operator is cut into row_blocks x col_blocks blocks of block_height() x block_width(),
// each of rank `rank`.
#include <cstdint>

#include "strop/core/device_cache.hpp"
#include "strop/core/error.hpp"
#include "strop/core/scalar.hpp"

namespace strop {

struct BlockGrid {
  Index rows = 0;
  Index cols = 0;
  Index row_blocks = 1;
  Index col_blocks = 1;
  Index rank = 0;

  Index block_height() const { return rows / row_blocks; }
  Index block_width() const { return cols / col_blocks; }
  Index block_count() const { return row_blocks * col_blocks; }

  // The grid as op(A) sees it: A^T and A^H read block rows and write block columns.
  struct Oriented {
    Index in_blocks, out_blocks, in_size, out_size;
  };
  Oriented oriented(bool transposed) const {
    if (transposed) return {row_blocks, col_blocks, block_height(), block_width()};
    return {col_blocks, row_blocks, block_width(), block_height()};
  }
};

namespace detail {
// Validates a grid; `name` prefixes the ShapeError messages.
inline BlockGrid make_block_grid(const char* name, Index rows, Index cols, Index row_blocks,
                                 Index col_blocks, Index rank) {
  require<ShapeError>(rows >= 0 && cols >= 0 && rank >= 0, name, ": negative size (", rows, "x",
                      cols, ", rank ", rank, ")");
  require<ShapeError>(row_blocks >= 1 && col_blocks >= 1, name, ": block counts must be >= 1, got ",
                      row_blocks, "x", col_blocks);
  require<ShapeError>(rows % row_blocks == 0 && cols % col_blocks == 0, name, ": a ", rows, "x",
                      cols, " operator cannot be cut into ", row_blocks, "x", col_blocks,
                      " equal blocks");
  // The largest parameter arrays (Monarch's col_blocks x rows x rank left blocks and
  // row_blocks x rank x cols right blocks; Blast's are smaller) must have a countable size:
  // a wrapped count would match a short array and every later read would run past its end.
  Index rows_rank = 0, cols_rank = 0, left = 0, right = 0;
  require<ShapeError>(!__builtin_mul_overflow(rows, rank, &rows_rank) &&
                          !__builtin_mul_overflow(cols, rank, &cols_rank) &&
                          !__builtin_mul_overflow(rows_rank, col_blocks, &left) &&
                          !__builtin_mul_overflow(cols_rank, row_blocks, &right),
                      name, ": a ", rows, "x", cols, " operator of ", row_blocks, "x", col_blocks,
                      " blocks of rank ", rank, " has more parameters than an index counts");
  return {rows, cols, row_blocks, col_blocks, rank};
}

// Device copies of a Blast's, Monarch's or LowRank's values in the layouts its GEMM plans
// read (operators/blr/blr_gemm_plan.hpp: the left values, the right values, one re-laid array,
// Monarch's values in the unfused baseline's layout and its two factors by rank index, BLAST's
// couplings folded into its first or last factors), as the operator's scalar type and rounded
// to half and bfloat16 (16-bit words). Each is made on first use.
template <class T>
struct BlrPlanWeights {
  static constexpr int kArrays = 8;
  DeviceCache<T> native[kArrays];
  DeviceCache<std::uint16_t> half[kArrays], bf16[kArrays];
};

// Checks that a parameter array has the size the grid needs.
template <class Vector>
void require_size(const char* name, const char* what, const Vector& values, Index expected) {
  require<ShapeError>(static_cast<Index>(values.size()) == expected, name, ": ", what, " needs ",
                      expected, " values, got ", values.size());
}
}  // namespace detail

}  // namespace strop
