// tools/hooks_cost.cc: what a call costs when gort::hooks is linked but
// has nothing to do, against libc's own function (found as the hooks find
// it, dlsym(RTLD_NEXT)) on the same descriptor (docs/hooks.md). Prints
// nanoseconds per call, the median of --rounds rounds of --calls calls each,
// libc and hooked alternating round by round:
//   read /dev/null, plain thread     the thread-local check, then libc
//   read /dev/null, goroutine        + the table lookup of an untracked fd
//   recv EAGAIN, goroutine           a tracked socket the caller made
//                                    non-blocking: lookup, then libc
//   write+read 1 byte, goroutine     a blocking socket with data ready: the
//                                    locks and pollDesc reset, no parking
// The system call dominates those and this machine's noise hides a few
// nanoseconds, so the decision itself is timed too, without the call: the
// thread-local check (onGoroutine) every hook makes first, and the lock-free
// table lookup a goroutine's call on a descriptor adds.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gort/gort.h"
#include "hooks/fdtable.h"

namespace {

using ReadFn = ssize_t (*)(int, void*, size_t);
using WriteFn = ssize_t (*)(int, const void*, size_t);
using RecvFn = ssize_t (*)(int, void*, size_t, int);

int calls = 200'000;
int rounds = 9;

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// perCall: ns per call of body over calls calls.
template <class F>
double perCall(F body) {
  std::int64_t t0 = nowNs();
  for (int i = 0; i < calls; i++) body();
  return static_cast<double>(nowNs() - t0) / calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// alone: the median ns of body over the rounds.
template <class F>
void alone(const char* what, F body) {
  std::vector<double> a;
  for (int r = 0; r < rounds; r++) a.push_back(perCall(body));
  std::printf("%-34s %7.2f ns\n", what, median(a));
}

// compare: medians of libc's and the hook's per-call cost, interleaved.
template <class L, class H>
void compare(const char* what, L libc, H hooked) {
  std::vector<double> a, b;
  for (int r = 0; r < rounds; r++) {
    a.push_back(perCall(libc));
    b.push_back(perCall(hooked));
  }
  double ma = median(a), mb = median(b);
  std::printf("%-34s libc %7.1f ns  hooked %7.1f ns  (+%.1f ns)\n", what, ma,
              mb, mb - ma);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    if (std::strncmp(argv[i], "--calls=", 8) == 0)
      calls = std::atoi(argv[i] + 8);
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) {
      rounds = std::atoi(argv[i] + 9);
    }
  }
  auto libcRead = reinterpret_cast<ReadFn>(dlsym(RTLD_NEXT, "read"));
  auto libcWrite = reinterpret_cast<WriteFn>(dlsym(RTLD_NEXT, "write"));
  auto libcRecv = reinterpret_cast<RecvFn>(dlsym(RTLD_NEXT, "recv"));
  if (libcRead == nullptr || libcRecv == nullptr || libcWrite == nullptr ||
      libcRead == &read) {
    std::fprintf(stderr, "hooks_cost: libc's read not found past the hooks\n");
    return 1;
  }
  int null = open("/dev/null", O_RDONLY);
  char buf[1];
  volatile bool sink = false;
  alone("the check alone, plain thread",
        [&] { sink = gort::hooks::onGoroutine(); });
  compare(
      "read /dev/null, plain thread", [&] { libcRead(null, buf, 0); },
      [&] { read(null, buf, 0); });
  gort::Options opts;
  opts.maxprocs = 1;
  gort::Run(
      [&] {
        alone("the check alone, goroutine",
              [&] { sink = gort::hooks::onGoroutine(); });
        alone("check + table lookup, goroutine", [&] {
          sink = gort::hooks::onGoroutine() &&
                 gort::hooks::lookup(null) == nullptr;
        });
        compare(
            "read /dev/null, goroutine", [&] { libcRead(null, buf, 0); },
            [&] { read(null, buf, 0); });
        int nb[2];
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, nb);
        compare(
            "recv EAGAIN, goroutine", [&] { libcRecv(nb[0], buf, 1, 0); },
            [&] { recv(nb[0], buf, 1, 0); });
        int bl[2];
        socketpair(AF_UNIX, SOCK_STREAM, 0, bl);
        read(bl[0], buf, 0);  // hidden O_NONBLOCK and a pollDesc from now on
        compare(
            "write+read 1 byte, goroutine",
            [&] {
              libcWrite(bl[1], "x", 1);
              libcRead(bl[0], buf, 1);
            },
            [&] {
              write(bl[1], "x", 1);
              read(bl[0], buf, 1);
            });
        for (int fd : {nb[0], nb[1], bl[0], bl[1]}) close(fd);
      },
      opts);
  close(null);
  return sink ? 0 : 0;
}
