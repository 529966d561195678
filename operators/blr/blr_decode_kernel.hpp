#pragma once
// Internal: the decode kernel's launch interface (blr_decode.cu), kept free of the operator
// headers so that the .cu does not see Eigen. blr_decode_cuda.cpp fills it from a plan.
#include "strop/core/context.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// Array slots, as PlanArray numbers them (blr_gemm_plan.hpp): X, Y, Z1, Z2, then the weights.
inline constexpr int kDecodeArrays = 12;
inline constexpr int kDecodeX = 0, kDecodeY = 1, kDecodeZ1 = 2, kDecodeZ2 = 3;
inline constexpr int kDecodeMaxStages = 3;

// Entry e of a batch starts at offset + e stride (elements).
struct DecodeOperand {
  int array = 0;
  long long offset = 0, stride = 0;
};

struct DecodeStage {
  DecodeOperand w, act, out;
  long long w_ld = 0;                    // W(row, k) at row + k w_ld
  long long act_k = 0, act_token = 0;    // act(k, token) at k act_k + token act_token
  long long out_row = 0, out_token = 0;  // C(row, token) at row out_row + token out_token
  long long entries = 0;                 // the batch of the GEMM step
  int rows = 0, depth = 0;               // rows of one entry, inner dimension k
  int groups_per_entry = 0;              // row groups of one entry
  long long groups = 0;                  // row groups of all entries
  int chunk_k = 0, chunks = 0;           // k per block item, items per row set
  long long items = 0;                   // row sets (32 row groups) x chunks
  int vector_weights = 0;                // every row group's weights are vector-aligned
  int vector_acts = 0;                   // activations fp32, tokens contiguous, aligned
};

// The accumulators live in a workspace that the kernel leaves as it found it: Z1 and Z2 come
// in two copies and a call works in copy (epoch & 1) while it zeroes the other for the next
// call; Y's accumulators and the row-set counters are zeroed by the block that reads them
// last. So a call needs no memset, and CUDA graph replays of it stay correct.
struct DecodeArgs {
  void* arrays[kDecodeArrays];  // X, Y, weights: Storage; Z1, Z2 (copy 0): set by the launch
  DecodeStage stages[kDecodeMaxStages];
  int count = 0, tokens = 0;
  // BLAST's couplings by output block (the operator's own layout, given by the plan side):
  // s(o, j, t) at o o_stride + j j_stride + t of array `array` (-1: none). Where stage 1 is
  // that coupling and the last stage reads what it writes, the launch sets `fold`: each item
  // of the last stage computes the coupled values it reads (from Z1, in shared memory), so
  // stage 1 and the grid barrier before it are skipped and Z2 is unused.
  struct Coupling {
    int array = -1;
    long long o_stride = 0, j_stride = 0;
    int fold = 0;
  } coupling;
  float alpha = 1, beta = 0;
  long long z1_size = 0, z2_size = 0;  // fp32 workspaces (values)
  long long z_span = 0;                // set by the launch: copy 0 to copy 1 of Z1, Z2 (4k values)
  long long y_extent = 0;              // 1 + the largest offset of Y's values
  float* y_accum = nullptr;            // set by the launch: Y's fp32 accumulators
  int* counters = nullptr;             // set by the launch: per row set of the last stage
  int* epoch = nullptr;                // set by the launch: calls made with this workspace
};

// Launches the kernel for Storage (float, half, bfloat16) values: fills the stages' row
// groups and chunks (from rows, depth and entries) and takes the accumulators
// from the context's persistent workspace for this layout (a zeroed stream-ordered
// allocation while a graph is captured and the workspace does not exist yet).
template <class Storage>
void launch_blr_decode(DecodeArgs& a, Context& ctx);

}  // namespace strop::detail
