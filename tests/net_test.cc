// Tests of gort::net and gort::poll::FD, in the spirit of Go's
// net/conn_test.go, net/timeout_test.go and net/net_test.go: echo over TCP
// and unix sockets, a long stream, EOF after CloseWrite, many connections
// on few threads, deadlines (lower bounds only), Close waking blocked calls,
// refused dials, bad input, pipes and eventfds through poll::FD, timers
// while an M waits in the poller, no false deadlock report, no descriptor
// left open after a Run.
//
// "Blocked" is made certain without sleeping: at GOMAXPROCS 1 a goroutine
// that yields with Gosched lets every runnable goroutine run until it
// parks, so after a few Goscheds the reader is parked in the poller.
#include "test_os.h"  // first: Winsock before anything includes windows.h

#if !defined(_WIN32)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "net/hook.h"
#include "net_test.h"
#include "watchdog.h"

namespace {

using namespace gort_net_test;

class NetTest : public gort_test::WatchedTest {};

class NetProcsTest : public gort_test::ProcsTest {};

INSTANTIATE_TEST_SUITE_P(Procs, NetProcsTest, testing::Values(1, 2, 4),
                         gort_test::ProcsName);

// Reads exactly n bytes unless EOF comes first; returns the count.
std::size_t ReadFull(Conn& c, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  std::size_t got = 0;
  while (got < n) {
    std::size_t k = c.Read(p + got, n - got);
    if (k == 0) break;
    got += k;
  }
  return got;
}

// Serves one echo connection until EOF.
void Echo(Conn c) {
  char buf[4096];
  for (;;) {
    std::size_t n = c.Read(buf, sizeof buf);
    if (n == 0) return;
    c.Write(buf, n);
  }
}

void EchoRoundTrip(const char* network, const std::string& addr) {
  Listener ln = gort::net::Listen(network, addr);
  std::string where = ln.Addr();
  gort::Chan<int> done = gort::MakeChan<int>(1);
  gort::Go([&ln, done]() mutable {
    Echo(ln.Accept());
    done.Send(1);
  });
  Conn c = gort::net::Dial(network, where);
  for (int i = 0; i < 100; i++) {
    std::string msg = "hello " + std::to_string(i);
    c.Write(msg.data(), msg.size());
    std::string back(msg.size(), '\0');
    ASSERT_EQ(ReadFull(c, back.data(), back.size()), msg.size());
    EXPECT_EQ(back, msg);
  }
  c.Close();
  done.Recv();
}

TEST_P(NetProcsTest, EchoTCP) {
  gort::Run([] { EchoRoundTrip("tcp", "127.0.0.1:0"); }, Opts());
}

TEST_F(NetTest, EchoTCP6) {
  std::string noIPv6;
  gort::Run([&noIPv6] {
    Listener ln;
    try {
      ln = gort::net::Listen("tcp6", "[::1]:0");
    } catch (const Error& e) {
      noIPv6 = e.what();  // no IPv6 loopback on this machine
      return;
    }
    EXPECT_EQ(ln.Addr().rfind("[::1]:", 0), 0u) << ln.Addr();
    ln.Close();
    EchoRoundTrip("tcp6", "[::1]:0");
  });
  if (!noIPv6.empty()) GTEST_SKIP() << noIPv6;
}

TEST_P(NetProcsTest, EchoUnix) {
#if defined(_WIN32)
  GTEST_SKIP() << "no unix-domain sockets in gort on Windows yet";
#else
  std::string path = "/tmp/gort_net_test_" + std::to_string(getpid()) + "_" +
                     std::to_string(GetParam()) + ".sock";
  unlink(path.c_str());
  gort::Run([&] { EchoRoundTrip("unix", path); }, Opts());
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "Close left the socket file";
#endif
}

// Go's dialSerial (net/dial.go:562): a name with several addresses of one
// family is tried address by address. The lookup is the test's (Go's
// testHookLookupIP): 127.0.0.2 refuses (the listener is on 127.0.0.1 only),
// 127.0.0.1 connects; with nothing listening, the error is the first
// address's (the primary family's, when IPv6 is raced beside it).
TEST_F(NetTest, DialTriesEachAddress) {
  using gort::net::internal::testHookLookupHost;
  struct Unhook {
    ~Unhook() { testHookLookupHost = nullptr; }
  } unhook;
  gort::Run([] {
    Listener ln = gort::net::Listen("tcp4", "127.0.0.1:0");
    std::string port = gort::net::SplitHostPort(ln.Addr()).second;
    gort::Chan<int> accepted = gort::MakeChan<int>(1);
    gort::Go([&ln, accepted]() mutable {
      ln.Accept();
      accepted.Send(1);
    });
    testHookLookupHost = [](const std::string&) {
      return std::vector<std::string>{"127.0.0.2", "127.0.0.1"};
    };
    Conn c;
    try {
      c = gort::net::Dial("tcp", "gort.test:" + port);
    } catch (const Error& e) {
      FAIL() << e.what();
    }
    EXPECT_EQ(c.RemoteAddr(), "127.0.0.1:" + port);
    accepted.Recv();
    ln.Close();
    testHookLookupHost = [](const std::string&) {
      return std::vector<std::string>{"127.0.0.1", "::1"};
    };
    try {
      gort::net::Dial("tcp", "gort.test:" + port);
      ADD_FAILURE() << "dial of a closed port succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                "dial tcp 127.0.0.1:" + port + ": connect: connection refused");
    }
  });
}

TEST_F(NetTest, Addresses) {
  gort::Run([] {
    Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    EXPECT_EQ(ln.Addr().rfind("127.0.0.1:", 0), 0u);
    EXPECT_NE(ln.Addr(), "127.0.0.1:0");
    gort::Chan<std::string> peer = gort::MakeChan<std::string>(1);
    gort::Go([&ln, peer]() mutable { peer.Send(ln.Accept().RemoteAddr()); });
    Conn c = gort::net::Dial(
        "tcp", "localhost:" + ln.Addr().substr(ln.Addr().find(':') + 1));
    EXPECT_EQ(c.RemoteAddr(), ln.Addr());
    EXPECT_EQ(c.LocalAddr().rfind("127.0.0.1:", 0), 0u);
    EXPECT_EQ(peer.Recv(), c.LocalAddr());
  });
}

// 64 MiB through one connection, checked byte by byte (Go's
// TestReadWriteProlongedTimeout / io.Copy tests in spirit).
TEST_P(NetProcsTest, Stream64MiB) {
  gort::Run(
      [] {
        constexpr std::size_t kTotal = 64 << 20;
        Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        gort::Go([&ln] {
          Conn s = ln.Accept();
          std::vector<unsigned char> block(1 << 16);
          for (std::size_t off = 0; off < kTotal; off += block.size()) {
            for (std::size_t i = 0; i < block.size(); i++) {
              block[i] = static_cast<unsigned char>((off + i) * 131 >> 7);
            }
            s.Write(block.data(), block.size());
          }
        });
        Conn c = gort::net::Dial("tcp", ln.Addr());
        std::vector<unsigned char> buf(100'003);
        std::size_t off = 0;
        std::size_t bad = 0;
        for (;;) {
          std::size_t n = c.Read(buf.data(), buf.size());
          if (n == 0) break;
          for (std::size_t i = 0; i < n; i++) {
            bad += buf[i] != static_cast<unsigned char>((off + i) * 131 >> 7);
          }
          off += n;
        }
        EXPECT_EQ(off, kTotal);
        EXPECT_EQ(bad, 0u);
      },
      Opts());
}

// Windows: sockets whose operations finish at once skip the completion
// port (FILE_SKIP_COMPLETION_PORT_ON_SUCCESS), as Go's do where every
// Winsock provider allows it. Wine has one that does not, so the test forces
// the mode on ($GORT_NETPOLL_SKIPSYNC, read at each socket's open).
TEST_F(NetTest, SkipCompletionOnSuccess) {
#if !defined(_WIN32)
  GTEST_SKIP() << "Windows only (completion ports)";
#else
  setenv("GORT_NETPOLL_SKIPSYNC", "1", 1);
  gort::Run(
      [] {
        EchoRoundTrip("tcp", "127.0.0.1:0");
        constexpr std::size_t kTotal = 4 << 20;
        Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        gort::Go([&ln] {
          Conn s = ln.Accept();
          std::vector<unsigned char> block(1 << 14);
          for (std::size_t off = 0; off < kTotal; off += block.size()) {
            for (std::size_t i = 0; i < block.size(); i++) {
              block[i] = static_cast<unsigned char>((off + i) * 7 >> 3);
            }
            s.Write(block.data(), block.size());
          }
        });
        Conn c = gort::net::Dial("tcp", ln.Addr());
        std::vector<unsigned char> buf(7919);
        std::size_t off = 0, bad = 0;
        while (std::size_t n = c.Read(buf.data(), buf.size())) {
          for (std::size_t i = 0; i < n; i++) {
            bad += buf[i] != static_cast<unsigned char>((off + i) * 7 >> 3);
          }
          off += n;
        }
        EXPECT_EQ(off, kTotal);
        EXPECT_EQ(bad, 0u);
      },
      Procs(2));
  unsetenv("GORT_NETPOLL_SKIPSYNC");
#endif
}

TEST_F(NetTest, EOFAfterCloseWrite) {
  gort::Run([] {
    Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    gort::Go([&ln] {
      Conn s = ln.Accept();
      std::string all;
      char buf[64];
      while (std::size_t n = s.Read(buf, sizeof buf)) all.append(buf, n);
      std::string reply = "got " + all;
      s.Write(reply.data(), reply.size());
    });
    Conn c = gort::net::Dial("tcp", ln.Addr());
    c.Write("abc", 3);
    c.CloseWrite();
    char buf[64];
    std::size_t n = ReadFull(c, buf, sizeof buf);
    EXPECT_EQ(std::string(buf, n), "got abc");
    EXPECT_EQ(c.Read(buf, sizeof buf), 0u);  // EOF again, not an error
  });
}

// Raises the soft descriptor limit to the hard one; returns the limit.
long RaiseFdLimit() {
#if defined(_WIN32)
  return 1 << 24;  // handles: no per-process limit to raise
#else
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  return static_cast<long>(rl.rlim_cur);
#endif
}

// 1000 connections at once at GOMAXPROCS 1: they park on the poller, so a
// handful of threads serve them all.
TEST_F(NetTest, ThousandConnsFewThreads) {
  // Scaled: 250 under Wine, whose completion port is a wineserver round trip
  // per operation; still far more connections than the 8 threads allowed.
  const int kConns = gort_test::Scaled(1000);
  if (RaiseFdLimit() < 2 * kConns + 64) GTEST_SKIP() << "descriptor limit";
  int threads = 0;
  gort::Run(
      [&] {
        Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        gort::WaitGroup served;
        served.Add(kConns);
        gort::Go([&] {
          for (int i = 0; i < kConns; i++) {
            gort::Go([c = ln.Accept(), &served]() mutable {
              Echo(std::move(c));
              served.Done();
            });
          }
        });
        std::vector<Conn> conns(kConns);
        for (int i = 0; i < kConns; i++)
          conns[i] = gort::net::Dial("tcp", ln.Addr());
        // Every server goroutine is now parked in Read; all at once:
        gort::WaitGroup clients;
        clients.Add(kConns);
        std::atomic<int> ok{0};
        for (int i = 0; i < kConns; i++) {
          gort::Go([&, i] {
            std::string msg = "conn " + std::to_string(i);
            conns[i].Write(msg.data(), msg.size());
            std::string back(msg.size(), '\0');
            if (ReadFull(conns[i], back.data(), back.size()) == msg.size() &&
                back == msg) {
              ok++;
            }
            conns[i].Close();
            clients.Done();
          });
        }
        clients.Wait();
        served.Wait();
        EXPECT_EQ(ok.load(), kConns);
        threads = gort::ReadStats().threads;
      },
      Procs(1));
  // Main's M, sysmon, and a few spare Ms; never one per connection.
  EXPECT_LE(threads, 8);
}

void ExpectTimeout(const Error& e, const char* op) {
  EXPECT_TRUE(e.Timeout()) << e.what();
  EXPECT_FALSE(e.Closed()) << e.what();
  EXPECT_EQ(e.Errno(), 0);
  EXPECT_NE(std::string(e.what()).find(std::string(op) + " tcp 127.0.0.1:"),
            std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("->127.0.0.1:"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find(": i/o timeout"), std::string::npos);
}

// A pair of connected TCP conns.
struct Pair {
  Listener ln;
  Conn a;
  Conn b;
  Pair() {
    ln = gort::net::Listen("tcp", "127.0.0.1:0");
    gort::Chan<int> got = gort::MakeChan<int>(1);
    gort::Go([this, got]() mutable {
      b = ln.Accept();
      got.Send(1);
    });
    a = gort::net::Dial("tcp", ln.Addr());
    got.Recv();
  }
};

TEST_P(NetProcsTest, ReadDeadlineFiresAndMoves) {
  gort::Run(
      [] {
        Pair p;
        char buf[16];
        auto t0 = Clock::now();
        p.a.SetReadDeadline(t0 + 30ms);
        try {
          p.a.Read(buf, sizeof buf);
          ADD_FAILURE() << "Read returned without data";
        } catch (const Error& e) {
          ExpectTimeout(e, "read");
        }
        EXPECT_GE(Clock::now() - t0, 30ms);
        // Expired stays expired until the deadline moves.
        EXPECT_THROW(p.a.Read(buf, sizeof buf), Error);
        p.a.SetReadDeadline(Clock::now() + 1h);
        p.b.Write("x", 1);
        EXPECT_EQ(p.a.Read(buf, sizeof buf), 1u);
        // Moved earlier while armed: the earlier one fires.
        auto t1 = Clock::now();
        p.a.SetReadDeadline(t1 + 20ms);
        EXPECT_THROW(p.a.Read(buf, sizeof buf), Error);
        EXPECT_GE(Clock::now() - t1, 20ms);
        // Cleared: works again.
        p.a.SetReadDeadline({});
        p.b.Write("y", 1);
        EXPECT_EQ(p.a.Read(buf, sizeof buf), 1u);
        EXPECT_EQ(buf[0], 'y');
      },
      Opts());
}

// A deadline moved later while a Read waits: the armed timer fires at the
// old time, finds the new one later and waits on. The move must come before
// the old deadline; if the OS held the thread past it (seen under qemu on a
// loaded machine), that round proves nothing and runs again.
TEST_F(NetTest, DeadlineMovedLaterWhileBlocked) {
  gort::Run(
      [] {
        for (int round = 0; round < 10; round++) {
          Pair p;
          char buf[4];
          auto t0 = Clock::now();
          p.a.SetReadDeadline(t0 + 20ms);
          Clock::time_point moved;
          gort::Chan<int> done = gort::MakeChan<int>(1);
          gort::Go([&, done]() mutable {
            // Runs while main is parked in Read (GOMAXPROCS 1).
            p.a.SetReadDeadline(t0 + 80ms);
            moved = Clock::now();
            done.Send(1);
          });
          EXPECT_THROW(p.a.Read(buf, sizeof buf), Error);
          auto elapsed = Clock::now() - t0;
          done.Recv();
          if (moved >= t0 + 20ms) continue;  // too late to test anything
          EXPECT_GE(elapsed, 80ms);
          return;
        }
        ADD_FAILURE() << "the deadline was never moved in time";
      },
      Procs(1));
}

TEST_P(NetProcsTest, WriteDeadlineFires) {
  gort::Run(
      [] {
        Pair p;
        std::vector<char> big(1 << 20, 'w');
        auto t0 = Clock::now();
        p.a.SetWriteDeadline(t0 + 30ms);
        std::size_t sent = 0;
        try {
          for (;;) sent += p.a.Write(big.data(), big.size());  // nobody reads
        } catch (const Error& e) {
          ExpectTimeout(e, "write");
        }
        EXPECT_GE(Clock::now() - t0, 30ms);
        // Drain in the background; with the deadline cleared writes work.
        p.a.SetWriteDeadline({});
        gort::Chan<std::size_t> drained = gort::MakeChan<std::size_t>(1);
        gort::Go([&p, drained]() mutable {
          std::vector<char> buf(1 << 16);
          std::size_t total = 0;
          while (std::size_t n = p.b.Read(buf.data(), buf.size())) total += n;
          drained.Send(total);
        });
        EXPECT_EQ(p.a.Write(big.data(), big.size()), big.size());
        p.a.CloseWrite();
        EXPECT_GE(drained.Recv(), big.size());
      },
      Opts());
}

TEST_F(NetTest, PastDeadlineFailsAtOnce) {
  gort::Run([] {
    Pair p;
    p.b.Write("data", 4);
    p.a.SetReadDeadline(Clock::now() - 1s);
    char buf[8];
    // Even with data waiting, as in Go.
    try {
      p.a.Read(buf, sizeof buf);
      ADD_FAILURE() << "read past its deadline";
    } catch (const Error& e) {
      ExpectTimeout(e, "read");
    }
    p.a.SetWriteDeadline(Clock::now() - 1ns);
    EXPECT_THROW(p.a.Write("x", 1), Error);
    p.a.SetDeadline({});
    EXPECT_EQ(p.a.Read(buf, sizeof buf), 4u);
  });
}

TEST_F(NetTest, CloseWakesBlockedRead) {
  gort::Run(
      [] {
        Pair p;
        gort::Chan<std::string> res = gort::MakeChan<std::string>(1);
        gort::Go([&p, res]() mutable {
          char buf[4];
          try {
            p.a.Read(buf, sizeof buf);
            res.Send("returned");
          } catch (const Error& e) {
            res.Send(e.Closed() ? std::string("closed: ") + e.what()
                                : std::string("other: ") + e.what());
          }
        });
        LetOthersPark();
        p.a.Close();
        std::string r = res.Recv();
        EXPECT_EQ(r.rfind("closed: read tcp 127.0.0.1:", 0), 0u) << r;
        EXPECT_NE(r.find(": use of closed network connection"),
                  std::string::npos);
        EXPECT_THROW(p.a.Close(), Error);  // twice: an error, as in Go
      },
      Procs(1));
}

TEST_F(NetTest, CloseWakesBlockedAccept) {
  gort::Run(
      [] {
        Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        gort::Chan<int> res = gort::MakeChan<int>(1);
        gort::Go([&ln, res]() mutable {
          try {
            ln.Accept();
            res.Send(0);
          } catch (const Error& e) {
            res.Send(e.Closed() ? 1 : 2);
          }
        });
        LetOthersPark();
        ln.Close();
        EXPECT_EQ(res.Recv(), 1);
      },
      Procs(1));
}

TEST_F(NetTest, DialRefused) {
  gort::Run([] {
    std::string addr;
    {
      Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
      addr = ln.Addr();
    }
    try {
      gort::net::Dial("tcp", addr);
      ADD_FAILURE() << "dialled a closed port";
    } catch (const Error& e) {
#if defined(_WIN32)
      EXPECT_EQ(e.Errno(), WSAECONNREFUSED);
#else
      EXPECT_EQ(e.Errno(), ECONNREFUSED);
#endif
      EXPECT_EQ(std::string(e.what()),
                "dial tcp " + addr + ": connect: connection refused");
    }
  });
}

// Go's Dialer.Timeout: zero means no timeout, not "already expired".
TEST_F(NetTest, DialTimeoutZero) {
  gort::Run([] {
    Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    Conn c = gort::net::DialTimeout("tcp", ln.Addr(), 0ns);
    EXPECT_TRUE(c.Valid());
    try {
      gort::net::DialTimeout("tcp", "127.0.0.1:9", 1ns);
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_TRUE(e.Timeout()) << e.what();
    }
  });
}

TEST_F(NetTest, BadInput) {
  gort::Run([] {
    auto msg = [](auto f) -> std::string {
      try {
        f();
      } catch (const Error& e) {
        return e.what();
      }
      return "no error";
    };
    EXPECT_EQ(msg([] { gort::net::Dial("foo", "x:1"); }),
              "dial foo: unknown network foo");
    EXPECT_EQ(msg([] { gort::net::Listen("udp7", ":0"); }),
              "listen udp7: unknown network udp7");
    // Go's Listen of a datagram network and ListenPacket of a stream one.
    EXPECT_EQ(msg([] { gort::net::Listen("udp", ":0"); }),
              "listen udp :0: address :0: unexpected address type");
    EXPECT_EQ(msg([] { gort::net::ListenPacket("tcp", ":0"); }),
              "listen tcp :0: address :0: unexpected address type");
    EXPECT_EQ(msg([] { gort::net::Dial("tcp", "127.0.0.1"); }),
              "dial tcp: address 127.0.0.1: missing port in address");
    EXPECT_EQ(msg([] { gort::net::Dial("tcp", "127.0.0.1:70000"); }),
              "dial tcp: address 70000: invalid port");
    EXPECT_EQ(msg([] { gort::net::Dial("tcp", "1:2:3"); }),
              "dial tcp: address 1:2:3: too many colons in address");
    EXPECT_EQ(msg([] { gort::net::Dial("tcp", "[::1:80"); }),
              "dial tcp: address [::1:80: missing ']' in address");
    EXPECT_EQ(msg([] { gort::net::Dial("tcp4", "[::1]:80"); }),
              "dial tcp4: address ::1: no suitable address found");
    Conn empty;
    EXPECT_THROW(empty.Read(nullptr, 0), Error);
  });
}

TEST_F(NetTest, OutsideRunPanics) {
  EXPECT_THROW(gort::net::Dial("tcp", "127.0.0.1:1"), gort::Panic);
  EXPECT_THROW(gort::net::Listen("tcp", "127.0.0.1:0"), gort::Panic);
  std::intptr_t p[2];
  ASSERT_TRUE(gort_test::SocketPair(p));
  EXPECT_THROW(gort::poll::FD{p[0]}, gort::Panic);
  gort_test::SocketClose(p[0]);
  gort_test::SocketClose(p[1]);
}

TEST_P(NetProcsTest, PipeThroughFD) {
#if defined(_WIN32)
  GTEST_SKIP() << "poll::FD takes sockets only on Windows (no pipes)";
#else
  gort::Run(
      [] {
        int p[2];
        ASSERT_EQ(pipe(p), 0);
        gort::poll::FD r(p[0]);
        gort::poll::FD w(p[1]);
        EXPECT_EQ(r.Sysfd(), p[0]);
        EXPECT_NE(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
        gort::Chan<int> closed = gort::MakeChan<int>(1);
        gort::Go([&w, closed]() mutable {
          for (int i = 0; i < 1000; i++) w.Write(&i, sizeof i);
          w.Close();
          closed.Send(1);  // w must outlive its Close
        });
        int sum = 0, v = 0, count = 0;
        std::size_t have = 0;
        char buf[64];
        for (;;) {
          std::size_t n = r.Read(buf, sizeof buf);
          if (n == 0) break;
          for (std::size_t i = 0; i < n; i++) {
            reinterpret_cast<char*>(&v)[have++] = buf[i];
            if (have == sizeof v) {
              sum += v;
              count++;
              have = 0;
            }
          }
        }
        closed.Recv();
        EXPECT_EQ(count, 1000);
        EXPECT_EQ(sum, 999 * 1000 / 2);
        EXPECT_EQ(w.Sysfd(), -1);
      },
      Opts());
#endif
}

TEST_F(NetTest, EventfdThroughFD) {
#if defined(_WIN32)
  GTEST_SKIP() << "no eventfd on Windows";
#else
  gort::Run([] {
    gort::poll::FD ev(eventfd(0, EFD_CLOEXEC));
    gort::Chan<std::uint64_t> got = gort::MakeChan<std::uint64_t>(1);
    gort::Go([&ev, got]() mutable {
      std::uint64_t v = 0;
      ev.Read(&v, sizeof v);
      got.Send(v);
    });
    LetOthersPark();
    std::uint64_t three = 3;
    ev.Write(&three, sizeof three);
    EXPECT_EQ(got.Recv(), 3u);
    ev.SetReadDeadline(Clock::now() + 5ms);
    std::uint64_t v;
    try {
      ev.Read(&v, sizeof v);
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_TRUE(e.Timeout());
      EXPECT_NE(std::string(e.what()).find(": i/o timeout"), std::string::npos);
    }
  });
#endif
}

// While an M waits in the poller (a goroutine blocked in Read, nothing else
// to run), Sleep and After still fire.
TEST_P(NetProcsTest, TimersFireWhileBlockedInPoller) {
  gort::Run(
      [] {
        Pair p;
        auto done = gort::MakeChan<int>();
        gort::Go([&p, done] {
          char c;
          try {
            p.a.Read(&c, 1);
          } catch (const Error&) {
          }
          done.Close();
        });
        for (int i = 0; i < 20; i++) {
          auto t0 = Clock::now();
          gort::Sleep(100us);
          EXPECT_GE(Clock::now() - t0, 100us);
        }
        auto t0 = Clock::now();
        gort::After(2ms).Recv();
        EXPECT_GE(Clock::now() - t0, 2ms);
        p.a.Close();
        done.Recv();  // the reader is out of p before p goes
      },
      Opts());
}

// Every goroutine waits on I/O, no timer is pending: not a deadlock. The
// data comes from a thread outside the runtime.
TEST_F(NetTest, NoDeadlockWhileWaitingOnIO) {
  std::intptr_t sv[2];
  ASSERT_TRUE(gort_test::SocketPair(sv));
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);  // the external event comes later
    char c = 'z';
    ASSERT_TRUE(gort_test::SocketWrite(sv[1], &c, 1));
  });
  char got = 0;
  gort::Run(
      [&] {
        gort::poll::FD r(sv[0]);
        r.Read(&got, 1);
      },
      Procs(1));
  writer.join();
  gort_test::SocketClose(sv[1]);
  EXPECT_EQ(got, 'z');
}

// GOMAXPROCS changes while goroutines wait on I/O (and an M waits in the
// poller) lose none of them.
TEST_F(NetTest, GomaxprocsChangesWhileWaitingOnIO) {
  gort::Run(
      [] {
        constexpr int kPairs = 8;
        std::vector<Pair> pairs(kPairs);
        gort::WaitGroup wg;
        wg.Add(kPairs);
        std::atomic<int> got{0};
        for (int i = 0; i < kPairs; i++) {
          gort::Go([&, i] {
            char c = 0;
            if (pairs[i].a.Read(&c, 1) == 1 && c == 'a' + i) got++;
            wg.Done();
          });
        }
        LetOthersPark();
        for (int n : {4, 1, 3, 2}) {
          gort::GOMAXPROCS(n);
          gort::Sleep(200us);
        }
        for (int i = 0; i < kPairs; i++) {
          char c = static_cast<char>('a' + i);
          pairs[i].b.Write(&c, 1);
          if (i % 2 == 0) gort::GOMAXPROCS(1 + i % 3);
        }
        wg.Wait();
        EXPECT_EQ(got.load(), kPairs);
      },
      Procs(2));
}

int CountFds() { return gort_test::OpenDescriptors(); }

// A Run that uses the poller and ends with connections open (and a
// goroutine parked on one) leaves no descriptor behind, and the next Run
// gets a working poller.
TEST_F(NetTest, NoFdLeakAcrossRuns) {
  int before = CountFds();  // <= 0: the OS does not count them (Wine)
  Conn leaked;
  for (int run = 0; run < 3; run++) {
    gort::Run(
        [&] {
          Pair p;
          gort::Go([&p] {
            char c;
            p.a.Read(&c, 1);  // nobody writes: abandoned when main returns
          });
          LetOthersPark();
          p.a.Write("q", 1);
          char c;
          EXPECT_EQ(p.b.Read(&c, 1), 1u);
          leaked = std::move(p.a);  // outlives the Run
        },
        Procs(1));
    // From an ended Run: reads as closed; the destructor closes it.
    EXPECT_TRUE(leaked.Valid());
    leaked = Conn();
  }
  if (before > 0) {
    EXPECT_EQ(CountFds(), before);
  }
}

// DialContext with a live context connects, and the connection keeps
// working after the context is canceled (the interrupter is gone by then).
TEST_F(NetTest, DialContextConnectsAndOutlivesCancel) {
  gort::Run([] {
    Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    gort::Chan<int> done = gort::MakeChan<int>(1);
    gort::Go([&ln, done]() mutable {
      Echo(ln.Accept());
      done.Send(1);
    });
    auto [ctx, cancel] = gort::WithTimeout(gort::Background(), 1h);
    Conn c = gort::net::DialContext(ctx, "tcp", ln.Addr());
    cancel();
    c.Write("ping", 4);
    char back[4];
    ASSERT_EQ(ReadFull(c, back, 4), 4u);
    EXPECT_EQ(std::string(back, 4), "ping");
    c.Close();
    done.Recv();
  });
}

// A context already canceled fails the dial at once with Go's text; one
// whose deadline has passed fails with a Timeout() error.
TEST_F(NetTest, DialContextDoneContextFails) {
  gort::Run([] {
    Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    auto [ctx, cancel] = gort::WithCancel(gort::Background());
    cancel();
    try {
      gort::net::DialContext(ctx, "tcp", ln.Addr());
      ADD_FAILURE() << "dialled with a canceled context";
    } catch (const Error& e) {
      EXPECT_FALSE(e.Timeout());
      EXPECT_EQ(std::string(e.what()),
                "dial tcp " + ln.Addr() + ": operation was canceled");
    }
    auto [late, cancel2] = gort::WithTimeout(gort::Background(), -1ns);
    try {
      gort::net::DialContext(late, "tcp", ln.Addr());
      ADD_FAILURE() << "dialled past the context's deadline";
    } catch (const Error& e) {
      EXPECT_TRUE(e.Timeout()) << e.what();
    }
    cancel2();
  });
}

#if !defined(_WIN32)
// A loopback listener whose accept queue is full, so the kernel drops new
// SYNs and a connect to it stays in progress (plain sockets, not gort's).
// Port() is 0 if this kernel completed a connect anyway.
class StuckListener {
 public:
  StuckListener() {
    ln_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (bind(ln_, reinterpret_cast<sockaddr*>(&sa), len) != 0 ||
        listen(ln_, 0) != 0 ||
        getsockname(ln_, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
      return;
    }
    // Backlog 0 admits one connection; a few more make sure it is full.
    for (int i = 0; i < 4; i++) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
      fillers_.push_back(fd);
    }
    int probe = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    fillers_.push_back(probe);
    if (connect(probe, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0)
      return;
    pollfd p{probe, POLLOUT, 0};
    if (poll(&p, 1, 200) != 0) return;  // it connected (or failed): no use
    port_ = ntohs(sa.sin_port);
  }
  ~StuckListener() {
    for (int fd : fillers_) close(fd);
    close(ln_);
  }
  int Port() const { return port_; }

 private:
  int ln_ = -1;
  int port_ = 0;
  std::vector<int> fillers_;
};

// openFds: this process's open descriptors.
int openFds() {
  int n = 0;
  for (int fd = 0; fd < 4096; fd++) n += fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
  return n;
}

// Go's dialParallel (net/dial.go:449): "localhost" is 127.0.0.1 then ::1;
// the primary (127.0.0.1) hangs on a stuck listener, so the fallback ([::1])
// joins after 300 ms and wins; the primary's dial is cancelled and its
// socket closed before DialTimeout returns.
TEST_F(NetTest, DialRacesTheFallbackFamily) {
  StuckListener stuck;
  if (stuck.Port() == 0) GTEST_SKIP() << "this kernel completes such connects";
  std::string port = std::to_string(stuck.Port());
  gort::Run([&] {
    Listener ln;
    try {
      ln = gort::net::Listen("tcp6", "[::1]:" + port);
    } catch (const Error& e) {
      GTEST_SKIP() << "no [::1] on this port: " << e.what();
    }
    int fds0 = openFds();
    auto t0 = Clock::now();
    // The timeout only bounds a broken race: the primary alone fails at 2 s.
    Conn c = gort::net::DialTimeout("tcp", "localhost:" + port, 2s);
    EXPECT_GE(Clock::now() - t0, 300ms);  // the primary's head start
    EXPECT_EQ(c.RemoteAddr(), "[::1]:" + port);
    EXPECT_EQ(openFds(), fds0 + 1);  // c only: the loser's socket is closed
    Conn s = ln.Accept();
    EXPECT_EQ(s.RemoteAddr(), c.LocalAddr());
  });
}

// Cancelling the context of a DialContext whose connect is still in
// progress ends it with Go's "operation was canceled" (the interrupter
// moves the connect's deadline into the past), not a timeout.
TEST_F(NetTest, DialContextCancelInterruptsConnect) {
  StuckListener stuck;
  if (stuck.Port() == 0) GTEST_SKIP() << "this kernel completes such connects";
  std::string addr = "127.0.0.1:" + std::to_string(stuck.Port());
  gort::Run(
      [&] {
        auto [ctx, cancel] = gort::WithCancel(gort::Background());
        gort::Chan<std::string> result = gort::MakeChan<std::string>(1);
        gort::Go([ctx = ctx, addr, result] {
          try {
            gort::net::DialContext(ctx, "tcp", addr);
            result.Send("connected");
          } catch (const Error& e) {
            result.Send(std::string(e.Timeout() ? "timeout: " : "") + e.what());
          }
        });
        LetOthersPark();  // the dialer is parked in its connect
        cancel();
        EXPECT_EQ(result.Recv(),
                  "dial tcp " + addr + ": operation was canceled");
      },
      Procs(1));
}
#endif  // !defined(_WIN32)

// A Read bounded by a Context, Go's idiom (context.AfterFunc moving the
// read deadline into the past): cancelling wakes the blocked Read with a
// Timeout() error, and stopping the AfterFunc leaves the Conn usable.
TEST_F(NetTest, ReadBoundedByContext) {
  gort::Run(
      [] {
        Pair p;
        auto [ctx, cancel] = gort::WithCancel(gort::Background());
        auto stop = gort::AfterFunc(
            ctx, [&p] { p.a.SetReadDeadline(Clock::now() - 1s); });
        gort::Go([cancel = cancel] {
          LetOthersPark();  // main is parked in Read by now
          cancel();
        });
        char c;
        try {
          p.a.Read(&c, 1);
          ADD_FAILURE() << "Read returned without data";
        } catch (const Error& e) {
          EXPECT_TRUE(e.Timeout()) << e.what();
        }
        EXPECT_FALSE(stop());  // it ran
        p.a.SetReadDeadline(Clock::time_point{});
        p.b.Write("x", 1);
        EXPECT_EQ(p.a.Read(&c, 1), 1u);
      },
      Procs(1));
}

#if !defined(_WIN32)
// --- Servers that survive real clients ---

class NetDeathTest : public NetTest {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// A server writing to a client that has gone: the write fails with "broken
// pipe" (or "connection reset by peer"), the process lives (send with
// MSG_NOSIGNAL; plain write(2) dies of SIGPIPE, status 141 in a shell).
TEST_F(NetDeathTest, WriteToGoneClientDoesNotKill) {
  EXPECT_EXIT(
      {
        int code = 3;
        gort::Run([&code] {
          Pair p;
          p.a.Close();
          std::string chunk(64 << 10, 'x');
          try {
            for (int i = 0; i < 1000; i++)
              p.b.Write(chunk.data(), chunk.size());
            code = 4;  // never failed
          } catch (const Error& e) {
            bool gone = e.Errno() == EPIPE || e.Errno() == ECONNRESET;
            code = gone ? 0 : 5;
          }
        });
        std::exit(code);
      },
      testing::ExitedWithCode(0), "");
}

std::atomic<int> userSigpipes{0};
void CountSigpipe(int) { userSigpipes.fetch_add(1); }

// A pipe through poll::FD whose reader has gone: EPIPE ("broken pipe"), not
// death, and a handler the program installed for SIGPIPE stays installed,
// not called for gort's write, still called for the program's own writes.
TEST_F(NetDeathTest, BrokenPipeThroughFDIsAnErrorAndLeavesHandler) {
  EXPECT_EXIT(
      {
        struct sigaction sa {};
        sa.sa_handler = CountSigpipe;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGPIPE, &sa, nullptr);
        int code = 3;
        gort::Run([&code] {
          int p[2];
          if (pipe(p) != 0) return;
          close(p[0]);
          gort::poll::FD w(p[1]);
          try {
            w.Write("x", 1);
            code = 4;
          } catch (const Error& e) {
            bool ok =
                e.Errno() == EPIPE &&
                std::string(e.what()).find("broken pipe") != std::string::npos;
            code = ok ? 0 : 5;
          }
        });
        struct sigaction now {};
        sigaction(SIGPIPE, nullptr, &now);
        if (code == 0 && now.sa_handler != CountSigpipe) code = 6;
        if (code == 0 && userSigpipes.load() != 0) code = 7;
        sigset_t mask;
        pthread_sigmask(SIG_BLOCK, nullptr, &mask);
        if (code == 0 && sigismember(&mask, SIGPIPE)) code = 8;
        int q[2];
        if (code == 0 && pipe(q) == 0) {
          close(q[0]);
          if (write(q[1], "x", 1) >= 0 || userSigpipes.load() != 1) code = 9;
        }
        std::exit(code);
      },
      testing::ExitedWithCode(0), "");
}

// A socket through poll::FD whose peer has gone: EPIPE, not death. fdOpen
// gives a socket send(MSG_NOSIGNAL), as net's own; a plain write(2) would
// die of SIGPIPE (no handler here).
TEST_F(NetDeathTest, BrokenSocketThroughFDIsAnError) {
  EXPECT_EXIT(
      {
        int code = 3;
        gort::Run([&code] {
          int sv[2];
          if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return;
          close(sv[0]);
          gort::poll::FD w(sv[1]);
          try {
            w.Write("x", 1);
            code = 4;
          } catch (const Error& e) {
            code = e.Errno() == EPIPE ? 0 : 5;
          }
        });
        std::exit(code);
      },
      testing::ExitedWithCode(0), "");
}

// A raw TCP listener on a free loopback port, its address in *sa.
int RawListener(sockaddr_in* sa) {
  int ln = socket(AF_INET, SOCK_STREAM, 0);
  *sa = {};
  sa->sin_family = AF_INET;
  sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof *sa;
  EXPECT_EQ(bind(ln, reinterpret_cast<sockaddr*>(sa), len), 0);
  EXPECT_EQ(listen(ln, 1), 0);
  EXPECT_EQ(getsockname(ln, reinterpret_cast<sockaddr*>(sa), &len), 0);
  return ln;
}

// A raw loopback TCP pair: the accepted end (returned) and the client end.
std::pair<int, int> RawTCPPair() {
  sockaddr_in sa;
  int ln = RawListener(&sa);
  int cl = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_EQ(connect(cl, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  int sv = accept(ln, nullptr, nullptr);
  close(ln);
  return {sv, cl};
}

// A peer that sends and then resets (SO_LINGER 0), the poller having seen
// the reset before the first Read: the data comes first, then "connection
// reset by peer", then EOF (Go's setEventErr: only an event that is
// EPOLLERR alone marks the descriptor, and the next event clears it).
TEST_F(NetTest, PeerResetReturnsDataThenResetThenEOF) {
  gort::Run(
      [] {
        auto [sv, cl] = RawTCPPair();
        ASSERT_EQ(write(cl, "hello", 5), 5);
        linger lg{1, 0};
        setsockopt(cl, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        close(cl);  // RST
        pollfd pf{sv, POLLIN, 0};
        while (!(pf.revents & (POLLHUP | POLLERR))) {
          pf.revents = 0;
          poll(&pf, 1, -1);  // the reset has arrived (not a timing guess)
        }
        gort::poll::FD fd(sv);
        // Sleeping makes the only M block in the poller until the timer, so the
        // reset's event is processed before the Read (it would not change the
        // outcome of a correct implementation if it were not).
        gort::Sleep(2ms);
        char buf[16];
        std::size_t n = 0;
        try {
          n = fd.Read(buf, sizeof buf);
        } catch (const Error& e) {
          FAIL() << "the data before the reset was lost: " << e.what();
        }
        EXPECT_EQ(std::string(buf, n), "hello");
        try {
          fd.Read(buf, sizeof buf);
          ADD_FAILURE() << "no reset reported";
        } catch (const Error& e) {
          EXPECT_EQ(e.Errno(), ECONNRESET) << e.what();
          EXPECT_FALSE(e.Closed()) << e.what();
          EXPECT_NE(std::string(e.what()).find("connection reset by peer"),
                    std::string::npos)
              << e.what();
        }
        EXPECT_EQ(fd.Read(buf, sizeof buf), 0u);
      },
      Procs(1));
}

// KernelSaysWhatIsLeft: whether this kernel reports, with each TCP read,
// the bytes it left queued (TCP_INQ, Linux 4.18), asked of a raw socket so
// that a gort that never asks still fails the tests below.
bool KernelSaysWhatIsLeft() {
#if defined(_WIN32) || !defined(TCP_INQ)
  return false;
#else
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  bool ok = setsockopt(s, IPPROTO_TCP, TCP_INQ, &one, sizeof one) == 0;
  close(s);
  return ok;
#endif
}

// PingPong: n round trips of msg between a dialled Conn and its accepted
// twin at GOMAXPROCS 1; returns how many reads each side skipped.
std::pair<std::uint64_t, std::uint64_t> PingPong(int n) {
  std::pair<std::uint64_t, std::uint64_t> skipped;
  gort::Run(
      [&] {
        Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        gort::Chan<std::uint64_t> done = gort::MakeChan<std::uint64_t>(1);
        gort::Go([&ln, done]() mutable {
          Conn c = ln.Accept();
          char buf[64];
          for (std::size_t k; (k = c.Read(buf, sizeof buf)) != 0;) {
            c.Write(buf, k);
          }
          done.Send(gort::net::internal::readsSkipped(c));
        });
        Conn c = gort::net::Dial("tcp", ln.Addr());
        for (int i = 0; i < n; i++) {
          char buf[8] = "ping123";
          c.Write(buf, sizeof buf);
          ASSERT_EQ(ReadFull(c, buf, sizeof buf), sizeof buf);
          ASSERT_STREQ(buf, "ping123");
        }
        skipped.first = gort::net::internal::readsSkipped(c);
        c.CloseWrite();
        skipped.second = done.Recv();
      },
      Procs(1));
  return skipped;
}

// A read that drained the socket after clean news from the poller lets the
// next read park at once, without the read that would fail with EAGAIN
// (gort's own; the C loop's call count). In a ping-pong every read but each
// side's first parks at once.
TEST_F(NetTest, ReadAfterDrainingParksAtOnce) {
  if (!KernelSaysWhatIsLeft()) GTEST_SKIP() << "no TCP_INQ on this system";
  auto [client, server] = PingPong(100);
  // Each side's first read tries; every later one follows a drained read
  // whose wake-up was a data event alone.
  // (the server's first read may find the first ping already there, and
  // then its second tries too).
  EXPECT_GE(client, 98u);
  EXPECT_GE(server, 98u);
}

// A read that leaves data queued does not let the next one park: it must
// find the rest without a new event (a peer that writes once, read in small
// pieces).
TEST_F(NetTest, ReadLeavingDataDoesNotPark) {
  gort::Run(
      [] {
        Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        gort::Chan<int> go = gort::MakeChan<int>();
        gort::Chan<int> done = gort::MakeChan<int>();
        gort::Go([&ln, go, done]() mutable {
          Conn c = ln.Accept();
          go.Recv();
          std::string all(100, 'x');
          c.Write(all.data(), all.size());
          done.Recv();  // keep the connection open: no EOF to wake anyone
        });
        Conn c = gort::net::Dial("tcp", ln.Addr());
        go.Send(1);
        char buf[10];
        std::size_t got = c.Read(buf, sizeof buf);  // parks first
        // The rest is queued: a read that parked would wait for nothing,
        // and the deadline turns that hang into a failure.
        c.SetReadDeadline(std::chrono::steady_clock::now() + 10s);
        while (got < 100) got += c.Read(buf, sizeof buf);
        EXPECT_EQ(got, 100u);
        EXPECT_EQ(gort::net::internal::readsSkipped(c), 0u);
        done.Send(1);
      },
      Procs(1));
}

#if !defined(_WIN32)
// A peer's data and reset arriving together while the reader is parked: the
// read after the data must try, and report the reset (a reset does not count
// as a byte left in the kernel's hint, so only the poller's news can say it
// came).
TEST_F(NetTest, ResetAfterDataIsNotSkipped) {
  gort::Run(
      [] {
        Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        gort::Chan<int> go = gort::MakeChan<int>();
        gort::Go([&ln, go]() mutable {
          Conn c = ln.Accept();
          go.Recv();
          c.Write("hello", 5);
          c.SetLinger(0);
          c.Close();  // RST
        });
        Conn c = gort::net::Dial("tcp", ln.Addr());
        go.Send(1);
        char buf[16];
        ASSERT_EQ(c.Read(buf, sizeof buf), 5u);  // parks first
        EXPECT_EQ(std::string(buf, 5), "hello");
        try {
          std::size_t n = c.Read(buf, sizeof buf);
          EXPECT_EQ(n, 0u) << "data after the reset";
        } catch (const Error& e) {
          EXPECT_EQ(e.Errno(), ECONNRESET) << e.what();
        }
      },
      Procs(1));
}
#endif

#if !defined(_WIN32)
// Urgent data stops a read short with data still queued behind it (Linux's
// TCP read stops at the urgent mark): that read did not drain the socket
// (the kernel's count says so), and the next one must find the rest without
// a new event. The peer is a raw socket, and both sends land before the
// parked reader's one wake-up (GOMAXPROCS 1: nobody polls until main
// blocks).
TEST_F(NetTest, UrgentDataIsNotSkipped) {
  gort::Run(
      [] {
        sockaddr_in sa;
        int ln = RawListener(&sa);
        Conn c = gort::net::Dial(
            "tcp", "127.0.0.1:" + std::to_string(ntohs(sa.sin_port)));
        int peer = accept(ln, nullptr, nullptr);
        ASSERT_GE(peer, 0);
        auto got = gort::MakeChan<std::string>(1);
        gort::Go([&c, got]() mutable {
          std::string all;
          try {
            // A read that parked at once would wait for nothing: the
            // deadline turns that hang into a failure.
            c.SetReadDeadline(std::chrono::steady_clock::now() + 10s);
            char buf[64];
            while (all.size() < 4) {
              std::size_t n = c.Read(buf, sizeof buf);
              if (n == 0) break;
              all.append(buf, n);
            }
          } catch (const Error& e) {
            all += std::string(" (") + e.what() + ")";
          }
          got.Send(all);
        });
        gort::Gosched();  // the reader finds nothing and parks
        ASSERT_EQ(send(peer, "abc", 3, MSG_OOB), 3);  // 'c' is urgent
        ASSERT_EQ(send(peer, "de", 2, 0), 2);
        // Out of band, 'c' leaves the stream: the reader gets "ab" (stopped
        // at the mark), then "de".
        EXPECT_EQ(got.Recv(), "abde");
        close(peer);
        close(ln);
      },
      Procs(1));
}
#endif

// A connected UDP socket whose peer port is closed: every Read after a send
// reports the ICMP error ("connection refused"), never "use of closed file".
TEST_F(NetTest, UDPRefusedIsNotClosed) {
  gort::Run(
      [] {
        int gone = socket(AF_INET, SOCK_DGRAM, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof sa;
        ASSERT_EQ(bind(gone, reinterpret_cast<sockaddr*>(&sa), len), 0);
        ASSERT_EQ(getsockname(gone, reinterpret_cast<sockaddr*>(&sa), &len), 0);
        close(gone);
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        ASSERT_EQ(connect(u, reinterpret_cast<sockaddr*>(&sa), len), 0);
        gort::poll::FD fd(u);
        for (int i = 0; i < 3; i++) {
          fd.Write("x", 1);
          // As above: the M blocks in the poller, which sees the ICMP error's
          // event (EPOLLERR | EPOLLOUT) before the Read.
          gort::Sleep(2ms);
          char c;
          try {
            fd.Read(&c, 1);
            ADD_FAILURE() << "read from a closed port";
          } catch (const Error& e) {
            EXPECT_FALSE(e.Closed()) << "round " << i << ": " << e.what();
            EXPECT_EQ(e.Errno(), ECONNREFUSED)
                << "round " << i << ": " << e.what();
          }
        }
      },
      Procs(1));
}

// Cancelling DialContext while its connect starts is never missed: the
// deadline is set before the interrupter is registered (Go's order), so the
// interrupter's past deadline is not overwritten. Many tries at GOMAXPROCS 2
// (the race); each missed cancel would wait for the context's deadline.
TEST_F(NetTest, DialContextCancelNeverMissed) {
  StuckListener stuck;
  if (stuck.Port() == 0) GTEST_SKIP() << "this kernel completes such connects";
  std::string addr = "127.0.0.1:" + std::to_string(stuck.Port());
  gort::Run(
      [&] {
        int timeouts = 0;
        for (int i = 0; i < 2000; i++) {
          auto [ctx, cancel] = gort::WithTimeout(gort::Background(), 20s);
          gort::Go([cancel = cancel] { cancel(); });
          try {
            gort::net::DialContext(ctx, "tcp", addr);
            ADD_FAILURE() << "connected to a full listener";
          } catch (const Error& e) {
            if (e.Timeout()) timeouts++;
          }
          cancel();
        }
        EXPECT_EQ(timeouts, 0) << "cancels missed (waited for the deadline)";
      },
      Procs(2));
}

// A deadline set and cleared leaves no timer behind (Go's deltimer), so a
// real deadlock afterwards is still reported by checkdead.
TEST_F(NetDeathTest, ClearedDeadlineLeavesDeadlockVisible) {
  EXPECT_EXIT(gort::Run([] {
                int p[2];
                if (pipe(p) != 0) return;
                gort::poll::FD r(p[0]);
                r.SetReadDeadline(Clock::now() + 1h);
                r.SetReadDeadline(Clock::time_point{});
                gort::Chan<int> nil;
                nil.Recv();
              }),
              testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

// A descriptor the poller cannot take (a regular file): a deadline is an
// error, as Go's "file type does not support deadline", not ignored.
TEST_F(NetTest, DeadlineOnUnpollableFD) {
  gort::Run([] {
    char path[] = "/tmp/gort-net-test-XXXXXX";
    int f = mkstemp(path);
    ASSERT_GE(f, 0);
    unlink(path);
    gort::poll::FD fd(f);
    try {
      fd.SetReadDeadline(Clock::now() + 1s);
      ADD_FAILURE() << "deadline accepted";
    } catch (const Error& e) {
      EXPECT_NE(
          std::string(e.what()).find("file type does not support deadline"),
          std::string::npos)
          << e.what();
    }
    EXPECT_EQ(fd.Write("ab", 2), 2u);
  });
}

// Go's address forms: an empty port is 0, a port may be a service name,
// a v4 client of a dual-stack [::] listener prints as IPv4, "tcp6" is IPv6
// only, an IPv6 zone is kept.
TEST_F(NetTest, GoAddressForms) {
  gort::Run([] {
    Listener any = gort::net::Listen("tcp", "127.0.0.1:");
    EXPECT_NE(any.Addr(), "127.0.0.1:0");
    EXPECT_EQ(any.Addr().rfind("127.0.0.1:", 0), 0u) << any.Addr();
    try {
      Conn c = gort::net::Dial("tcp", "127.0.0.1:http");
      EXPECT_EQ(c.RemoteAddr(), "127.0.0.1:80");
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("127.0.0.1:80:"), std::string::npos)
          << e.what();
    }
    try {
      gort::net::DialTimeout("tcp", "[fe80::1%lo]:1", 1s);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("[fe80::1%lo]:1"), std::string::npos)
          << e.what();
    }
    Listener dual;
    try {
      dual = gort::net::Listen("tcp", "[::]:0");
    } catch (const Error& e) {
      GTEST_SKIP() << "no IPv6: " << e.what();
    }
    std::string port = dual.Addr().substr(dual.Addr().rfind(':') + 1);
    gort::Chan<std::string> peer = gort::MakeChan<std::string>(1);
    gort::Go([&dual, peer]() mutable {
      Conn c = dual.Accept();
      peer.Send(c.RemoteAddr() + " " + c.LocalAddr());
    });
    Conn c = gort::net::Dial("tcp4", "127.0.0.1:" + port);
    EXPECT_EQ(peer.Recv(), c.LocalAddr() + " 127.0.0.1:" + port);
    Listener only6 = gort::net::Listen("tcp6", "[::]:0");
    std::string port6 = only6.Addr().substr(only6.Addr().rfind(':') + 1);
    try {
      gort::net::Dial("tcp4", "127.0.0.1:" + port6);
      ADD_FAILURE() << "a tcp6 listener took an IPv4 connection";
    } catch (const Error& e) {
      EXPECT_EQ(e.Errno(), ECONNREFUSED) << e.what();
    }
  });
}

// "@name" is a Linux abstract unix socket: no file is made, the address
// reads back as "@name", and Close has no file to remove.
TEST_F(NetTest, AbstractUnixSocket) {
  std::string name = "@gort-net-test-" + std::to_string(getpid());
  gort::Run([&name] {
    Listener ln = gort::net::Listen("unix", name);
    EXPECT_EQ(ln.Addr(), name);
    struct stat st;
    EXPECT_NE(stat(name.c_str(), &st), 0) << "a file was made for " << name;
    gort::Go([&ln] { Echo(ln.Accept()); });
    Conn c = gort::net::Dial("unix", name);
    EXPECT_EQ(c.RemoteAddr(), name);
    c.Write("hi", 2);
    char buf[2];
    EXPECT_EQ(ReadFull(c, buf, 2), 2u);
    c.Close();
  });
}

// Error::code() is portable (generic category), and a Write that fails part
// way says how much went out.
TEST_F(NetTest, ErrorCodeAndPartialWrite) {
  gort::Run(
      [] {
        Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        std::string addr = ln.Addr();
        ln.Close();
        try {
          gort::net::Dial("tcp", addr);
          ADD_FAILURE() << "dialled a closed port";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), std::errc::connection_refused) << e.what();
        }
        Pair p;
        std::string big(64 << 20, 'x');
        gort::Chan<int> done = gort::MakeChan<int>(1);
        gort::Go([&p, &big, done]() mutable {
          try {
            p.a.Write(big.data(), big.size());
            ADD_FAILURE() << "64 MiB went into an unread socket";
          } catch (const Error& e) {
            EXPECT_TRUE(e.Timeout()) << e.what();
            EXPECT_EQ(e.code(), std::errc::timed_out) << e.what();
            EXPECT_GT(e.Written(), 0u);
            EXPECT_LT(e.Written(), big.size());
          }
          done.Send(1);
        });
        LetOthersPark();  // the writer filled the socket and is parked
        p.a.SetWriteDeadline(Clock::now() - 1s);
        done.Recv();
      },
      Procs(1));
}

// Listener::SetDeadline: Accept times out, and clearing it lets Accept on.
TEST_F(NetTest, ListenerDeadline) {
  gort::Run([] {
    Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    ln.SetDeadline(Clock::now() + 10ms);
    try {
      ln.Accept();
      ADD_FAILURE() << "accepted nothing";
    } catch (const Error& e) {
      EXPECT_TRUE(e.Timeout()) << e.what();
    }
    ln.SetDeadline(Clock::time_point{});
    Conn c = gort::net::Dial("tcp", ln.Addr());
    EXPECT_TRUE(ln.Accept().Valid());
  });
}

// The descriptor of this process's socket bound to local address addr.
int FdOfLocalAddr(const std::string& addr) {
  for (int fd = 3; fd < 4096; fd++) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0 ||
        sa.sin_family != AF_INET) {
      continue;
    }
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, buf, sizeof buf);
    if (std::string(buf) + ":" + std::to_string(ntohs(sa.sin_port)) == addr) {
      int type = 0;
      socklen_t tl = sizeof type;
      getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl);
      if (type == SOCK_STREAM) return fd;
    }
  }
  return -1;
}

