// The one translation unit that compiles Boost.Test's header-only implementation.
// Without a CUDA device the whole executable reports "skipped" to CTest (exit code 77,
// see SKIP_RETURN_CODE in tests/CMakeLists.txt) instead of passing vacuously.
#define BOOST_TEST_MODULE strop_gpu_tests
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/included/unit_test.hpp>
#include <iostream>

#include "strop/core/context.hpp"

int main(int argc, char* argv[]) {
  if (!strop::cuda_available()) {
    std::cout << "no CUDA device visible: GPU tests skipped\n";
    return 77;
  }
  std::cout << "GPU tests on " << strop::device_name(0) << "\n";
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
