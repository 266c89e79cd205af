// tests/timer_test_util.h: helpers shared by sleep_test.cc and tick_test.cc
// (and PanicMessage, from panic_message.h).
#ifndef GORT_TESTS_TIMER_TEST_UTIL_H_
#define GORT_TESTS_TIMER_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "gort/gort.h"
#include "panic_message.h"  // PanicMessage

namespace gort_test {

// True if c has a value ready now (it is taken).
inline bool Ready(const gort::Chan<std::int64_t>& c) {
  return gort::Select(gort::RecvCase(c), gort::DefaultCase()) == 0;
}

}  // namespace gort_test

#endif  // GORT_TESTS_TIMER_TEST_UTIL_H_
