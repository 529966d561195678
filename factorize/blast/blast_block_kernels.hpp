#pragma once
// The element-wise pieces of BlastKernels on the GPU, one CUDA kernel each (internal header,
// CUDA builds). Their meaning is documented on the BlastKernels methods of the same names;
// pointers are device pointers, work is queued on ctx's stream.
#include "factorize/blast/blast_kernels.hpp"

namespace strop::detail {

template <class T>
void launch_scale_left_factor(const BlastShape& s, const T* B, const T* d, T* b_bar, Context& ctx);
template <class T>
void launch_scale_right_factor(const BlastShape& s, const T* C, const T* d, T* c_bar, Context& ctx);
template <class T>
void launch_weighted_gram_sum(const BlastShape& s, const T* grams, const T* d, bool over_col_blocks,
                              T* out, Context& ctx);
template <class T>
void launch_hadamard_gram(const BlastShape& s, const T* F, const T* G, T* k, Context& ctx);
template <class T>
void launch_diagonal_dots(const BlastShape& s, const T* z, const T* C, T* g, Context& ctx);
// K_t += shift I for the batch of n x n matrices at K + t n^2.
template <class T>
void launch_add_to_diagonal(T* K, Index n, Index batch, double shift, Context& ctx);
// pointers[t] = base + t * stride: the pointer arrays of the batched cuBLAS/cuSOLVER routines.
template <class T>
void launch_batch_pointers(T* base, Index stride, Index batch, T** pointers, Context& ctx);

}  // namespace strop::detail
