// tests/trace_known.h: a small program whose execution trace has known
// counts, shared by trace_test.cc and gort-trace-known (the program the
// gort-trace summary ctest traces). Run it at GOMAXPROCS 1:
//   - kSenders rounds: main starts a goroutine that sends one value and
//     receives it; with one P the sender cannot run before main parks, so
//     each round has exactly one block (main in chan receive, or, if sysmon
//     preempted main in between, the sender in chan send);
//   - one syscall: main blocks in the kernel on an event (test_os.h) that
//     only a goroutine queued behind it signals, so sysmon must retake the
//     P exactly once.
// Goroutines: main + kSenders + 1 writer, all created and ended.
#ifndef GORT_TESTS_TRACE_KNOWN_H_
#define GORT_TESTS_TRACE_KNOWN_H_

#include <cstdlib>
#include <memory>

#include "gort/gort.h"
#include "test_os.h"

namespace gort_test {

inline constexpr int kKnownSenders = 8;
inline constexpr int kKnownGoroutines = 1 + kKnownSenders + 1;

// KnownProgram is the body of goroutine 1 (run it with Options.maxprocs 1).
inline void KnownProgram() {
  auto ch = gort::MakeChan<int>();
  int sum = 0;
  for (int i = 1; i <= kKnownSenders; i++) {
    gort::Go([ch, i] { ch.Send(i); });
    sum += ch.Recv();
  }
  if (sum != kKnownSenders * (kKnownSenders + 1) / 2) std::abort();
  auto event = std::make_shared<EventFd>();
  if (!event->ok()) std::abort();
  gort::Go([event] {
    if (!event->Signal()) std::abort();
  });
  // The signaller is queued on the only P: it runs once sysmon hands the P
  // off. WaitFor's timeout only bounds a broken runtime. (No channel tells
  // main the signal happened: main would block on it if the signaller were
  // preempted in between, one block too many.)
  bool signalled = gort::Syscall([event] { return event->WaitFor(10'000); });
  if (!signalled) std::abort();
  // Let the signaller finish (it may still be running) before main returns.
  while (gort::NumGoroutine() > 1) gort::Gosched();
}

}  // namespace gort_test

#endif  // GORT_TESTS_TRACE_KNOWN_H_