int IntOpt(int fd, int level, int opt) {
  int v = -1;
  socklen_t len = sizeof v;
  getsockopt(fd, level, opt, &v, &len);
  return v;
}

// Go's TCP defaults (no delay, keep-alive every 15 s) and the setters.
TEST_F(NetTest, TCPOptions) {
  gort::Run([] {
    Pair p;
    int fd = FdOfLocalAddr(p.a.LocalAddr());
    ASSERT_GE(fd, 0);
    EXPECT_EQ(IntOpt(fd, IPPROTO_TCP, TCP_NODELAY), 1);
    EXPECT_EQ(IntOpt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
    EXPECT_EQ(IntOpt(fd, IPPROTO_TCP, TCP_KEEPIDLE), 15);
    EXPECT_EQ(IntOpt(fd, IPPROTO_TCP, TCP_KEEPINTVL), 15);
    int afd = FdOfLocalAddr(p.b.LocalAddr());  // the accepted end too
    if (afd == fd) afd = -1;
    p.a.SetNoDelay(false);
    p.a.SetKeepAlive(false);
    EXPECT_EQ(IntOpt(fd, IPPROTO_TCP, TCP_NODELAY), 0);
    EXPECT_EQ(IntOpt(fd, SOL_SOCKET, SO_KEEPALIVE), 0);
    p.a.SetKeepAlivePeriod(29500ms);
    EXPECT_EQ(IntOpt(fd, IPPROTO_TCP, TCP_KEEPIDLE), 30);
    p.a.SetReadBuffer(1 << 16);
    EXPECT_GE(IntOpt(fd, SOL_SOCKET, SO_RCVBUF), 1 << 16);
    p.a.SetWriteBuffer(1 << 16);
    EXPECT_GE(IntOpt(fd, SOL_SOCKET, SO_SNDBUF), 1 << 16);
    p.a.SetLinger(0);
    linger l{};
    socklen_t len = sizeof l;
    getsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &len);
    EXPECT_EQ(l.l_onoff, 1);
    EXPECT_EQ(l.l_linger, 0);
    p.a.Close();
    try {
      p.a.SetNoDelay(true);
      ADD_FAILURE() << "set an option on a closed Conn";
    } catch (const Error& e) {
      EXPECT_TRUE(e.Closed()) << e.what();
    }
    char c;
    try {
      p.b.Read(&c, 1);  // the linger-0 close reset the connection
      ADD_FAILURE() << "read after a reset";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), std::errc::connection_reset) << e.what();
    }
  });
}

