#pragma once
// The layer shapes of the BLR paper's Table 3 (Llama-7B, Llama-3.2-1B, GPT2-S, ViT-B,
// DiT-XL/2 with their (r, b)): what bench/blr_bench times and tests/gpu/test_blr_gpu.cpp
// checks at a few tokens.
#include <string>
#include <vector>

#include "strop/core/view.hpp"

namespace strop::bench {

struct BlrLayer {
  std::string model, name;
  Index in, out;
  Index lowrank_r, monarch_r, monarch_b, blast_r, blast_b;  // 0: not in the table
  // Monarch's r is the rank of a block row: r / b per block of its b x b grid.
  Index monarch_rank_per_block() const { return monarch_b > 0 ? monarch_r / monarch_b : 0; }
};

// i -> o, (r, b) for low-rank / Monarch / BLAST.
inline const std::vector<BlrLayer> kBlrLayers = {
    {"Llama-7B", "qkvo", 4096, 4096, 1024, 1024, 16, 1024, 16},
    {"Llama-7B", "gate_up", 4096, 11008, 1488, 1536, 16, 1488, 16},
    {"Llama-7B", "down", 11008, 4096, 1488, 1536, 16, 1488, 16},
    {"Llama-3.2-1B", "qo", 2048, 2048, 256, 256, 16, 256, 16},
    {"Llama-3.2-1B", "gate", 2048, 8192, 512, 512, 16, 512, 16},
    {"Llama-3.2-1B", "up", 2048, 8192, 768, 768, 16, 768, 16},
    {"Llama-3.2-1B", "down", 8192, 2048, 768, 768, 16, 768, 16},
    {"GPT2-S", "c_attn", 768, 2304, 192, 192, 4, 192, 6},
    {"GPT2-S", "c_fc", 768, 3072, 192, 192, 4, 192, 6},
    {"GPT2-S", "c_proj", 3072, 768, 192, 192, 4, 192, 6},
    {"ViT-B", "qkv", 768, 2304, 128, 128, 4, 128, 3},
    {"ViT-B", "fc1", 768, 3072, 128, 128, 4, 128, 3},
    {"ViT-B", "fc2", 3072, 768, 128, 128, 4, 128, 3},
    {"DiT-XL/2", "qkv", 1152, 3456, 384, 0, 0, 384, 9},
    {"DiT-XL/2", "fc1", 1152, 4608, 256, 0, 0, 256, 9},
};

}  // namespace strop::bench
