// runtime/os/netpoll_epoll.cc: the Linux poller (Go's netpoll_epoll.go).
//
// One epoll instance per Run, an eventfd in it for netpollBreak, and every
// descriptor registered once, edge-triggered for read and write, with the
// key the portable poller chose in the event's 64-bit data (so the layout
// is the same on every architecture, packed epoll_event or not).
//
// Go's netpoll (netpoll_epoll.go:106) waits in whole milliseconds: a wait
// under 1 ms becomes 1 ms, a longer one is cut down. gort's high-resolution
// mode must not, so a timed wait uses epoll_pwait2 (nanoseconds, Linux 5.11)
// and, where the kernel lacks it (ENOSYS at init), a timerfd in the set armed
// for each timed wait. Low-resolution mode rounds as Go does
// (netpollWaitMs).
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "os/netpoll_os.h"
#include "os/os.h"

namespace gort::os {

namespace {

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441  // the same number on every Linux architecture
#endif

// epoll_pwait2 takes the kernel's 64-bit timespec on every architecture,
// also where the C library's timespec has a 32-bit tv_sec (i386, armhf).
struct kernelTimespec {
  std::int64_t tv_sec;
  std::int64_t tv_nsec;
};

constexpr std::uint64_t kBreakKey = ~std::uint64_t{0};
constexpr std::uint64_t kTimerKey = ~std::uint64_t{0} - 1;

int epfd = -1;
int breakfd = -1;
int timerfd = -1;
bool havePwait2 = false;
std::atomic<std::uint32_t> netpollWakeSig{0};  // a break is pending

// probePwait2 reports whether epoll_pwait2 exists ($GORT_NETPOLL_TIMERFD=1
// pretends it does not, to test the timerfd path).
bool probePwait2() {
  const char* force = getenv("GORT_NETPOLL_TIMERFD");
  if (force != nullptr && std::strcmp(force, "1") == 0) return false;
  epoll_event ev;
  kernelTimespec ts{0, 0};
  long r = syscall(SYS_epoll_pwait2, epfd, &ev, 1, &ts, nullptr, 0);
  return !(r < 0 && errno == ENOSYS);
}

int epollWait(epoll_event* evs, int max, std::int64_t delay, bool highRes) {
  if (!highRes || delay <= 0) {
    return epoll_wait(epfd, evs, max, netpollWaitMs(delay));
  }
  if (havePwait2) {
    kernelTimespec ts{delay / 1'000'000'000, delay % 1'000'000'000};
    return static_cast<int>(
        syscall(SYS_epoll_pwait2, epfd, evs, max, &ts, nullptr, 0));
  }
  itimerspec its{};
  its.it_value.tv_sec = static_cast<time_t>(delay / 1'000'000'000);
  its.it_value.tv_nsec = static_cast<long>(delay % 1'000'000'000);
  timerfd_settime(timerfd, 0, &its, nullptr);
  return epoll_wait(epfd, evs, max, -1);
}

}  // namespace

int netpollWaitMs(std::int64_t delay) {
  if (delay < 0) return -1;
  if (delay == 0) return 0;
  if (delay < 1'000'000) return 1;
  if (delay < 1'000'000'000'000'000) {
    return static_cast<int>(delay / 1'000'000);
  }
  return 1'000'000'000;  // a cap of about 11.5 days, as Go's netpoll
                         // (netpoll_epoll.go:106)
}

bool netpollSupported() { return true; }

int netpollinit() {
  epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) return errno;
  breakfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (breakfd < 0) {
    int e = errno;
    close(epfd);
    epfd = -1;
    return e;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kBreakKey;
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, breakfd, &ev) != 0) {
    int e = errno;
    close(breakfd);
    close(epfd);
    breakfd = epfd = -1;
    return e;
  }
  havePwait2 = probePwait2();
  if (!havePwait2) {
    timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (timerfd >= 0) {
      ev.events = EPOLLIN;
      ev.data.u64 = kTimerKey;
      if (epoll_ctl(epfd, EPOLL_CTL_ADD, timerfd, &ev) != 0) {
        close(timerfd);
        timerfd = -1;
      }
    }
  }
  netpollWakeSig.store(0);
  return 0;
}

void netpollfini() {
  if (timerfd >= 0) close(timerfd);
  if (breakfd >= 0) close(breakfd);
  if (epfd >= 0) close(epfd);
  timerfd = breakfd = epfd = -1;
}

bool netpollIsPollDescriptor(std::uintptr_t fd) {
  int i = static_cast<int>(fd);
  return i >= 0 && (i == epfd || i == breakfd || i == timerfd);
}

int netpollopen(std::uintptr_t fd, std::uint64_t key) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  ev.data.u64 = key;
  return epoll_ctl(epfd, EPOLL_CTL_ADD, static_cast<int>(fd), &ev) == 0 ? 0
                                                                        : errno;
}

int netpollclose(std::uintptr_t fd) {
  epoll_event ev{};
  return epoll_ctl(epfd, EPOLL_CTL_DEL, static_cast<int>(fd), &ev) == 0 ? 0
                                                                        : errno;
}

int netpollBreak() {
  std::uint32_t zero = 0;
  if (!netpollWakeSig.compare_exchange_strong(zero, 1)) return 0;
  std::uint64_t one = 1;
  for (;;) {
    ssize_t n = write(breakfd, &one, sizeof one);
    if (n == sizeof one || (n < 0 && errno == EAGAIN)) return 0;
    if (n < 0 && errno == EINTR) continue;
    return n < 0 ? errno : EIO;
  }
}

std::int32_t netpoll(std::int64_t delay, bool highRes, PollEvent* out,
                     std::int32_t max) {
  if (epfd < 0) return 0;
  constexpr int kBatch = 128;
  epoll_event evs[kBatch];
  if (max > kBatch) max = kBatch;
  int n;
  for (;;) {
    n = epollWait(evs, max, delay, highRes);
    if (n >= 0) break;
    if (errno != EINTR) return -errno;
    if (delay > 0) return 0;  // let the caller recompute its delay (Go)
  }
  std::int32_t k = 0;
  for (int i = 0; i < n; i++) {
    const epoll_event& ev = evs[i];
    if (ev.events == 0) continue;
    if (ev.data.u64 == kBreakKey) {
      if (delay != 0) {  // only a blocking poll consumes the break
        std::uint64_t v;
        ssize_t r = read(breakfd, &v, sizeof v);
        (void)r;
        netpollWakeSig.store(0);
      }
      continue;
    }
    if (ev.data.u64 == kTimerKey) {
      if (delay != 0) {
        std::uint64_t v;
        ssize_t r = read(timerfd, &v, sizeof v);
        (void)r;
      }
      continue;
    }
    std::int32_t mode = 0;
    if (ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
      mode |= kPollRead;
    }
    if (ev.events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) mode |= kPollWrite;
    if (mode == 0) continue;
    out[k].key = ev.data.u64;
    out[k].mode = mode;
    // Only an error and nothing else marks the descriptor (Go's
    // setEventErr(ev.events == EPOLLERR)); a reset peer also reports
    // EPOLLIN | EPOLLHUP, and its data must still be read.
    out[k].err = ev.events == EPOLLERR;
    out[k].unclean = (ev.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
    k++;
  }
  return k;
}

const char* netpollHighResMethod() {
  if (epfd < 0) return "none";
  if (havePwait2) return "epoll_pwait2";
  return timerfd >= 0 ? "timerfd" : "none";
}

}  // namespace gort::os
