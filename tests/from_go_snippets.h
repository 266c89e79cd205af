// tests/from_go_snippets.h: the functions of tests/from_go_snippets.cc that
// from_go_test runs.
#ifndef GORT_TESTS_FROM_GO_SNIPPETS_H_
#define GORT_TESTS_FROM_GO_SNIPPETS_H_

#include <string>

#include "gort/context.h"

namespace from_go {

// Runs the pipeline example in its own gort::Run; returns its sum.
int GoAndChannels();
// The pipeline: workers double 1..5; returns the sum (30).
int Pipeline();
// select with and without default and timeout; returns the value received.
int SelectExamples();
// WaitGroup, Mutex, RWMutex, Once, Cond; returns the counter plus 100 if
// Once ran its function.
int SyncExamples();
// Sleep, Timer, AfterFunc and a Ticker loop; returns the ticks seen.
int TimeExamples();
// WithTimeout and WithCancel; returns the timed-out context's error.
gort::ContextError ContextExamples();
// GOMAXPROCS, NumGoroutine, Gosched, a recovered panic, a syscall; returns
// 1 if the panic was caught.
int RuntimeExamples();
#if defined(GORT_FROM_GO_PENDING) && GORT_FROM_GO_PENDING
// LockOSThread and Stack; returns the dump.
std::string ThreadExamples();
#endif

}  // namespace from_go

#endif  // GORT_TESTS_FROM_GO_SNIPPETS_H_
