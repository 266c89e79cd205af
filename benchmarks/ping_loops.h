// benchmarks/ping_loops.h: the loop bodies of the ping family (gort-compare
// --ping; gort-ping on Windows), Linux ports of the ping benchmarks Go added
// with "runtime: use CreateWaitableTimerEx to implement usleep"
// (runtime/syscall_windows_test.go).
//
// Each function runs its ping-pong `n` times and must be called from a
// goroutine, normally the main function given to gort::Run. They are plain
// inline functions so that tests can call them as correctness checks: every
// value that crosses a channel or an event is checked, and a broken protocol
// or a failing system call prints a message and aborts the process.
//
// Go's benchmarks use a Windows auto-reset event; here it is an eventfd
// without EFD_SEMAPHORE. "Wait for the event" is a read() of the 8-byte
// counter, which blocks while the counter is zero and resets it to zero, and
// "set the event" is a write() adding 1. Both run inside gort::Syscall, as
// Go's WaitForSingleObject and SetEvent are syscalls: while a goroutine
// blocks in the read its P stays in the syscall state, and only sysmon can
// take it back for the other goroutine. That is why the Syscall benchmarks
// measure how often sysmon wakes, i.e. the real resolution of usleep.
#ifndef GORT_BENCHMARKS_PING_LOOPS_H_
#define GORT_BENCHMARKS_PING_LOOPS_H_

#include <errno.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/loops_fail.h"
#include "gort/chan.h"
#include "gort/runtime.h"

namespace gort::bench {

namespace ping_internal {

// Prints "ping_loops: <what>" and aborts.
[[noreturn]] inline void Fail(const char* what) {
  LoopsFail("ping_loops", what);
}

// Prints "ping_loops: <what>: <strerror(err)>" and aborts.
[[noreturn]] inline void FailErrno(const char* what, int err) {
  LoopsFail("ping_loops", what, std::strerror(err));
}

}  // namespace ping_internal

#if defined(_WIN32)
// Go's own event: CreateEvent with automatic reset, initially not signalled;
// SetEvent and WaitForSingleObject(INFINITE), each as a syscall, exactly as
// runtime/syscall_windows_test.go writes the benchmarks.
class PingEvent {
 public:
  PingEvent() : h_(CreateEventW(nullptr, FALSE, FALSE, nullptr)) {
    if (h_ == nullptr) ping_internal::Fail("CreateEvent failed");
  }
  PingEvent(const PingEvent&) = delete;
  PingEvent& operator=(const PingEvent&) = delete;
  ~PingEvent() { CloseHandle(h_); }

  // Signals the event (SetEvent), as a syscall.
  void Set() const {
    HANDLE h = h_;
    bool ok = true;
    gort::Syscall([h, &ok] { ok = SetEvent(h) != 0; });
    if (!ok) ping_internal::Fail("SetEvent failed");
  }

  // Blocks until the event is signalled, which resets it; returns 1 as the
  // eventfd version does.
  std::uint64_t Wait() const {
    HANDLE h = h_;
    DWORD r = 0;
    gort::Syscall([h, &r] { r = WaitForSingleObject(h, INFINITE); });
    if (r != WAIT_OBJECT_0) ping_internal::Fail("WaitForSingleObject failed");
    return 1;
  }

 private:
  HANDLE h_;
};
#else
// An auto-reset event on an eventfd, standing in for the Windows event of
// Go's benchmarks (CreateEvent with automatic reset, initially not
// signalled).
class PingEvent {
 public:
  PingEvent() : fd_(eventfd(0, EFD_CLOEXEC)) {
    if (fd_ < 0) ping_internal::FailErrno("eventfd", errno);
  }
  PingEvent(const PingEvent&) = delete;
  PingEvent& operator=(const PingEvent&) = delete;
  ~PingEvent() { close(fd_); }

  // Signals the event: adds 1 to the counter (Go's SetEvent), as a syscall.
  void Set() const {
    // The lambdas return void: gort::Syscall's value-returning path trips
    // GCC 12's -Wmaybe-uninitialized at -O2.
    const int fd = fd_;
    int err = 0;
    gort::Syscall([fd, &err] {
      const std::uint64_t one = 1;
      ssize_t r;
      do {
        r = write(fd, &one, sizeof(one));
      } while (r < 0 && errno == EINTR);
      if (r < 0) {
        err = errno;
      } else if (r != sizeof(one)) {
        err = EIO;
      }
    });
    if (err != 0) ping_internal::FailErrno("eventfd write", err);
  }

  // Blocks until the event is signalled, resets it and returns the counter
  // it read (Go's WaitForSingleObject with INFINITE), as a syscall.
  std::uint64_t Wait() const {
    const int fd = fd_;
    std::uint64_t value = 0;
    int err = 0;
    gort::Syscall([fd, &value, &err] {
      ssize_t r;
      do {
        r = read(fd, &value, sizeof(value));
      } while (r < 0 && errno == EINTR);
      if (r < 0) {
        err = errno;
      } else if (r != sizeof(value)) {
        err = EIO;
      }
    });
    if (err != 0) ping_internal::FailErrno("eventfd read", err);
    return value;
  }

