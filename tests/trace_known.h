// tests/trace_known.h: a small program whose execution trace has known
// counts, shared by trace_test.cc and gort-trace-known (the program the
// gort-trace summary ctest traces). Run it at GOMAXPROCS 1:
//   - kSenders rounds: main starts a goroutine that sends one value and
//     receives it; with one P the sender cannot run before main parks, so
//     each round has exactly one block (main in chan receive, or, if sysmon
//     preempted main in between, the sender in chan send);
//   - one syscall: main blocks in poll on a pipe that only a goroutine
//     queued behind it writes, so sysmon must retake the P exactly once.
// Goroutines: main + kSenders + 1 writer, all created and ended.
#ifndef GORT_TESTS_TRACE_KNOWN_H_
#define GORT_TESTS_TRACE_KNOWN_H_

#include <poll.h>
#include <unistd.h>

#include <cstdlib>

#include "gort/gort.h"

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
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  gort::Go([fd = fds[1]] {
    char c = 'x';
    if (write(fd, &c, 1) != 1) std::abort();
  });
  // The writer is queued on the only P: it runs once sysmon hands the P
  // off. poll's timeout only bounds a broken runtime. (No channel tells
  // main the write happened: main would block on it if the writer were
  // preempted in between, one block too many.)
  int r = gort::Syscall([fd = fds[0]] {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 10'000);
  });
  char c = 0;
  if (r != 1 || read(fds[0], &c, 1) != 1 || c != 'x') std::abort();
  close(fds[0]);
  close(fds[1]);
  // Let the writer finish (it may still be running) before main returns.
  while (gort::NumGoroutine() > 1) gort::Gosched();
}

}  // namespace gort_test

#endif  // GORT_TESTS_TRACE_KNOWN_H_
