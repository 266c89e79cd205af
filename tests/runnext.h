// tests/runnext.h: yielding to the goroutine just started or readied, for
// tests that need it parked (or done) before the caller goes on.
#ifndef GORT_TESTS_RUNNEXT_H_
#define GORT_TESTS_RUNNEXT_H_

#include "gort/gort.h"

namespace gort_test {

// LetRunnextRun yields so that, at GOMAXPROCS 1, the goroutine last started
// or readied (the P's runnext) runs before the caller goes on. One Gosched
// is not enough: on every 61st run the scheduler serves the global queue
// first (proc_findrunnable.cc, as Go's schedule does), and Gosched has just
// put the caller there, so the caller would run again; the next run is not
// a 61st.
inline void LetRunnextRun() {
  gort::Gosched();
  gort::Gosched();
}

}  // namespace gort_test

#endif  // GORT_TESTS_RUNNEXT_H_