// WriteBuffers writes every buffer, in order, across partial writes (a
// large buffer fills the socket, the reader drains it).
TEST_P(NetProcsTest, WriteBuffersInOrder) {
  gort::Run(
      [] {
        Pair p;
        // Small socket buffers: the big buffer goes out in many partial
        // writes, so a writer that loses its place within one buffer
        // always sends wrong bytes (autotuned buffers can take it in two).
        p.a.SetWriteBuffer(64 << 10);
        p.b.SetReadBuffer(64 << 10);
        std::string big(8 << 20, '\0');
        for (std::size_t i = 0; i < big.size(); i++) big[i] = char(i * 7);
        std::vector<std::string_view> bufs = {"ab", "", "cd", big, "ef"};
        std::string want = "abcd" + big + "ef";
        gort::Chan<std::string> got = gort::MakeChan<std::string>(1);
        gort::Go([&p, n = want.size(), got]() mutable {
          std::string s(n, '\0');
          s.resize(ReadFull(p.b, s.data(), n));
          p.b.Close();  // a writer sending more than n fails, not hangs
          got.Send(s);
        });
        EXPECT_EQ(p.a.WriteBuffers(bufs), want.size());
        EXPECT_TRUE(got.Recv() == want);
      },
      Opts());
}

TEST_F(NetTest, SplitAndJoinHostPort) {
  using gort::net::JoinHostPort;
  using gort::net::SplitHostPort;
  EXPECT_EQ(SplitHostPort("example.com:80"),
            std::make_pair(std::string("example.com"), std::string("80")));
  EXPECT_EQ(SplitHostPort("[::1]:http"),
            std::make_pair(std::string("::1"), std::string("http")));
  EXPECT_EQ(SplitHostPort(":0"),
            std::make_pair(std::string(), std::string("0")));
  EXPECT_THROW(SplitHostPort("::1:80"), Error);
  EXPECT_THROW(SplitHostPort("example.com"), Error);
  EXPECT_EQ(JoinHostPort("::1", "80"), "[::1]:80");
  EXPECT_EQ(JoinHostPort("127.0.0.1", "80"), "127.0.0.1:80");
}
#endif  // !defined(_WIN32)

