// tests/hooks_test.h: what the gort::hooks tests share (hooks_test.cc,
// hooks_edge_test.cc): a short-watchdog Run at GOMAXPROCS 1, a socket pair,
// a loopback listener, a witness that another goroutine got the P, and
// descriptor counting.
#ifndef GORT_TESTS_HOOKS_TEST_H_
#define GORT_TESTS_HOOKS_TEST_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "gort/gort.h"
#include "watchdog.h"

namespace gort_hooks_test {

// A hung hook shows in seconds, not at the suite's 30 s limit.
constexpr std::chrono::seconds kHookLimit{5};

// Run1: main as a Run at GOMAXPROCS 1 under a short watchdog.
template <class F>
void Run1(F&& main, std::chrono::seconds limit = kHookLimit) {
  gort_test::Watchdog w("gort::Run in " + gort_test::CurrentTestName(), limit);
  gort::Run(std::forward<F>(main), gort_test::Procs(1));
}

// Pair: a connected AF_UNIX stream pair, both ends blocking.
struct Pair {
  int a = -1, b = -1;
  explicit Pair(int flags = 0) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | flags, 0, sv) != 0) std::abort();
    a = sv[0];
    b = sv[1];
  }
  ~Pair() {
    if (a >= 0) close(a);
    if (b >= 0) close(b);
  }
};

// Loopback: a blocking TCP listener on 127.0.0.1 with the given backlog, port
// chosen by the kernel.
struct Loopback {
  int fd = -1;
  sockaddr_in addr{};
  explicit Loopback(int backlog = 128) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(fd, sa(), len) != 0 || listen(fd, backlog) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::abort();
    }
  }
  ~Loopback() { close(fd); }
  Loopback(const Loopback&) = delete;
  Loopback& operator=(const Loopback&) = delete;
  const sockaddr* sa() const {
    return reinterpret_cast<const sockaddr*>(&addr);
  }
};

// realFlags: O_NONBLOCK etc. as the kernel has them (a raw syscall, which
// the hooks do not see).
inline long realFlags(int fd) { return syscall(SYS_fcntl, fd, F_GETFL); }

// Witness: while blocked() runs on one goroutine, another goroutine gets
// the only P: blocked() sees ran == true when it returns.
struct Witness {
  std::atomic<bool> ran{false};
  // start: a goroutine that records it ran, then runs then().
  template <class F>
  void start(F then) {
    gort::Go([this, then] {
      ran = true;
      then();
    });
  }
};

// fdCount: open descriptors of this process.
inline int fdCount() {
  int n = 0;
  for ([[maybe_unused]] auto& e :
       std::filesystem::directory_iterator("/proc/self/fd")) {
    n++;
  }
  return n;
}

}  // namespace gort_hooks_test

#endif  // GORT_TESTS_HOOKS_TEST_H_
