// Tests of gort::net's datagram sockets, in the spirit of Go's
// net/udpsock_test.go and net/unixsock_test.go: ListenPacket with ReadFrom /
// WriteTo, a connected Dial("udp"), the sender's address as Conn spells it,
// empty and truncated datagrams, deadlines, Close waking a blocked ReadFrom,
// an ICMP port-unreachable reported once without poisoning the socket, and
// unixgram.
//
// "Blocked" is made certain without sleeping: at GOMAXPROCS 1 a goroutine
// that yields with Gosched lets every runnable goroutine run until it parks.
#include "test_os.h"  // first: Winsock before anything includes windows.h

#if !defined(_WIN32)
#include <unistd.h>
#endif

#include <chrono>
#include <string>
#include <system_error>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "net_test.h"
#include "watchdog.h"

namespace {

using namespace gort_net_test;

class UDPTest : public gort_test::WatchedTest {};

class UDPProcsTest : public gort_test::ProcsTest {};

INSTANTIATE_TEST_SUITE_P(Procs, UDPProcsTest, testing::Values(1, 2, 4),
                         gort_test::ProcsName);

// What f throws, or "no error".
template <class F>
std::string Msg(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Go's TestUDPServer (udpsock_test.go) in small: a packet server echoing
// to each sender, a connected client, and the addresses each side sees.
TEST_P(UDPProcsTest, EchoConnectedClient) {
  gort::Run(
      [] {
        PacketConn srv = gort::net::ListenPacket("udp", "127.0.0.1:0");
        std::string where = srv.LocalAddr();
        ASSERT_EQ(where.rfind("127.0.0.1:", 0), 0u) << where;
        ASSERT_NE(where, "127.0.0.1:0");
        gort::Chan<std::string> senders = gort::MakeChan<std::string>(100);
        gort::Go([&srv, senders]() mutable {
          char buf[1500];
          std::string from;
          for (int i = 0; i < 100; i++) {
            std::size_t n = srv.ReadFrom(buf, sizeof buf, &from);
            srv.WriteTo(buf, n, from);
            senders.Send(from);
          }
        });
        Conn c = gort::net::Dial("udp", where);
        EXPECT_EQ(c.RemoteAddr(), where);
        for (int i = 0; i < 100; i++) {
          std::string msg = "datagram " + std::to_string(i);
          EXPECT_EQ(c.Write(msg.data(), msg.size()), msg.size());
          std::string back(64, '\0');
          back.resize(c.Read(back.data(), back.size()));
          EXPECT_EQ(back, msg);
          EXPECT_EQ(senders.Recv(), c.LocalAddr());
        }
      },
      Opts());
}

// Two unconnected sockets: ReadFrom's sender is WriteTo's target.
TEST_F(UDPTest, ReadFromGivesTheSender) {
  gort::Run([] {
    PacketConn a = gort::net::ListenPacket("udp4", "127.0.0.1:0");
    PacketConn b = gort::net::ListenPacket("udp", "127.0.0.1:0");
    EXPECT_EQ(a.WriteTo("ping", 4, b.LocalAddr()), 4u);
    char buf[16];
    gort::net::Packet p = b.ReadFrom(buf, sizeof buf);
    EXPECT_EQ(std::string(buf, p.n), "ping");
    EXPECT_EQ(p.addr, a.LocalAddr());
    b.WriteTo("pong", 4, p.addr);
    p = a.ReadFrom(buf, sizeof buf);
    EXPECT_EQ(std::string(buf, p.n), "pong");
    EXPECT_EQ(p.addr, b.LocalAddr());
  });
}

// Go's TestUDPZeroBytePayload: an empty datagram (WriteTo of 0 bytes) is a
// packet of its own, read as 0 bytes by ReadFrom and by a datagram Conn's
// Read (not EOF, not skipped). (A 0-byte Conn::Write sends one on Linux and
// nothing on Windows, as Go's Write.)
TEST_F(UDPTest, ZeroBytePayload) {
  gort::Run([] {
    PacketConn srv = gort::net::ListenPacket("udp", "127.0.0.1:0");
    PacketConn cli = gort::net::ListenPacket("udp", "127.0.0.1:0");
    EXPECT_EQ(cli.WriteTo("", 0, srv.LocalAddr()), 0u);
    cli.WriteTo("after", 5, srv.LocalAddr());
    char buf[16];
    gort::net::Packet p = srv.ReadFrom(buf, sizeof buf);
    EXPECT_EQ(p.n, 0u);
    EXPECT_EQ(p.addr, cli.LocalAddr());
    p = srv.ReadFrom(buf, sizeof buf);
    EXPECT_EQ(std::string(buf, p.n), "after");
    Conn c = gort::net::Dial("udp", srv.LocalAddr());
    srv.WriteTo("", 0, c.LocalAddr());
    srv.WriteTo("next", 4, c.LocalAddr());
    EXPECT_EQ(c.Read(buf, sizeof buf), 0u);
    EXPECT_EQ(std::string(buf, c.Read(buf, sizeof buf)), "next");
  });
}

// A datagram longer than the buffer: the buffer's worth, the rest dropped,
// the next ReadFrom the next datagram (Go's ReadFrom on a UDP socket).
TEST_F(UDPTest, LongDatagramIsTruncated) {
  gort::Run([] {
    PacketConn a = gort::net::ListenPacket("udp", "127.0.0.1:0");
    PacketConn b = gort::net::ListenPacket("udp", "127.0.0.1:0");
    a.WriteTo("0123456789", 10, b.LocalAddr());
    a.WriteTo("next", 4, b.LocalAddr());
    char buf[4];
    EXPECT_EQ(b.ReadFrom(buf, 4).n, 4u);
    EXPECT_EQ(std::string(buf, 4), "0123");
    EXPECT_EQ(b.ReadFrom(buf, 4).n, 4u);
    EXPECT_EQ(std::string(buf, 4), "next");
  });
}

// Go's TestReadFromTimeout (timeout_test.go): a passed read deadline fails
// ReadFrom with a Timeout() error in Go's words; cleared, it reads again.
TEST_F(UDPTest, ReadDeadline) {
  gort::Run([] {
    PacketConn c = gort::net::ListenPacket("udp", "127.0.0.1:0");
    c.SetReadDeadline(Clock::now() - 1s);
    char buf[8];
    try {
      c.ReadFrom(buf, sizeof buf);
      ADD_FAILURE() << "ReadFrom past its deadline returned";
    } catch (const Error& e) {
      EXPECT_TRUE(e.Timeout());
      EXPECT_EQ(e.code(), std::errc::timed_out);
      EXPECT_EQ(std::string(e.what()),
                "read udp " + c.LocalAddr() + ": i/o timeout");
    }
    auto start = Clock::now();
    c.SetReadDeadline(start + 30ms);
    EXPECT_THROW(c.ReadFrom(buf, sizeof buf), Error);
    EXPECT_GE(Clock::now() - start, 30ms);
    c.SetReadDeadline({});
    c.WriteTo("x", 1, c.LocalAddr());
    EXPECT_EQ(c.ReadFrom(buf, sizeof buf).n, 1u);
    c.SetWriteDeadline(Clock::now() - 1s);
    EXPECT_THROW(c.WriteTo("x", 1, c.LocalAddr()), Error);
  });
}

// Close wakes a goroutine parked in ReadFrom with a Closed() error; calls
// after Close fail the same way.
TEST_F(UDPTest, CloseWakesReadFrom) {
  gort::Run(
      [] {
        PacketConn c = gort::net::ListenPacket("udp", "127.0.0.1:0");
        gort::Chan<std::string> got = gort::MakeChan<std::string>(1);
        gort::Go([&c, got]() mutable {
          char buf[8];
          try {
            c.ReadFrom(buf, sizeof buf);
            got.Send("returned");
          } catch (const Error& e) {
            got.Send(e.Closed() ? "closed" : e.what());
          }
        });
        LetOthersPark();
        c.Close();
        EXPECT_EQ(got.Recv(), "closed");
        EXPECT_EQ(Msg([&] { c.WriteTo("x", 1, "127.0.0.1:9"); }),
                  "write udp " + c.LocalAddr() +
                      "->127.0.0.1:9: use of closed network connection");
      },
      gort::Options{.maxprocs = 1});
}

// Go's messages for a bad WriteTo and for an empty PacketConn.
TEST_F(UDPTest, Errors) {
  gort::Run([] {
    PacketConn c = gort::net::ListenPacket("udp", "127.0.0.1:0");
    EXPECT_EQ(Msg([&] { c.WriteTo("x", 1, "127.0.0.1"); }),
              "write udp: address 127.0.0.1: missing port in address");
#if !defined(_WIN32)
    // Go: "write udp 127.0.0.1:p->127.0.0.1:0: sendto: invalid argument".
    EXPECT_EQ(Msg([&] { c.WriteTo("x", 1, "127.0.0.1:0"); }),
              "write udp " + c.LocalAddr() +
                  "->127.0.0.1:0: sendto: invalid argument");
#endif
    PacketConn empty;
    EXPECT_FALSE(empty.Valid());
    char buf[1];
    EXPECT_EQ(Msg([&] { empty.ReadFrom(buf, 1); }),
              "read: invalid argument (empty net::PacketConn)");
    PacketConn moved = std::move(c);
    EXPECT_FALSE(c.Valid());  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(moved.Valid());
  });
}

// One ICMP port-unreachable must not poison the socket. A
// connected UDP Conn writing to a closed port gets ECONNREFUSED once (on the
// next call after the ICMP arrives); then the same socket works again once
// something listens there. Windows: Go turns the report off
// (SIO_UDP_CONNRESET), so the read just waits for the reply.
TEST_P(UDPProcsTest, PortUnreachableOnceThenWorks) {
  gort::Run(
      [] {
        std::string where;
        {
          PacketConn probe = gort::net::ListenPacket("udp", "127.0.0.1:0");
          where = probe.LocalAddr();
        }  // closed: nothing listens on `where` now
        Conn c = gort::net::Dial("udp", where);
        c.Write("lost", 4);
        char buf[16];
#if !defined(_WIN32)
        try {
          c.Read(buf, sizeof buf);  // parks until the ICMP error arrives
          ADD_FAILURE() << "Read after a port-unreachable returned";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), std::errc::connection_refused) << e.what();
          EXPECT_FALSE(e.Closed()) << e.what();
          EXPECT_EQ(std::string(e.what()), "read udp " + c.LocalAddr() + "->" +
                                               where +
                                               ": read: connection refused");
        }
#endif
        PacketConn srv = gort::net::ListenPacket("udp", where);
        c.Write("found", 5);
        gort::net::Packet p = srv.ReadFrom(buf, sizeof buf);
        EXPECT_EQ(std::string(buf, p.n), "found");
        srv.WriteTo("reply", 5, p.addr);
        EXPECT_EQ(std::string(buf, c.Read(buf, sizeof buf)), "reply");
        c.Write("again", 5);
        EXPECT_EQ(srv.ReadFrom(buf, sizeof buf).n, 5u);
      },
      Opts());
}

