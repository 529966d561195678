#pragma once
// The encode and decode steps of a Strassen-Tile operator on the GPU (internal header;
// kernels in stl_kernels.cu). Storage is one of the four scalar types, or half/bfloat16
// (computed in float).
#include <complex>
#include <cstdint>
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

// Coefficients of one encode or decode (r x t^2 values) that the kernels take as a launch
// parameter instead of reading them from memory (t = 4: ranks up to 64).
inline constexpr Index kStlParamCoefficients = 1024;

// How a batch's t = 4 tiles move along its contiguous dimension (the kernels' vector paths).
enum StlContiguity : int {
  kStrided = 0,             // element by element
  kFeaturesContiguous = 1,  // row stride 1 (ColMajor): a tile's 4 features are neighbours
  kSignalsContiguous = 2,   // column stride 1 (RowMajor): a tile's 4 signals are neighbours
};

// The tensor-core encode and decode (stl_coding_mma.cu) for 16-bit signals, which stl_encode
// and stl_decode call where they apply: t = 4, ranks up to kStlCodingMaxRank, 16-byte aligned
// data, and either the features contiguous (ColMajor, column stride a multiple of 8) with the
// colours' feature tiles fastest, or the signals contiguous (RowMajor, row stride a multiple of
// 8) with the signal tiles fastest; kStlCodingPairsPerWarp divides the tiles of the fast order.
inline constexpr Index kStlCodingMaxRank = 64;
inline constexpr Index kStlCodingPairsPerWarp = 32;
template <class V>
bool stl_coding_mma_takes(Index tile, Index rank, const V& view, const StlColourLayout& layout) {
  if (tile != 4 || rank < 1 || rank > kStlCodingMaxRank ||
      reinterpret_cast<std::uintptr_t>(view.data) % 16 != 0)
    return false;
  if (view.row_stride == 1 && !layout.signal_fast)
    return view.col_stride % 8 == 0 && layout.feature_tiles % kStlCodingPairsPerWarp == 0;
  if (view.col_stride == 1 && layout.signal_fast)
    return view.row_stride % 8 == 0 && layout.signal_tiles % kStlCodingPairsPerWarp == 0;
  return false;
}
template <class Storage>
void stl_encode_mma(Index rank, const float* encoder, ConstView<Storage> X, Storage* colours,
                    const StlColourLayout& layout, Context& ctx);
template <class Storage>
void stl_decode_mma(Index rank, const float* decoder, const Storage* colours,
                    const StlColourLayout& layout, MatrixView<Storage> Y, float alpha, float beta,
                    Context& ctx);

// colours = encoder (r x t^2, row-major, device) applied to every input tile of X (t signals
// x t features, entry i + t f; signals beyond X.cols are zero). encoder_host: the same values
// on the host, or null; with them and r t^2 <= kStlParamCoefficients they travel as a kernel
// parameter (faster: stl_kernels.cu).
// tensor_cores = false keeps the scalar kernels where the tensor-core ones would apply (tests
// and stl_bench compare the two).
template <class Storage>
void stl_encode(Index tile, Index rank, const StlCoef<Storage>* encoder,
                const StlCoef<Storage>* encoder_host, ConstView<Storage> X, Storage* colours,
                const StlColourLayout& layout, Context& ctx, bool tensor_cores = true);
// Y = alpha decode(colours) + beta Y for the signals of Y (a final partial tile is cut).
template <class Storage>
void stl_decode(Index tile, Index rank, const StlCoef<Storage>* decoder,
                const StlCoef<Storage>* decoder_host, const Storage* colours,
                const StlColourLayout& layout, MatrixView<Storage> Y, StlCompute<Storage> alpha,
                StlCompute<Storage> beta, Context& ctx, bool tensor_cores = true);

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
