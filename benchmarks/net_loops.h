// benchmarks/net_loops.h: the network poller's benchmarks, with
// Go twins in benchmarks/go/net.go: TCP ping-pong over loopback on one
// connection and on 100 at once, streaming 1 MiB blocks, and
// ChanToNetpollPing, ping_loops.h's ChanToSyscallPing with the event read
// through gort::poll::FD (parked on the poller) instead of a syscall.
//
// Each function runs its loop `n` times from a goroutine (the main function
// given to gort::Run); every byte that comes back is checked, and a failure
// prints a message and aborts, so tests may run them as correctness checks.
// Setup (listen, dial) is inside the timed loop, as in the Go twins; with
// the benchmark's n it is a small share.
#ifndef GORT_BENCHMARKS_NET_LOOPS_H_
#define GORT_BENCHMARKS_NET_LOOPS_H_

#include <sys/eventfd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include "benchmarks/loops_fail.h"
#include "gort/chan.h"
#include "gort/net.h"
#include "gort/poll.h"
#include "gort/runtime.h"
#include "gort/sync.h"

namespace gort::bench {

namespace net_internal {

// Prints "net_loops: <what>" and aborts.
[[noreturn]] inline void Fail(const char* what) {
  LoopsFail("net_loops", what);
}

// Reads exactly n bytes or aborts.
inline void ReadFull(gort::net::Conn& c, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  for (std::size_t got = 0; got < n;) {
    std::size_t k = c.Read(p + got, n - got);
    if (k == 0) Fail("unexpected EOF");
    got += k;
  }
}

// RoundTrips: n one-byte round trips on c, each echoed byte checked;
// failure is the message a wrong byte aborts with.
inline void RoundTrips(gort::net::Conn& c, std::int64_t n,
                       const char* failure) {
  for (std::int64_t i = 0; i < n; ++i) {
    char b = static_cast<char>(i), r = 0;
    c.Write(&b, 1);
    ReadFull(c, &r, 1);
    if (r != b) Fail(failure);
  }
}

// Echoes 1-byte messages back until EOF.
inline void EchoServer(gort::net::Conn c) {
  char b;
  while (c.Read(&b, 1) == 1) c.Write(&b, 1);
}

// Runs body with the error text on a gort::net::Error.
template <class F>
void OrFail(F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    Fail(e.what());
  }
}

}  // namespace net_internal

// TCPPingPong: one loopback connection; the client writes one byte and
// waits for its echo, n times (round-trip time per op).
inline void TCPPingPong(std::int64_t n) {
  net_internal::OrFail([n] {
    gort::net::Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    gort::Go([&ln] {
      net_internal::OrFail([&] { net_internal::EchoServer(ln.Accept()); });
    });
    gort::net::Conn c = gort::net::Dial("tcp", ln.Addr());
    net_internal::RoundTrips(c, n, "TCPPingPong: wrong byte echoed");
  });
}

// TCPPingPong100: 100 loopback connections ping-pong at once; n round trips
// in all (time per op is the inverse of round trips per second).
inline void TCPPingPong100(std::int64_t n) {
  constexpr int kConns = 100;
  net_internal::OrFail([n] {
    gort::net::Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    auto accepted = gort::MakeChan<int>(1);
    gort::Go([&ln, accepted]() mutable {
      net_internal::OrFail([&] {
        for (int i = 0; i < kConns; ++i) {
          gort::Go([c = ln.Accept()]() mutable {
            net_internal::OrFail(
                [&] { net_internal::EchoServer(std::move(c)); });
          });
        }
        accepted.Send(1);
      });
    });
    gort::WaitGroup wg;
    wg.Add(kConns);
    for (int k = 0; k < kConns; ++k) {
      std::int64_t mine = n / kConns + (k < n % kConns ? 1 : 0);
      gort::Go([&ln, &wg, mine] {
        net_internal::OrFail([&] {
          gort::net::Conn c = gort::net::Dial("tcp", ln.Addr());
          net_internal::RoundTrips(c, mine,
                                   "TCPPingPong100: wrong byte echoed");
        });
        wg.Done();
      });
    }
    wg.Wait();
    accepted.Recv();  // the listener stays open until all are accepted
  });
}

// TCPStream1MiB: n blocks of 1 MiB one way over one loopback connection;
// the reader acknowledges the total at the end (time per MiB).
inline void TCPStream1MiB(std::int64_t n) {
  constexpr std::size_t kBlock = 1 << 20;
  net_internal::OrFail([n] {
    gort::net::Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    gort::Go([&ln, n] {
      net_internal::OrFail([&] {
        gort::net::Conn s = ln.Accept();
        std::vector<char> buf(256 << 10);
        std::int64_t total = 0;
        while (std::size_t k = s.Read(buf.data(), buf.size())) {
          total += static_cast<std::int64_t>(k);
        }
        if (total != n * static_cast<std::int64_t>(kBlock)) {
          net_internal::Fail("TCPStream1MiB: wrong byte count");
        }
        s.Write(&total, sizeof total);
      });
    });
    gort::net::Conn c = gort::net::Dial("tcp", ln.Addr());
    std::vector<char> block(kBlock, 'x');
    for (std::int64_t i = 0; i < n; ++i) c.Write(block.data(), block.size());
    c.CloseWrite();
    std::int64_t ack = 0;
    net_internal::ReadFull(c, &ack, sizeof ack);
    if (ack != n * static_cast<std::int64_t>(kBlock)) {
      net_internal::Fail("TCPStream1MiB: wrong acknowledgement");
    }
  });
}

// ChanToNetpollPing: ChanToSyscallPing with the event (an eventfd) read
// through poll::FD: the waiting goroutine parks on the poller, not in a
// syscall, so no P handoff and no sysmon are involved.
inline void ChanToNetpollPing(std::int64_t n) {
  net_internal::OrFail([n] {
    int efd = eventfd(0, EFD_CLOEXEC);
    if (efd < 0) net_internal::Fail("eventfd failed");
    gort::poll::FD event(efd);
    auto ch = gort::MakeChan<int>();
    gort::Go([n, &event, ch] {
      net_internal::OrFail([&] {
        for (std::int64_t i = 0; i < n; ++i) {
          std::uint64_t v = 0;
          if (event.Read(&v, sizeof v) != sizeof v || v != 1) {
            net_internal::Fail("ChanToNetpollPing: event counter is not 1");
          }
          ch.Send(1);
        }
      });
    });
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint64_t one = 1;
      event.Write(&one, sizeof one);
      if (ch.Recv() != 1) {
        net_internal::Fail("ChanToNetpollPing: ch delivered a value != 1");
      }
    }
  });
}

}  // namespace gort::bench

#endif  // GORT_BENCHMARKS_NET_LOOPS_H_
