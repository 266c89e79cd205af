// tests/panic_message.h: PanicMessage, shared by the tests that check
// gort::Panic's text (chan, select, sync, sleep, tick).
#ifndef GORT_TESTS_PANIC_MESSAGE_H_
#define GORT_TESTS_PANIC_MESSAGE_H_

#include <string>
#include <utility>

#include "gort/runtime.h"

namespace gort_test {

// Runs f and returns the message of the gort::Panic it throws, or "no panic".
// The catch block only copies the message.
template <class F>
std::string PanicMessage(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const gort::Panic& p) {
    return p.what();
  }
  return "no panic";
}

}  // namespace gort_test

#endif  // GORT_TESTS_PANIC_MESSAGE_H_
