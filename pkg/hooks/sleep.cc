// pkg/hooks/sleep.cc: the sleeps and the name lookups of gort::hooks (Linux).
// On a goroutine a sleep is gort::Sleep (the P runs other goroutines
// meanwhile; never interrupted, so never EINTR), and getaddrinfo /
// gethostbyname_r, which block on the network inside libc where the poller
// cannot see them, run as gort::Syscall (the P is handed off if they take
// long). Elsewhere libc's.
#include <netdb.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>

#include "gort/runtime.h"
#include "hooks/fdtable.h"
#include "hooks/real.h"

namespace gh = gort::hooks;
using gh::real;

namespace {

constexpr std::int64_t kSec = 1'000'000'000;

// sleepNs: gort::Sleep for ns nanoseconds.
void sleepNs(std::int64_t ns) { gort::Sleep(std::chrono::nanoseconds(ns)); }

bool badTimespec(const timespec* ts) {
  return ts->tv_nsec < 0 || ts->tv_nsec >= kSec || ts->tv_sec < 0;
}

}  // namespace

extern "C" {

// nanosleep: gort::Sleep on a goroutine; rem, if given, is zero after.
int nanosleep(const timespec* req, timespec* rem) {
  if (!gh::onGoroutine()) return real().nanosleep(req, rem);
  if (badTimespec(req)) {
    errno = EINVAL;
    return -1;
  }
  sleepNs(std::int64_t{req->tv_sec} * kSec + req->tv_nsec);
  if (rem != nullptr) *rem = timespec{0, 0};
  return 0;
}

// clock_nanosleep: as nanosleep; TIMER_ABSTIME sleeps until the clock reads
// *req. Returns the error number, as libc's.
int clock_nanosleep(clockid_t clk, int flags, const timespec* req,
                    timespec* rem) {
  if (!gh::onGoroutine()) return real().clock_nanosleep(clk, flags, req, rem);
  if (badTimespec(req)) return EINVAL;
  std::int64_t ns = std::int64_t{req->tv_sec} * kSec + req->tv_nsec;
  if (flags & TIMER_ABSTIME) {
    timespec now;
    if (clock_gettime(clk, &now) != 0) return errno;
    ns -= std::int64_t{now.tv_sec} * kSec + now.tv_nsec;
  } else if (rem != nullptr) {
    *rem = timespec{0, 0};
  }
  if (ns > 0) sleepNs(ns);
  return 0;
}

// usleep: gort::Sleep on a goroutine.
int usleep(useconds_t usec) {
  if (!gh::onGoroutine()) return real().usleep(usec);
  sleepNs(std::int64_t{usec} * 1000);
  return 0;
}

// sleep: gort::Sleep on a goroutine; 0 seconds left.
unsigned sleep(unsigned sec) {
  if (!gh::onGoroutine()) return real().sleep(sec);
  sleepNs(std::int64_t{sec} * kSec);
  return 0;
}

// getaddrinfo: as gort::Syscall on a goroutine.
int getaddrinfo(const char* node, const char* service, const addrinfo* hints,
                addrinfo** res) {
  if (!gh::onGoroutine()) return real().getaddrinfo(node, service, hints, res);
  int err = 0;
  int r = gort::Syscall([&] {
    int v = real().getaddrinfo(node, service, hints, res);
    err = errno;
    return v;
  });
  errno = err;
  return r;
}

// gethostbyname_r: as gort::Syscall on a goroutine.
int gethostbyname_r(const char* name, hostent* ret, char* buf, size_t len,
                    hostent** result, int* h_errnop) {
  if (!gh::onGoroutine()) {
    return real().gethostbyname_r(name, ret, buf, len, result, h_errnop);
  }
  int err = 0;
  int r = gort::Syscall([&] {
    int v = real().gethostbyname_r(name, ret, buf, len, result, h_errnop);
    err = errno;
    return v;
  });
  errno = err;
  return r;
}

}  // extern "C"
