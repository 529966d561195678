#pragma once
// The encode and decode steps of a Strassen-Tile operator on the GPU (internal header;
// kernels in stl_kernels.cu). Storage is one of the four scalar types, or half/bfloat16
// (computed in float).
#include <complex>
#include <type_traits>

#include "strop/core/context.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

// The arithmetic type of a storage type: itself, or float for half/bfloat16.
template <class Storage>
using StlCompute = std::conditional_t<is_reduced_precision_v<Storage>, float, Storage>;
// The (real) type of the encoder/decoder coefficients.
template <class Storage>
using StlCoef = RealOf<StlCompute<Storage>>;

// Where the r colours of one side (input or output) live: colour p of the pair (signal tile
// I, feature tile F) is element p * pairs + (signal_fast ? I + S F : F + features I), with
// pairs = S * features. signal_fast matches a batch-last (RowMajor) X or Y, so that the
// encode and decode kernels read and write both sides with consecutive threads.
struct StlColourLayout {
  Index signal_tiles = 0;
  Index feature_tiles = 0;
  bool signal_fast = false;
  Index pairs() const { return signal_tiles * feature_tiles; }
};

// The largest tile the kernels take (t^2 values per thread in registers).
inline constexpr Index kStlMaxDeviceTile = 8;

// How a batch's t = 4 tiles can move along one dimension: element by element, or as aligned
// words along its features (row stride 1, ColMajor) or its signals (column stride 1, RowMajor).
enum StlContiguity : int {
  kStrided = 0,
  kFeaturesContiguous = 1,
  kSignalsContiguous = 2,
};

// Which kernels encode, decode and mix 16-bit signals with t = 4 tiles: the tensor-core
// kernels (stl_coding_mma.cu) where they apply (ranks up to kStlCodingMaxRank, X and Y
// contiguous along one dimension), or always the scalar kernels and the cuBLAS mixing GEMM
// (the earlier path, which tests and stl_bench compare them with). Per thread; default
// TensorCores.
enum class StlCoding { TensorCores, Scalar };
StlCoding stl_coding();
void set_stl_coding(StlCoding coding);
inline constexpr Index kStlCodingMaxRank = 64;

// colours = encoder (r x t^2, row-major, device) applied to every input tile of X (t signals
// x t features, entry i + t f; signals beyond X.cols are zero).
template <class Storage>
void stl_encode(Index tile, Index rank, const StlCoef<Storage>* encoder, ConstView<Storage> X,
                Storage* colours, const StlColourLayout& layout, Context& ctx);
// Y = alpha decode(colours) + beta Y for the signals of Y (a final partial tile is cut).
template <class Storage>
void stl_decode(Index tile, Index rank, const StlCoef<Storage>* decoder, const Storage* colours,
                const StlColourLayout& layout, MatrixView<Storage> Y, StlCompute<Storage> alpha,
                StlCompute<Storage> beta, Context& ctx);

// The tensor-core forms of stl_encode, stl_decode and the chain's mixing (stl_coding_mma.cu):
// half/bfloat16, t = 4, ranks up to kStlCodingMaxRank; X and Y contiguous as `contiguity` says
// (16-byte aligned data and even strides), colours in the StlColourLayout order. Mixing:
// next (next_rank x pairs) = mix (next_rank x rank, column-major, leading dimension mix_ld)
// colours (rank x pairs), both colour-major.
template <class Storage>
void stl_encode_mma(Index rank, const float* encoder, ConstView<Storage> X, Storage* colours,
                    const StlColourLayout& layout, int contiguity, Context& ctx);
template <class Storage>
void stl_decode_mma(Index rank, const float* decoder, const Storage* colours,
                    const StlColourLayout& layout, MatrixView<Storage> Y, float alpha, float beta,
                    int contiguity, Context& ctx);
template <class Storage>
void stl_mix_mma(Index rank, const Storage* colours, Index pairs, const Storage* mix, Index mix_ld,
                 Index next_rank, Storage* next, Context& ctx);

// Y = alpha decode(the colour GEMMs of `encoded`) + beta Y in one kernel (stl_fused.cu): t = 4,
// op(A) = A, real values, at most 4 signal tiles and rank 64, in_tiles a multiple of 8.
// encoded: r x in_tiles x signal_tiles, signal tiles fastest (stl_encode with signal_fast);
// weight: Ŵ colour-major (in_tiles x out_tiles column-major blocks); decoder: r x 16
// row-major. Both 16-byte aligned.
template <class Storage>
void stl_colours_decode(Index rank, Index in_tiles, Index out_tiles, Index signal_tiles,
                        const Storage* encoded, const Storage* weight,
                        const StlCoef<Storage>* decoder, MatrixView<Storage> Y,
                        StlCompute<Storage> alpha, StlCompute<Storage> beta, Context& ctx);
// The same kernel inside a chain: the colours mixed into the next layer's encoded signals
// (the fused decode-encode), next(q, J, I) = sum_p mix(q, p) Ŷ^(p)(J, I) with mix r_next x r
// column-major (leading dimension mix_ld, r_next <= 64), next r_next x out_tiles x
// signal_tiles with the signal tiles fastest (the layout the kernel reads).
template <class Storage>
void stl_colours_mix(Index rank, Index in_tiles, Index out_tiles, Index signal_tiles,
                     const Storage* encoded, const Storage* weight, const Storage* mix,
                     Index mix_ld, Index next_rank, Storage* next, Context& ctx);

}  // namespace strop::detail
