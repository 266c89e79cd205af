// tests/gomaxprocs_env.h: RunWithGomaxprocsEnv, the death-test child shared
// by the tests of $GOMAXPROCS (gomaxprocs_api_test's GomaxprocsEnvDeathTest,
// fatal_test's warnings for values it caps or ignores).
#ifndef GORT_TESTS_GOMAXPROCS_ENV_H_
#define GORT_TESTS_GOMAXPROCS_ENV_H_

#include <cstdio>
#include <cstdlib>

#include "gort/gort.h"
#include "test_os.h"
#include "watchdog.h"

namespace gort_test {

// For death-test children: runs with $GOMAXPROCS = value and exits 0 if
// GOMAXPROCS(0) was want (-1: what it is with $GOMAXPROCS unset), else 1.
[[noreturn]] inline void RunWithGomaxprocsEnv(const char* value, int want) {
  if (want < 0) {
    unsetenv("GOMAXPROCS");
    RunGuarded([&] { want = gort::GOMAXPROCS(0); });
  }
  setenv("GOMAXPROCS", value, 1);
  int got = 0;
  RunGuarded([&] { got = gort::GOMAXPROCS(0); });
  if (got != want) {
    std::fprintf(stderr, "test: GOMAXPROCS(0) = %d, want %d\n", got, want);
    std::_Exit(1);
  }
  std::_Exit(0);
}

}  // namespace gort_test

#endif  // GORT_TESTS_GOMAXPROCS_ENV_H_
