// pkg/hooks/poll.cc: poll, ppoll and select on a goroutine (Linux).
//
// One readiness check with a zero timeout first: if anything is ready (or the
// caller asked not to wait) that is the answer, as libc's. Otherwise the
// descriptors are watched through a private epoll instance, registered
// level-triggered for the events asked, and that instance, itself a pollable
// descriptor, is opened on gort's poller: the goroutine parks on its one
// pollDesc, with the call's timeout as the pollDesc's read deadline, and the
// P runs other goroutines. When the poller reports the instance readable (one
// of the descriptors is) or the deadline passes, a second zero-timeout check
// fills in the results in libc's own format. A wake-up that finds nothing
// ready (another goroutine took the data) parks again. One pollDesc, so no
// goroutine is ever parked on two of them; any descriptor epoll accepts
// works (sockets, pipes, eventfds, terminals); regular files are always
// ready. What cannot be watched that way (a ppoll with a signal mask, more
// descriptors than FD_SETSIZE for select) runs as gort::Syscall.
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "gort/runtime.h"
#include "hooks/fdtable.h"
#include "hooks/real.h"
#include "netpoll.h"
#include "os/netpoll_os.h"
#include "os/os.h"

namespace gh = gort::hooks;
using gh::real;

namespace {

constexpr int kFallback = -2;  // parkAny could not watch the descriptors

std::uint32_t epollEvents(short ev) {
  std::uint32_t e = 0;
  if (ev & POLLIN) e |= EPOLLIN;
  if (ev & POLLOUT) e |= EPOLLOUT;
  if (ev & POLLPRI) e |= EPOLLPRI;
  if (ev & POLLRDHUP) e |= EPOLLRDHUP;
  return e;
}

// watch: an epoll instance watching fds level-triggered; -1 if it cannot.
int watch(const pollfd* fds, nfds_t n) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return -1;
  for (nfds_t i = 0; i < n; i++) {
    if (fds[i].fd < 0) continue;
    epoll_event ev{};
    ev.events = epollEvents(fds[i].events);
    ev.data.fd = fds[i].fd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i].fd, &ev) == 0) continue;
    if (errno == EEXIST) {  // listed twice: watch everything (rechecked)
      ev.events = EPOLLIN | EPOLLOUT | EPOLLPRI | EPOLLRDHUP;
      if (epoll_ctl(ep, EPOLL_CTL_MOD, fds[i].fd, &ev) == 0) continue;
    }
    if (errno == EPERM) continue;  // a regular file: always ready
    real().close(ep);
    return -1;
  }
  return ep;
}

// parkAny parks until check() (a zero-timeout readiness check) finds
// something or fails, or timeoutNs (< 0: none) passes; check()'s last result,
// or kFallback if the descriptors cannot be watched.
template <class Check>
int parkAny(const pollfd* fds, nfds_t n, std::int64_t timeoutNs, Check check) {
  int saved = errno;
  int ep = watch(fds, n);
  if (ep < 0) {
    errno = saved;
    return kFallback;
  }
  int err = 0;
  gort::runtime::pollDesc* pd = gort::runtime::pollOpen(ep, &err);
  if (pd == nullptr) {
    real().close(ep);
    errno = saved;
    return kFallback;
  }
  if (timeoutNs >= 0) {
    gort::runtime::pollSetDeadline(pd, gort::os::nanotime() + timeoutNs,
                                   gort::os::kPollRead);
  }
  int r;
  for (;;) {
    int res = gort::runtime::pollWait(pd, gort::os::kPollRead);
    r = check();
    if (r != 0 || res != gort::runtime::pollNoError) break;
  }
  int cerr = errno;
  gort::runtime::pollUnblock(pd);
  gort::runtime::pollClose(pd);
  real().close(ep);
  errno = r < 0 ? cerr : saved;
  return r;
}

// anyFd: whether fds names a descriptor at all.
bool anyFd(const pollfd* fds, nfds_t n) {
  for (nfds_t i = 0; i < n; i++) {
    if (fds[i].fd >= 0) return true;
  }
  return false;
}

// pollOnG: poll on a goroutine, timeoutNs < 0 for none.
int pollOnG(pollfd* fds, nfds_t n, std::int64_t timeoutNs,
            long (*fallback)(void*), void* arg) {
  int r = real().poll(fds, n, 0);
  if (r != 0 || timeoutNs == 0) return r;
  if (!anyFd(fds, n) && timeoutNs > 0) {  // poll as a sleep
    gort::Sleep(std::chrono::nanoseconds(timeoutNs));
    return 0;
  }
  r = parkAny(fds, n, timeoutNs, [&] { return real().poll(fds, n, 0); });
  if (r != kFallback) return r;
  return static_cast<int>(gh::blockingCall(fallback, arg));
}

// selectSyscall: libc's select as gort::Syscall.
int selectSyscall(int nfds, fd_set** sets, timeval* tv) {
  struct args {
    int nfds;
    fd_set** sets;
    timeval* tv;
  } a{nfds, sets, tv};
  return static_cast<int>(gh::blockingCall(
      [](void* p) -> long {
        auto* x = static_cast<args*>(p);
        return real().select(x->nfds, x->sets[0], x->sets[1], x->sets[2],
                             x->tv);
      },
      &a));
}