TEST_F(UDPTest, UDP6) {
  std::string noIPv6;
  gort::Run([&noIPv6] {
    PacketConn c;
    try {
      c = gort::net::ListenPacket("udp6", "[::1]:0");
    } catch (const Error& e) {
      noIPv6 = e.what();  // no IPv6 loopback on this machine
      return;
    }
    EXPECT_EQ(c.LocalAddr().rfind("[::1]:", 0), 0u) << c.LocalAddr();
    Conn d = gort::net::Dial("udp6", c.LocalAddr());
    d.Write("six", 3);
    char buf[8];
    gort::net::Packet p = c.ReadFrom(buf, sizeof buf);
    EXPECT_EQ(std::string(buf, p.n), "six");
    EXPECT_EQ(p.addr, d.LocalAddr());
  });
  if (!noIPv6.empty()) GTEST_SKIP() << noIPv6;
}

#if !defined(_WIN32)
std::string TempPath(const char* name) {
  std::string path =
      "/tmp/gort_udp_test_" + std::to_string(getpid()) + "_" + name + ".sock";
  unlink(path.c_str());
  return path;
}

// Go's TestUnixgramServer in small: two bound unixgram sockets exchange
// packets by path; a Dial'ed (unbound) one's packets come from "".
TEST_F(UDPTest, Unixgram) {
  std::string pa = TempPath("a"), pb = TempPath("b");
  gort::Run([&] {
    PacketConn a = gort::net::ListenPacket("unixgram", pa);
    PacketConn b = gort::net::ListenPacket("unixgram", pb);
    EXPECT_EQ(a.LocalAddr(), pa);
    a.WriteTo("hi", 2, pb);
    char buf[8];
    gort::net::Packet p = b.ReadFrom(buf, sizeof buf);
    EXPECT_EQ(std::string(buf, p.n), "hi");
    EXPECT_EQ(p.addr, pa);
    Conn c = gort::net::Dial("unixgram", pb);
    EXPECT_EQ(c.RemoteAddr(), pb);
    c.Write("anon", 4);
    p = b.ReadFrom(buf, sizeof buf);
    EXPECT_EQ(std::string(buf, p.n), "anon");
    EXPECT_EQ(p.addr, "");
    a.Close();
  });
  // Go removes a unix Listener's file, not a unixgram socket's.
  EXPECT_EQ(access(pa.c_str(), F_OK), 0);
  unlink(pa.c_str());
  unlink(pb.c_str());
}

TEST_F(UDPTest, UnixgramAbstract) {
  std::string name = "@gort_udp_test_" + std::to_string(getpid());
  gort::Run([&] {
    PacketConn a = gort::net::ListenPacket("unixgram", name);
    EXPECT_EQ(a.LocalAddr(), name);
    Conn c = gort::net::Dial("unixgram", name);
    c.Write("abs", 3);
    char buf[8];
    EXPECT_EQ(std::string(buf, a.ReadFrom(buf, sizeof buf).n), "abs");
  });
}
#endif

}  // namespace
