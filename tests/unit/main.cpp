// The one translation unit that compiles Boost.Test's header-only implementation.
#define BOOST_TEST_MODULE strop_unit_tests
#include <boost/test/included/unit_test.hpp>