 private:
  int fd_;
};

#endif

// The thread yield of each OS (Go's osyield: SwitchToThread on Windows).
inline void ThreadYield() {
#if defined(_WIN32)
  SwitchToThread();
#else
  sched_yield();
#endif
}

// BenchmarkChanToSyscallPing: the main goroutine sets an event and waits on
// a channel; a second goroutine waits for the event in a syscall and answers
// on the channel. Each round trip needs sysmon to retake the P from the
// goroutine blocked in the syscall, so the time per op follows usleep.
inline void ChanToSyscallPing(std::int64_t n) {
  auto ch = gort::MakeChan<int>();
  auto event = std::make_shared<PingEvent>();
  gort::Go([n, ch, event] {
    for (std::int64_t i = 0; i < n; ++i) {
      if (event->Wait() != 1) {
        ping_internal::Fail("ChanToSyscallPing: event counter is not 1");
      }
      ch.Send(1);
    }
  });
  for (std::int64_t i = 0; i < n; ++i) {
    event->Set();
    if (ch.Recv() != 1) {
      ping_internal::Fail("ChanToSyscallPing: ch delivered a value != 1");
    }
  }
}

// BenchmarkSyscallToSyscallPing: both goroutines block in syscalls; the main
// goroutine sets event1 and waits for event2, the other waits for event1
// and sets event2.
inline void SyscallToSyscallPing(std::int64_t n) {
  auto event1 = std::make_shared<PingEvent>();
  auto event2 = std::make_shared<PingEvent>();
  gort::Go([n, event1, event2] {
    for (std::int64_t i = 0; i < n; ++i) {
      if (event1->Wait() != 1) {
        ping_internal::Fail("SyscallToSyscallPing: event1 counter is not 1");
      }
      event2->Set();
    }
  });
  for (std::int64_t i = 0; i < n; ++i) {
    event1->Set();
    if (event2->Wait() != 1) {
      ping_internal::Fail("SyscallToSyscallPing: event2 counter is not 1");
    }
  }
}

// BenchmarkChanToChanPing: two goroutines bounce a value over two unbuffered
// channels; no syscalls, so usleep should not matter (the control).
inline void ChanToChanPing(std::int64_t n) {
  auto ch1 = gort::MakeChan<int>();
  auto ch2 = gort::MakeChan<int>();
  gort::Go([n, ch1, ch2] {
    for (std::int64_t i = 0; i < n; ++i) {
      if (ch1.Recv() != 1) {
        ping_internal::Fail("ChanToChanPing: ch1 delivered a value != 1");
      }
      ch2.Send(1);
    }
  });
  for (std::int64_t i = 0; i < n; ++i) {
    ch1.Send(1);
    if (ch2.Recv() != 1) {
      ping_internal::Fail("ChanToChanPing: ch2 delivered a value != 1");
    }
  }
}

// BenchmarkOsYield, as specified for gort: sched_yield() wrapped in
// gort::Syscall, so each op also pays entersyscall/exitsyscall.
inline void OsYield(std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    gort::Syscall([] { ThreadYield(); });
  }
}

// BenchmarkOsYield as Go itself runs it: Go's osyield calls SwitchToThread
// on the system stack without entersyscall, so the goroutine keeps its P.
// The Linux equivalent is a bare sched_yield() on the goroutine's thread.
inline void OsYieldRaw(std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    ThreadYield();
  }
}

// PingBenchmark: one of the ping family, named as Go's without its
// "Benchmark" prefix: what gort-compare --ping and gort-ping (Windows) run.
struct PingBenchmark {
  const char* name;
  void (*loop)(std::int64_t n);
};

inline constexpr PingBenchmark kPingBenchmarks[] = {
    {"ChanToSyscallPing", ChanToSyscallPing},
    {"SyscallToSyscallPing", SyscallToSyscallPing},
    {"ChanToChanPing", ChanToChanPing},
    {"OsYield", OsYield},
    {"OsYieldRaw", OsYieldRaw},
};

// The usleep modes by the names the drivers' --usleep flag takes.
struct UsleepModeName {
  const char* name;
  gort::UsleepMode mode;
};

inline constexpr UsleepModeName kUsleepModes[] = {
    {"auto", gort::UsleepMode::kAuto},
    {"lowres", gort::UsleepMode::kLowRes},
    {"highres", gort::UsleepMode::kHighRes},
};

// The name of usleep mode m ("?" if none).
inline const char* UsleepName(gort::UsleepMode m) {
  for (const auto& u : kUsleepModes) {
    if (u.mode == m) return u.name;
  }
  return "?";
}

// ParseUsleepModes reads a comma-separated list of mode names, such as
// "lowres,highres"; empty if any name is unknown.
inline std::vector<gort::UsleepMode> ParseUsleepModes(const std::string& v) {
  std::vector<gort::UsleepMode> modes;
  std::size_t pos = 0;
  while (pos <= v.size()) {
    std::size_t comma = v.find(',', pos);
    if (comma == std::string::npos) comma = v.size();
    const std::string name = v.substr(pos, comma - pos);
    const UsleepModeName* found = nullptr;
    for (const auto& u : kUsleepModes) {
      if (name == u.name) found = &u;
    }
    if (found == nullptr) return {};
    modes.push_back(found->mode);
    pos = comma + 1;
  }
  return modes;
}

}  // namespace gort::bench

#endif  // GORT_BENCHMARKS_PING_LOOPS_H_
