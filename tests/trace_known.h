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

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

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

// BlockingKinds is the body of goroutine 1 (GOMAXPROCS 1) of a program that
// blocks once in each way Go's trace names: in order, chan receive (main),
// select (main), sync.Mutex (the second locker), sync.Cond (main), WaitGroup
// (main), Sleep (main, woken by a timer), network (main in Accept, woken by
// the poller), a yield (Gosched) and a blocking syscall. With one P a new
// goroutine runs only once main blocks, so each block happens.
inline void BlockingKinds() {
  auto ch = gort::MakeChan<int>();
  gort::Go([ch] { ch.Send(1); });
  if (ch.Recv() != 1) std::abort();  // chan receive
  auto a = gort::MakeChan<int>();
  auto b = gort::MakeChan<int>();
  gort::Go([b] { b.Send(2); });
  int got = 0;
  if (gort::Select(gort::RecvCase(a), gort::RecvCase(b, &got)) != 1) {
    std::abort();  // select
  }
  auto mu = std::make_shared<gort::Mutex>();
  auto done = gort::MakeChan<int>();
  mu->Lock();
  gort::Go([mu, done] {
    mu->Lock();  // sync.Mutex: main holds it while it sleeps
    mu->Unlock();
    done.Send(0);
  });
  gort::Sleep(std::chrono::milliseconds(1));  // Sleep
  mu->Unlock();
  done.Recv();
  bool flag = false;
  gort::Cond cond(mu.get());
  mu->Lock();
  gort::Go([mu, &cond, &flag] {
    mu->Lock();
    flag = true;
    cond.Signal();
    mu->Unlock();
  });
  while (!flag) cond.Wait();  // sync.Cond
  mu->Unlock();
  gort::WaitGroup wg;
  wg.Add(1);
  gort::Go([&wg] { wg.Done(); });
  wg.Wait();  // WaitGroup
  gort::net::Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
  std::string addr = ln.Addr();
  gort::Go([addr] {
    gort::net::Conn c = gort::net::Dial("tcp", addr);
    c.Write("x", 1);
  });
  gort::net::Conn c = ln.Accept();  // network
  char x = 0;
  if (c.Read(&x, 1) != 1 || x != 'x') std::abort();
  gort::Gosched();  // yield
  auto event = std::make_shared<EventFd>();
  if (!event->ok()) std::abort();
  gort::Go([event] {
    if (!event->Signal()) std::abort();
  });
  if (!gort::Syscall([event] { return event->WaitFor(10'000); })) {
    std::abort();  // syscall, retaken by sysmon
  }
  while (gort::NumGoroutine() > 1) gort::Gosched();
}

}  // namespace gort_test

#endif  // GORT_TESTS_TRACE_KNOWN_H_