std::int64_t tsNs(const timespec* ts) {
  return std::int64_t{ts->tv_sec} * 1'000'000'000 + ts->tv_nsec;
}

}  // namespace

extern "C" {

// poll: on a goroutine, parks on the poller until a descriptor is ready or
// the timeout passes.
int poll(pollfd* fds, nfds_t n, int timeout) {
  if (timeout == 0 || !gh::onGoroutine()) return real().poll(fds, n, timeout);
  struct args {
    pollfd* fds;
    nfds_t n;
    int timeout;
  } a{fds, n, timeout};
  return pollOnG(
      fds, n, timeout < 0 ? -1 : std::int64_t{timeout} * 1'000'000,
      [](void* p) -> long {
        auto* x = static_cast<args*>(p);
        return real().poll(x->fds, x->n, x->timeout);
      },
      &a);
}

// ppoll: as poll; with a signal mask it runs as gort::Syscall.
int ppoll(pollfd* fds, nfds_t n, const timespec* ts, const sigset_t* mask) {
  bool now = ts != nullptr && ts->tv_sec == 0 && ts->tv_nsec == 0;
  if (now || !gh::onGoroutine()) return real().ppoll(fds, n, ts, mask);
  struct args {
    pollfd* fds;
    nfds_t n;
    const timespec* ts;
    const sigset_t* mask;
  } a{fds, n, ts, mask};
  long (*fallback)(void*) = [](void* p) -> long {
    auto* x = static_cast<args*>(p);
    return real().ppoll(x->fds, x->n, x->ts, x->mask);
  };
  if (mask != nullptr) {
    return static_cast<int>(gh::blockingCall(fallback, &a));
  }
  return pollOnG(fds, n, ts == nullptr ? -1 : tsNs(ts), fallback, &a);
}

// select: as poll, over the descriptors of the three sets; the timeout is
// left holding the time not slept, as Linux's. nfds > FD_SETSIZE (the
// caller's sets are larger than fd_set) runs as gort::Syscall.
int select(int nfds, fd_set* rs, fd_set* ws, fd_set* xs, timeval* tv) {
  bool now = tv != nullptr && tv->tv_sec == 0 && tv->tv_usec == 0;
  if (now || nfds < 0 || !gh::onGoroutine()) {
    return real().select(nfds, rs, ws, xs, tv);
  }
  fd_set* sets[3] = {rs, ws, xs};
  // Sets larger than fd_set: libc's select, with the P handed off.
  if (nfds > FD_SETSIZE) return selectSyscall(nfds, sets, tv);
  fd_set in[3];
  for (int i = 0; i < 3; i++) {
    if (sets[i] != nullptr) in[i] = *sets[i];
  }
  auto check = [&] {
    for (int i = 0; i < 3; i++) {
      if (sets[i] != nullptr) *sets[i] = in[i];
    }
    timeval zero{0, 0};
    return real().select(nfds, rs, ws, xs, &zero);
  };
  int saved = errno;
  int r = check();
  if (r != 0) return r;
  std::int64_t ns = tv == nullptr ? -1
                                  : std::int64_t{tv->tv_sec} * 1'000'000'000 +
                                        std::int64_t{tv->tv_usec} * 1000;
  std::int64_t start = gort::os::nanotime();
  pollfd fds[FD_SETSIZE];
  nfds_t n = 0;
  for (int fd = 0; fd < nfds; fd++) {
    short ev = 0;
    if (rs != nullptr && FD_ISSET(fd, &in[0])) ev |= POLLIN;
    if (ws != nullptr && FD_ISSET(fd, &in[1])) ev |= POLLOUT;
    if (xs != nullptr && FD_ISSET(fd, &in[2])) ev |= POLLPRI;
    if (ev != 0) fds[n++] = pollfd{fd, ev, 0};
  }
  if (n == 0 && ns > 0) {  // select as a sleep
    gort::Sleep(std::chrono::nanoseconds(ns));
    r = 0;
  } else {
    r = parkAny(fds, n, ns, check);
  }
  if (r == kFallback) {
    for (int i = 0; i < 3; i++) {
      if (sets[i] != nullptr) *sets[i] = in[i];
    }
    return selectSyscall(nfds, sets, tv);
  }
  if (tv != nullptr && r >= 0) {
    std::int64_t left = ns - (gort::os::nanotime() - start);
    if (left < 0 || r == 0) left = 0;
    tv->tv_sec = static_cast<time_t>(left / 1'000'000'000);
    tv->tv_usec = static_cast<suseconds_t>(left % 1'000'000'000 / 1000);
  }
  if (r >= 0) errno = saved;
  return r;
}

// __poll_chk: _FORTIFY_SOURCE's poll.
int __poll_chk(pollfd* fds, nfds_t n, int timeout, size_t fdslen) {
  if (fdslen / sizeof(pollfd) < n) __builtin_trap();
  return poll(fds, n, timeout);
}

}  // extern "C"
