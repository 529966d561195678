#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "strop/core/host_memory.hpp"

namespace strop::detail {

namespace {

// Blocks are 64-byte aligned (whole cache lines, any SIMD width).
constexpr std::align_val_t kAlignment{64};
// Blocks of 8 MiB and more start on a 2 MiB boundary and are advised for transparent huge
// pages: their first touch then faults once per 2 MiB, not once per 4 KiB page. Such blocks
// are fresh memory on every call beyond the cache below, and the faults dominated: a
// three-factor host Kron on 64 MiB double temporaries ran 3.2x faster with them
// (bench/NOTES-kron.md, session 41).
constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kHugeFrom = std::size_t(8) << 20;

std::align_val_t alignment_for(std::size_t bytes) {
  return bytes >= kHugeFrom ? std::align_val_t{kHugePage} : kAlignment;
}

void* allocate_block(std::size_t bytes) {
  void* data = ::operator new(bytes, alignment_for(bytes));  // std::bad_alloc when none
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugeFrom) (void)madvise(data, bytes, MADV_HUGEPAGE);  // advice only: errors ignored
#endif
  return data;
}
// What one thread keeps: up to 8 blocks of at most 64 MiB together. Larger temporaries are
// allocated anew each time (in huge pages, so that costs little next to their work).
constexpr std::size_t kMostBytes = std::size_t(64) << 20;
constexpr std::size_t kMostBlocks = 8;

struct Block {
  void* data;
  std::size_t bytes;
};

void free_block(const Block& b) noexcept {
  ::operator delete(b.data, b.bytes, alignment_for(b.bytes));
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
  return {allocate_block(bytes), bytes};
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
