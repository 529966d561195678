// Host temporaries (Buffer) come from a per-thread cache of freed blocks: they must still start
// zero-filled and aligned, whatever the block held before, and a freed block must serve the
// next temporary of its size (the point of the cache: no page faults on every call).
#include <boost/test/unit_test.hpp>
#include <complex>
#include <cstdint>
#include <vector>

#include "strop/core/buffer.hpp"

using namespace strop;

namespace {

template <class T>
bool all_zero(const Buffer<T>& b) {
  for (Index i = 0; i < b.size(); ++i)
    if (b.data()[i] != T(0)) return false;
  return true;
}

bool aligned_64(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 64 == 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(host_buffers)

BOOST_AUTO_TEST_CASE(a_reused_block_starts_zero_filled) {
  for (Index n : {Index(1), Index(1000), Index(300000)}) {  // up to 2.4 MB
    const void* first = nullptr;
    {
      Buffer<double> b(n, MemorySpace::Host, default_context());
      BOOST_TEST(all_zero(b));
      BOOST_TEST(aligned_64(b.data()));
      for (Index i = 0; i < n; ++i)
        b.data()[i] = 7.0;
      first = b.data();
    }
    Buffer<double> again(n, MemorySpace::Host, default_context());
    BOOST_TEST(again.data() == first, "n=" << n << ": the freed block serves the next buffer");
    BOOST_TEST(all_zero(again), "n=" << n);
    Buffer<std::complex<float>> other(n, MemorySpace::Host, default_context());
    BOOST_TEST(all_zero(other));
  }
}

BOOST_AUTO_TEST_CASE(many_blocks_and_large_ones) {
  // More blocks than the cache keeps, each written, freed, and drawn again.
  for (int round = 0; round < 3; ++round) {
    std::vector<Buffer<float>> buffers;
    for (int k = 0; k < 12; ++k) {
      buffers.emplace_back(Index(1) << 18, MemorySpace::Host, default_context());
      BOOST_TEST(all_zero(buffers.back()));
      BOOST_TEST(aligned_64(buffers.back().data()));
      for (Index i = 0; i < buffers.back().size(); ++i)
        buffers.back().data()[i] = float(k + 1);
    }
  }
  // 80 MB: more than one thread keeps; freed to the system, and a new one is zero too.
  for (int round = 0; round < 2; ++round) {
    Buffer<double> big(Index(10) << 20, MemorySpace::Host, default_context());
    BOOST_TEST(all_zero(big));
    big.data()[big.size() - 1] = 1.0;
  }
}

// Blocks of 8 MiB and more start on a 2 MiB boundary (advised for transparent huge pages,
// src/runtime/host_blocks.cpp), whether drawn fresh or from the cache, and are freed with the
// alignment they were allocated with (a mismatch is undefined behaviour that the allocator or
// a sanitizer reports).
BOOST_AUTO_TEST_CASE(large_blocks_start_on_huge_page_boundaries) {
  const auto aligned_2m = [](const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % (std::uintptr_t(2) << 20) == 0;
  };
  for (Index n : {Index(1) << 20, (Index(1) << 20) + 1, Index(3) << 20}) {  // 8 MiB and more
    const void* first = nullptr;
    {
      Buffer<double> b(n, MemorySpace::Host, default_context());
      BOOST_TEST(aligned_2m(b.data()), "n=" << n);
      BOOST_TEST(all_zero(b));
      b.data()[0] = b.data()[n - 1] = 5.0;
      first = b.data();
    }
    Buffer<double> again(n, MemorySpace::Host, default_context());
    BOOST_TEST(again.data() == first, "n=" << n << ": the freed block serves the next buffer");
    BOOST_TEST(aligned_2m(again.data()));
    BOOST_TEST(all_zero(again));
  }
  // Just below 8 MiB: the ordinary 64-byte alignment still holds.
  Buffer<double> small((Index(1) << 20) - 1, MemorySpace::Host, default_context());
  BOOST_TEST(aligned_64(small.data()));
}

BOOST_AUTO_TEST_CASE(moves_hand_over_the_block) {
  Buffer<double> a(1000, MemorySpace::Host, default_context());
  a.data()[999] = 3.0;
  const double* block = a.data();
  Buffer<double> b = std::move(a);
  BOOST_TEST(b.data() == block);
  BOOST_TEST(b.data()[999] == 3.0);
  BOOST_TEST(a.size() == 0);
  Buffer<double> c(10, MemorySpace::Host, default_context());
  c = std::move(b);  // c's own block goes back; b's moves in
  BOOST_TEST(c.data() == block);
  BOOST_TEST(c.size() == 1000);
  Buffer<double> empty(0, MemorySpace::Host, default_context());
  BOOST_TEST(empty.size() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
