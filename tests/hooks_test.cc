// tests/hooks_test.cc: gort::hooks, libc's blocking calls on goroutines
// (docs/hooks.md). Each hooked call is checked on a goroutine (it parks, or
// sleeps, or hands the P off, while another goroutine runs at GOMAXPROCS 1)
// and off one (libc's behaviour). Without a hook the goroutine would hold
// the only P: the test then fails, or hangs until the short watchdog ends
// it (scripts/mutants.tsv removes each hook in turn).
#include "hooks_test.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "netpoll.h"
#include "proc.h"
#include "runnext.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using namespace gort_hooks_test;

// One byte as each call of a family takes it: the byte, an iovec over it,
// and a msghdr over the iovec (read/recv/recvfrom, readv, recvmsg).
struct OneByte {
  char c;
  iovec v{&c, 1};
  msghdr m{};
  explicit OneByte(char byte) : c(byte) {
    m.msg_iov = &v;
    m.msg_iovlen = 1;
  }
  OneByte(const OneByte&) = delete;
  OneByte& operator=(const OneByte&) = delete;
};

TEST(HooksTest, OffGoroutineCallsAreLibcs) {
  Pair p;
  ASSERT_EQ(write(p.b, "x", 1), 1);
  char c = 0;
  EXPECT_EQ(read(p.a, &c, 1), 1);
  EXPECT_EQ(c, 'x');
  EXPECT_EQ(fcntl(p.a, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_EQ(realFlags(p.a) & O_NONBLOCK, 0);  // nothing hidden off a goroutine
  timespec ts{0, 1'000'000};
  EXPECT_EQ(nanosleep(&ts, nullptr), 0);
}

TEST(HooksTest, BlockingReadParksAndOthersRun) {
  Pair p;
  Run1([&] {
    Witness w;
    w.start([&] { EXPECT_EQ(write(p.b, "hi", 2), 2); });
    char buf[2] = {};
    EXPECT_EQ(read(p.a, buf, 2), 2);  // parks: the writer runs meanwhile
    EXPECT_TRUE(w.ran);
    EXPECT_EQ(std::string(buf, 2), "hi");
  });
}

// SmallPair: a Pair whose end a has a 4 KiB send buffer, quickly filled.
struct SmallPair : Pair {
  SmallPair() {
    int size = 4096;
    if (setsockopt(a, SOL_SOCKET, SO_SNDBUF, &size, sizeof size) != 0) {
      std::abort();
    }
  }
};

// EachCallParks: for each of a family's five calls, call(which, b) on a
// blocking socket that prepare(which) left unready parks until a witness
// goroutine has run unblock(), then moves b's one byte, 'k'.
template <class Prepare, class Unblock, class Call>
void EachCallParks(char byte, Prepare prepare, Unblock unblock, Call call) {
  for (int which = 0; which < 5; which++) {
    prepare(which);
    Witness w;
    w.start(unblock);
    OneByte b(byte);
    EXPECT_EQ(call(which, b), 1) << which;
    EXPECT_EQ(b.c, 'k') << which;
    EXPECT_TRUE(w.ran) << which;
  }
}

TEST(HooksTest, EveryReadCallParks) {
  Pair p;
  Run1([&] {
    EachCallParks(
        0, [](int) {}, [&] { EXPECT_EQ(send(p.b, "k", 1, 0), 1); },
        [&](int which, OneByte& b) {
          return which == 0   ? read(p.a, &b.c, 1)
                 : which == 1 ? recv(p.a, &b.c, 1, 0)
                 : which == 2 ? recvfrom(p.a, &b.c, 1, 0, nullptr, nullptr)
                 : which == 3 ? recvmsg(p.a, &b.m, 0)
                              : readv(p.a, &b.v, 1);
        });
  });
}

// Each write-family call on a full blocking socket parks until a reader
// drains it (the witness); unhooked, it would return EAGAIN from the
// non-blocking socket underneath.
TEST(HooksTest, EveryWriteCallParks) {
  SmallPair p;
  auto fill = [&](int which) {
    std::string fill(4096, 'f');
    while (send(p.a, fill.data(), fill.size(), MSG_DONTWAIT) > 0) {
    }
    ASSERT_EQ(errno, EAGAIN) << which;  // full: a blocking write waits
  };
  auto drain = [&] {
    char buf[1 << 16];
    while (recv(p.b, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
  };
  Run1([&] {
    EachCallParks('k', fill, drain, [&](int which, OneByte& b) {
      return which == 0   ? write(p.a, &b.c, 1)
             : which == 1 ? send(p.a, &b.c, 1, 0)
             : which == 2 ? sendto(p.a, &b.c, 1, 0, nullptr, 0)
             : which == 3 ? sendmsg(p.a, &b.m, 0)
                          : writev(p.a, &b.v, 1);
    });
  });
}

TEST(HooksTest, BlockingWriteParksUntilTheReaderDrains) {
  SmallPair p;
  Run1([&] {
    std::string big(1 << 20, 'z');
    std::atomic<std::size_t> got{0};
    gort::Go([&] {
      char buf[65536];
      while (got < big.size()) {
        ssize_t r = read(p.b, buf, sizeof buf);
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
      }
    });
    // All of it, in one call, as a blocking socket's write.
    EXPECT_EQ(write(p.a, big.data(), big.size()),
              static_cast<ssize_t>(big.size()));
    while (got < big.size()) gort::Gosched();
  });
}

TEST(HooksTest, NonBlockingSocketGivesEAGAIN) {
  Pair p(SOCK_NONBLOCK);
  Run1([&] {
    char c;
    errno = 0;
    EXPECT_EQ(read(p.a, &c, 1), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(recv(p.a, &c, 1, 0), -1);
    EXPECT_EQ(errno, EAGAIN);
  });
}

TEST(HooksTest, DontWaitNeverParks) {
  Pair p;
  Run1([&] {
    char c;
    EXPECT_EQ(recv(p.a, &c, 1, MSG_DONTWAIT), -1);
    EXPECT_EQ(errno, EAGAIN);
  });
}

TEST(HooksTest, FcntlStillShowsBlocking) {
  Pair p;
  Run1([&] {
    Witness w;
    w.start([&] { EXPECT_EQ(write(p.b, "x", 1), 1); });
    char c;
    EXPECT_EQ(read(p.a, &c, 1), 1);
    EXPECT_TRUE(realFlags(p.a) & O_NONBLOCK);        // hidden underneath
    EXPECT_EQ(fcntl(p.a, F_GETFL) & O_NONBLOCK, 0);  // the caller's view
    // The caller turning O_NONBLOCK on gets libc's EAGAIN from then on.
    int fl = fcntl(p.a, F_GETFL);
    ASSERT_EQ(fcntl(p.a, F_SETFL, fl | O_NONBLOCK), 0);
    EXPECT_TRUE(fcntl(p.a, F_GETFL) & O_NONBLOCK);
    EXPECT_EQ(read(p.a, &c, 1), -1);
    EXPECT_EQ(errno, EAGAIN);
    ASSERT_EQ(fcntl(p.a, F_SETFL, fl), 0);  // and back to blocking
    EXPECT_EQ(fcntl(p.a, F_GETFL) & O_NONBLOCK, 0);
    EXPECT_TRUE(realFlags(p.a) & O_NONBLOCK);
  });
  // Off a goroutine the socket still blocks as the caller expects.
  std::thread t([&] {
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(write(p.b, "y", 1), 1);
  });
  char c = 0;
  EXPECT_EQ(read(p.a, &c, 1), 1);
  EXPECT_EQ(c, 'y');
  t.join();
}

TEST(HooksTest, RcvTimeoExpiresWithEAGAIN) {
  Pair p;
  timeval tv{0, 50'000};
  ASSERT_EQ(setsockopt(p.a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
  Run1([&] {
    Witness w;
    w.start([] {});
    auto t0 = std::chrono::steady_clock::now();
    char c;
    errno = 0;
    EXPECT_EQ(read(p.a, &c, 1), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 50ms);
    EXPECT_TRUE(w.ran);
    // Each call gets its own timeout; data before it is read at once.
    ASSERT_EQ(write(p.b, "z", 1), 1);
    EXPECT_EQ(read(p.a, &c, 1), 1);
  });
}

TEST(HooksTest, SndTimeoExpiresWithEAGAIN) {
  Pair p;
  timeval tv{0, 30'000};
  ASSERT_EQ(setsockopt(p.a, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
  Run1([&] {
    std::string big(1 << 22, 'q');  // more than the socket buffers hold
    ssize_t r = write(p.a, big.data(), big.size());
    EXPECT_GT(r, 0);  // short: what went out before the timeout
    EXPECT_LT(r, static_cast<ssize_t>(big.size()));
    errno = 0;
    EXPECT_EQ(write(p.a, big.data(), big.size()), -1);
    EXPECT_EQ(errno, EAGAIN);
  });
}

TEST(HooksTest, CloseWakesAParkedReaderWithEBADF) {
  Pair p;
  Run1([&] {
    std::atomic<bool> reading{false};
    auto done = gort::MakeChan<int>(1);
    gort::Go([&] {
      char c;
      reading = true;
      ssize_t r = read(p.a, &c, 1);
      done.Send(r < 0 ? errno : 0);
    });
    while (!reading) gort::Gosched();
    EXPECT_EQ(close(p.a), 0);
    EXPECT_EQ(done.Recv(), EBADF);
    p.a = -1;
  });
}

TEST(HooksTest, Dup2OntoAParkedSocketWakesIt) {
  Pair p, q;
  Run1([&] {
    std::atomic<bool> reading{false};
    auto done = gort::MakeChan<int>(1);
    gort::Go([&] {
      char c;
      reading = true;
      ssize_t r = read(p.a, &c, 1);
      done.Send(r < 0 ? errno : 0);
    });
    while (!reading) gort::Gosched();
    EXPECT_EQ(dup2(q.a, p.a), p.a);
    EXPECT_EQ(done.Recv(), EBADF);
    // p.a is now q.a's socket, tracked: a read there parks too.
    Witness w;
    w.start([&] { EXPECT_EQ(write(q.b, "d", 1), 1); });
    char c = 0;
    EXPECT_EQ(read(p.a, &c, 1), 1);
    EXPECT_EQ(c, 'd');
    EXPECT_TRUE(w.ran);
  });
}

TEST(HooksTest, DupAndFcntlDupfdAreTracked) {
  Pair p;
  Run1([&] {
    int d1 = dup(p.a);
    int d2 = fcntl(p.a, F_DUPFD_CLOEXEC, 100);
    ASSERT_GE(d1, 0);
    ASSERT_GE(d2, 100);
    for (int d : {d1, d2}) {
      Witness w;
      w.start([&] { EXPECT_EQ(write(p.b, "u", 1), 1); });
      char c = 0;
      EXPECT_EQ(read(d, &c, 1), 1);
      EXPECT_TRUE(w.ran);
      EXPECT_EQ(fcntl(d, F_GETFL) & O_NONBLOCK, 0);
      EXPECT_EQ(close(d), 0);
    }
  });
}

TEST(HooksTest, ErrnoIsPreservedAcrossAParkedCall) {
  Pair p;
  Run1([&] {
    gort::Go([&] { EXPECT_EQ(write(p.b, "e", 1), 1); });
    errno = EDOM;
    char c;
    EXPECT_EQ(read(p.a, &c, 1), 1);
    EXPECT_EQ(errno, EDOM);  // libc leaves errno alone on success
  });
}

TEST(HooksTest, AcceptParksAndConnectCompletes) {
  Loopback l;
  Run1([&] {
    Witness w;
    w.start([&] {
      int c = socket(AF_INET, SOCK_STREAM, 0);
      EXPECT_EQ(connect(c, l.sa(), sizeof l.addr), 0);
      EXPECT_EQ(write(c, "a", 1), 1);
      close(c);
    });
    int s = accept(l.fd, nullptr, nullptr);  // parks: the client runs
    ASSERT_GE(s, 0);
    EXPECT_TRUE(w.ran);
    char c = 0;
    EXPECT_EQ(read(s, &c, 1), 1);
    EXPECT_EQ(c, 'a');
    EXPECT_EQ(fcntl(s, F_GETFL) & O_NONBLOCK, 0);
    close(s);
    // accept4's SOCK_NONBLOCK is the caller's: EAGAIN, no parking.
    int c2 = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(c2, l.sa(), sizeof l.addr), 0);
    int s2 = accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK);
    ASSERT_GE(s2, 0);
    EXPECT_EQ(read(s2, &c, 1), -1);
    EXPECT_EQ(errno, EAGAIN);
    close(s2);
    close(c2);
  });
}

TEST(HooksTest, ConnectRefusedKeepsItsErrno) {
  int port;
  {
    Loopback l;
    port = ntohs(l.addr.sin_port);
  }  // closed: nothing listens there now
  Run1([&] {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a), -1);
    EXPECT_EQ(errno, ECONNREFUSED);
    close(c);
  });
}

TEST(HooksTest, PollParksOnSockets) {
  Pair p, q;
  Run1([&] {
    Witness w;
    w.start([&] { EXPECT_EQ(write(q.b, "p", 1), 1); });
    pollfd fds[2] = {{p.a, POLLIN, 0}, {q.a, POLLIN, 0}};
    EXPECT_EQ(poll(fds, 2, -1), 1);
    EXPECT_TRUE(w.ran);
    EXPECT_EQ(fds[0].revents, 0);
    EXPECT_EQ(fds[1].revents, POLLIN);
    // A timeout with nothing ready: 0, after it, and others ran.
    Witness w2;
    w2.start([] {});
    char c;
    ASSERT_EQ(read(q.a, &c, 1), 1);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(poll(fds, 2, 30), 0);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 30ms);
    EXPECT_TRUE(w2.ran);
  });
}

TEST(HooksTest, PpollParksOnSockets) {
  Pair p;
  Run1([&] {
    Witness w;
    w.start([&] { EXPECT_EQ(write(p.b, "p", 1), 1); });
    pollfd fd{p.a, POLLIN, 0};
    timespec ts{3, 0};  // held by a broken hook: 0, before the watchdog
    EXPECT_EQ(ppoll(&fd, 1, &ts, nullptr), 1);
    EXPECT_TRUE(w.ran);
    EXPECT_EQ(fd.revents, POLLIN);
  });
}

TEST(HooksTest, SelectParksOnSockets) {
  Pair p, q;
  Run1([&] {
    Witness w;
    w.start([&] { EXPECT_EQ(write(q.b, "s", 1), 1); });
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(p.a, &rs);
    FD_SET(q.a, &rs);
    timeval tv{3, 0};
    EXPECT_EQ(select(std::max(p.a, q.a) + 1, &rs, nullptr, nullptr, &tv), 1);
    EXPECT_TRUE(w.ran);
    EXPECT_FALSE(FD_ISSET(p.a, &rs));
    EXPECT_TRUE(FD_ISSET(q.a, &rs));
    EXPECT_GT(tv.tv_sec * 1'000'000 + tv.tv_usec, 0);  // time left
    // select as a sleep (no descriptors) does not hold the P either.
    Witness w2;
    w2.start([] {});
    timeval nap{0, 20'000};
    EXPECT_EQ(select(0, nullptr, nullptr, nullptr, &nap), 0);
    EXPECT_TRUE(w2.ran);
  });
}

TEST(HooksTest, PollOverAPipeParksToo) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  Run1([&] {
    Witness w;
    w.start([&] { EXPECT_EQ(write(fds[1], "x", 1), 1); });
    pollfd pf{fds[0], POLLIN, 0};
    EXPECT_EQ(poll(&pf, 1, 3000), 1);
    EXPECT_TRUE(w.ran);
  });
  close(fds[0]);
  close(fds[1]);
}

// sleeps: each sleep kind in turn (sleep itself for a second: it takes no
// less); while it sleeps another goroutine runs.
TEST(HooksTest, SleepsDoNotHoldTheP) {
  Run1([&] {
    for (int kind = 0; kind < 5; kind++) {
      Witness w;
      w.start([] {});
      timespec ts{0, 20'000'000};
      auto t0 = std::chrono::steady_clock::now();
      if (kind == 0) {
        EXPECT_EQ(nanosleep(&ts, nullptr), 0);
      }
      if (kind == 1) {
        EXPECT_EQ(usleep(20'000), 0);
      }
      if (kind == 2) {
        EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr), 0);
      }
      if (kind == 3) {
        timespec abs;
        clock_gettime(CLOCK_MONOTONIC, &abs);
        abs.tv_nsec += 20'000'000;
        if (abs.tv_nsec >= 1'000'000'000)
          abs.tv_sec++, abs.tv_nsec -= 1'000'000'000;
        EXPECT_EQ(
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, nullptr), 0);
      }
      if (kind == 4) {
        EXPECT_EQ(sleep(1), 0u);  // whole seconds only
      }
      EXPECT_GE(std::chrono::steady_clock::now() - t0, 20ms) << kind;
      EXPECT_TRUE(w.ran) << kind;
    }
    Witness w;
    w.start([] {});
    EXPECT_EQ(sleep(0), 0u);
    timespec bad{0, 2'000'000'000};
    EXPECT_EQ(nanosleep(&bad, nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
  });
}

// syscallTicks: the syscalls this goroutine's P has seen return (Go's
// p.syscalltick).
std::uint64_t syscallTicks() {
  return gort::runtime::getg()->m->p->syscalltick.load();
}

// ticks: how many syscalls fn took through entersyscall / exitsyscall on
// this goroutine's P (nothing else runs at GOMAXPROCS 1; sysmon's retake
// also counts, but only while such a syscall is in progress).
template <class F>
std::uint64_t ticks(F fn) {
  std::uint64_t before = syscallTicks();
  fn();
  return syscallTicks() - before;
}

TEST(HooksTest, RegularFileReadsRunAsSyscalls) {
  auto path = std::filesystem::temp_directory_path() /
              ("gort-hooks-" + std::to_string(getpid()));
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  Run1([&] {
    EXPECT_GE(ticks([&] { EXPECT_EQ(write(fd, "file", 4), 4); }), 1u);
    EXPECT_EQ(lseek(fd, 0, SEEK_SET), 0);
    char buf[4];
    EXPECT_GE(ticks([&] { EXPECT_EQ(read(fd, buf, 4), 4); }), 1u);
    EXPECT_EQ(std::string(buf, 4), "file");
  });
  close(fd);
  std::filesystem::remove(path);
}

TEST(HooksTest, GetaddrinfoRunsAsASyscall) {
  Run1([&] {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    addrinfo* res = nullptr;
    EXPECT_GE(ticks([&] {
                ASSERT_EQ(getaddrinfo("127.0.0.1", "80", &hints, &res), 0);
              }),
              1u);
    ASSERT_NE(res, nullptr);
    EXPECT_EQ(res->ai_family, AF_INET);
    freeaddrinfo(res);
    hostent he, *out = nullptr;
    char buf[1024];
    int herr = 0;
    EXPECT_GE(ticks([&] {
                EXPECT_EQ(gethostbyname_r("127.0.0.1", &he, buf, sizeof buf,
                                          &out, &herr),
                          0);
              }),
              1u);
    EXPECT_NE(out, nullptr);
  });
}

TEST(HooksTest, HundredThousandSocketsLeakNothing) {
  int n = gort_test::Scaled(50'000);  // pairs: 100 000 sockets
  int fds0 = fdCount();
  int pds0 = 0, pds1 = 0;
  Run1(
      [&] {
        for (int i = 0; i < n; i++) {
          if (i == 1000) pds0 = gort::runtime::pollcacheSize();
          int sv[2];
          ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
          auto done = gort::MakeChan<ssize_t>(1);
          gort::Go([&] {
            char c = 0;
            done.Send(read(sv[0], &c, 1));  // parks: sv[0] gets a pollDesc
          });
          gort_test::LetRunnextRun();  // the reader runs and parks
          ASSERT_EQ(write(sv[1], "1", 1), 1);
          ASSERT_EQ(done.Recv(), 1);
          ASSERT_EQ(close(sv[0]), 0);
          ASSERT_EQ(close(sv[1]), 0);
        }
        pds1 = gort::runtime::pollcacheSize();
      },
      60s);
  EXPECT_EQ(fdCount(), fds0);
  EXPECT_EQ(pds1, pds0);  // the cache reuses them: no growth per socket
}

}  // namespace
