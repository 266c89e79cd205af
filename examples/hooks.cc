// examples/hooks.cc: plain libc calls inside goroutines with gort::hooks
// linked (docs/hooks.md). At GOMAXPROCS 1, one goroutine sleeps in usleep(3)
// and another blocks in read(2) on a socket while a third writes to it: with
// the hooks each call parks its goroutine, so all three finish. Prints what
// it saw; exits 1 if a call held the only P.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "gort/gort.h"

int main() {
  gort::Options opts;
  opts.maxprocs = 1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
  std::atomic<bool> ranDuringSleep{false};
  char got = 0;
  gort::Run(
      [&] {
        gort::WaitGroup wg;
        wg.Go([&] { read(sv[0], &got, 1); });  // parks until the write
        wg.Go([&] {
          usleep(50'000);  // parks for 50 ms
        });
        wg.Go([&] {
          ranDuringSleep = true;
          write(sv[1], "!", 1);
        });
        wg.Wait();
      },
      opts);
  std::printf("read got '%c'; another goroutine ran during usleep: %s\n", got,
              ranDuringSleep ? "yes" : "no");
  close(sv[0]);
  close(sv[1]);
  return got == '!' && ranDuringSleep ? 0 : 1;
}
