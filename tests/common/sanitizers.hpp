#pragma once
// What a build under scripts/sanitize.sh cannot test.
#include <boost/test/unit_test.hpp>

namespace strop::testing {

// Precondition of the tests that make an allocation fail on purpose (2^58 bytes, more than
// x86-64 maps) to check that it becomes a typed error: AddressSanitizer's operator new ends
// the process on a failed allocation instead of throwing std::bad_alloc, so those tests are
// skipped in its builds.
struct FailedAllocationsThrow {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
#if defined(__SANITIZE_ADDRESS__)
    boost::test_tools::assertion_result result(false);
    result.message() << "AddressSanitizer ends the process on a failed allocation";
    return result;
#else
    return true;
#endif
  }
};

}  // namespace strop::testing
