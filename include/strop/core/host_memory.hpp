#pragma once
// Host allocations that fail become typed errors (DESIGN.md section 6: public entries throw
// typed errors only): a ShapeError that names what was being allocated and how many bytes.
#include <cstddef>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "strop/core/error.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// count * element_size in decimal, exact even where it overflows 64 bits: messages about
// memory name the bytes that were asked for.
inline std::string byte_count(Index count, std::size_t element_size) {
  const std::string digits = std::to_string(count);
  std::string product;  // least significant digit first
  std::size_t carry = 0;
  for (auto digit = digits.rbegin(); digit != digits.rend(); ++digit) {
    carry += std::size_t(*digit - '0') * element_size;
    product.push_back(char('0' + carry % 10));
    carry /= 10;
  }
  for (; carry > 0; carry /= 10)
    product.push_back(char('0' + carry % 10));
  return {product.rbegin(), product.rend()};
}

// What a failed host allocation throws: a ShapeError for callers. Its own type lets an outer
// translation (apply() around a node's temporaries) add what it was doing to the message.
class HostMemoryError : public ShapeError {
 public:
  using ShapeError::ShapeError;
};

// Runs run(); host memory it cannot get becomes a HostMemoryError with the text message()
// returns (DESIGN.md section 6: public entries throw typed errors only). Out of memory is a
// std::bad_alloc; a container asked for more than it can ever hold throws std::length_error;
// a HostMemoryError from inside keeps its text after message()'s. Other typed errors pass
// through.
template <class Run, class Message>
decltype(auto) translating_host_memory_errors(Run&& run, Message&& message) {
  try {
    return run();
  } catch (const HostMemoryError& inner) {
    throw HostMemoryError(concat(message(), ": ", inner.what()));
  } catch (const std::bad_alloc&) {
    throw HostMemoryError(message());
  } catch (const std::length_error&) {
    throw HostMemoryError(message());
  }
}

// Runs allocate(), which makes `count` `unit` (e.g. "indices") of element_size bytes each in
// host memory for `what`. Both a byte count that no allocation can ask for (beyond PTRDIFF_MAX,
// the most a std::vector or Eigen matrix holds) and a failed allocation are a ShapeError:
// "what: count unit (bytes bytes) do not fit in host memory".
template <class Allocate>
decltype(auto) allocating_host(const std::string& what, Index count, const char* unit,
                               std::size_t element_size, Allocate&& allocate) {
  const auto message = [&] {
    return concat(what, ": ", count, " ", unit, " (", byte_count(count, element_size),
                  " bytes) do not fit in host memory");
  };
  require<ShapeError>(count >= 0, what, ": negative count ", count, " of ", unit);
  const auto most = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
  if (static_cast<std::size_t>(count) > most / element_size) throw HostMemoryError(message());
  return translating_host_memory_errors(std::forward<Allocate>(allocate), message);
}

// Host memory for temporaries (Buffer), from a per-thread cache of the blocks freed last. Every
// application of an expression allocates its temporaries afresh; without the cache, glibc hands
// blocks of more than 128 KiB back to the system when they are freed, and the next call
// page-faults them in again: a 4096-point complex butterfly on 64 signals took 15 ms instead of
// 3 on two threads. take() returns a block of at least `bytes` (64-byte aligned, contents
// undefined) and its size, to pass to give(); it throws std::bad_alloc.
std::pair<void*, std::size_t> host_block_take(std::size_t bytes);
void host_block_give(void* data, std::size_t bytes) noexcept;

}  // namespace strop::detail
