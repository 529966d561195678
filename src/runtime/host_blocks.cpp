#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "strop/core/host_memory.hpp"

namespace strop::detail {

namespace {

// Blocks are 64-byte aligned (whole cache lines, any SIMD width).
constexpr std::align_val_t kAlignment{64};
// What one thread keeps: up to 8 blocks of at most 64 MiB together. Larger temporaries cost
// enough work that their allocation does not show.
constexpr std::size_t kMostBytes = std::size_t(64) << 20;
constexpr std::size_t kMostBlocks = 8;

struct Block {
  void* data;
  std::size_t bytes;
};

void free_block(const Block& b) noexcept {
  ::operator delete(b.data, b.bytes, kAlignment);
}

// The thread's freed blocks, newest last.
struct BlockCache {
  std::vector<Block> blocks;
  std::size_t bytes = 0;
  ~BlockCache();
};

thread_local bool cache_gone = false;  // trivially destructible: readable after ~BlockCache
thread_local BlockCache cache;

BlockCache::~BlockCache() {
  for (const Block& b : blocks)
    free_block(b);
  cache_gone = true;
}

}  // namespace

std::pair<void*, std::size_t> host_block_take(std::size_t bytes) {
  if (bytes == 0) return {nullptr, 0};
  if (!cache_gone) {
    // The smallest cached block that holds `bytes` without wasting more than half of it; of
    // equal ones the newest, whose lines are likeliest still in cache.
    auto best = cache.blocks.end();
    for (auto it = cache.blocks.begin(); it != cache.blocks.end(); ++it)
      if (it->bytes >= bytes && it->bytes / 2 <= bytes &&
          (best == cache.blocks.end() || it->bytes <= best->bytes))
        best = it;
    if (best != cache.blocks.end()) {
      const Block b = *best;
      cache.blocks.erase(best);
      cache.bytes -= b.bytes;
      return {b.data, b.bytes};
    }
  }
  return {::operator new(bytes, kAlignment), bytes};  // std::bad_alloc when there is none
}

void host_block_give(void* data, std::size_t bytes) noexcept {
  if (data == nullptr) return;
  if (cache_gone || bytes > kMostBytes) return free_block({data, bytes});
  try {
    cache.blocks.push_back({data, bytes});
  } catch (...) {  // no room to remember it: give it back
    return free_block({data, bytes});
  }
  cache.bytes += bytes;
  while (cache.blocks.size() > kMostBlocks || cache.bytes > kMostBytes) {
    free_block(cache.blocks.front());  // the oldest first
    cache.bytes -= cache.blocks.front().bytes;
    cache.blocks.erase(cache.blocks.begin());
  }
}

}  // namespace strop::detail