// The Try forms return the Error as a value, as Go's (n, err) pairs: EOF is
// 0 with no error, a deadline a Timeout() error, a closed listener or
// connection a Closed() error.
TEST_F(NetTest, TryFormsReturnErrorsAsValues) {
  gort::Run([] {
    Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    auto accepted = gort::MakeChan<int>(1);
    Conn s;
    gort::Go([&] {
      gort::net::Result<Conn> r = ln.TryAccept();
      ASSERT_TRUE(r.ok());
      s = std::move(*r);
      accepted.Send(1);
    });
    Conn c = gort::net::Dial("tcp", ln.Addr());
    accepted.Recv();
    char buf[8];
    c.SetReadDeadline(std::chrono::steady_clock::now() + 1ms);
    gort::net::Result<std::size_t> r = c.TryRead(buf, sizeof buf);
    ASSERT_FALSE(r.ok());
    ASSERT_NE(r.error(), nullptr);
    EXPECT_TRUE(r.error()->Timeout());
    EXPECT_THROW(r.value(), gort::net::Error);
    c.SetReadDeadline({});
    gort::net::Result<std::size_t> w = s.TryWrite("hi", 2);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(*w, 2u);
    s.CloseWrite();
    std::size_t n = ReadFull(c, buf, 2);
    EXPECT_EQ(std::string(buf, n), "hi");
    r = c.TryRead(buf, sizeof buf);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), 0u);  // EOF: no error, as Go's io.EOF is a value
    c.Close();
    w = c.TryWrite("x", 1);
    ASSERT_FALSE(w.ok());
    EXPECT_TRUE(w.error()->Closed());
    ln.Close();
    gort::net::Result<Conn> a = ln.TryAccept();
    ASSERT_FALSE(a);
    EXPECT_TRUE(a.error()->Closed());
  });
}

}  // namespace
