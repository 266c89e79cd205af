// tools/churn.cc: gort-churn, the badly behaved clients of scripts/soak.sh.
// For a while it keeps, in goroutines of its own, connections to an HTTP
// server (examples/http.cc or its Go twin) that
//   drop      connect and close at once, or after half a request;
//   reset     send half a request, or pipeline requests and never read the
//             answers, then close with SO_LINGER 0 (an RST, mid-request or
//             while the server writes: EPIPE/ECONNRESET on its side);
//   halfclose send a request and shut down writing; must get 200 and EOF;
//   oversize  send a header over 8 KiB; must get 431;
//   bad       send a malformed request; must get 400;
//   slowloris send a request a byte at a time; must be cut off by the
//             server's read deadline (within --cutoff-ms).
// It prints a count per kind and exits 1 if an answer was wrong or a
// slowloris was never cut off.
//
//   gort-churn --addr=127.0.0.1:8080 [--seconds=60] [--workers=4]
//              [--cutoff-ms=5000]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "gort/gort.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string addr = "127.0.0.1:8080";
  int seconds = 60;
  int workers = 4;  // Goroutines per kind.
  std::chrono::milliseconds cutoff{5000};
};

// What happened, per kind: tries, and answers that were not as expected.
struct Counts {
  std::atomic<long> n{0}, wrong{0}, dial_errors{0};
};

enum Kind { kDrop, kReset, kHalfClose, kOversize, kBad, kSlowloris, kKinds };
const char* const kNames[kKinds] = {"drop",     "reset", "halfclose",
                                    "oversize", "bad",   "slowloris"};

Options opt;
Counts counts[kKinds];

constexpr std::string_view kRequest = "GET / HTTP/1.1\r\nHost: churn\r\n\r\n";

// Reads until EOF, an error or max bytes; what arrived.
std::string ReadAll(gort::net::Conn& c, std::size_t max = 1 << 16) {
  std::string got;
  char buf[4096];
  try {
    while (got.size() < max) {
      std::size_t n = c.Read(buf, sizeof buf);
      if (n == 0) break;
      got.append(buf, n);
    }
  } catch (const gort::net::Error&) {
  }
  return got;
}

// Whether the reply starts with the status line of status.
bool HasStatus(const std::string& reply, std::string_view status) {
  return reply.rfind("HTTP/1.1 " + std::string(status), 0) == 0;
}

// Counts a wrong answer with what it was.
void Wrong(Kind k, const std::string& what) {
  if (counts[k].wrong.fetch_add(1) < 3) {
    std::fprintf(stderr, "churn: %s: %s\n", kNames[k], what.c_str());
  }
}

// Connects, closes at once or after half a request.
void Drop(int i) {
  gort::net::Conn c = gort::net::Dial("tcp", opt.addr);
  if (i % 2) c.Write(kRequest.data(), kRequest.size() / 2);
}

// Half a request, or requests never read, then an RST (SO_LINGER 0).
void Reset(int i) {
  gort::net::Conn c = gort::net::Dial("tcp", opt.addr);
  if (i % 2) {
    c.Write(kRequest.data(), kRequest.size() / 2);
  } else {
    // More answers than the socket buffers hold: the server blocks writing
    // them and the RST reaches it mid-write.
    std::string many;
    for (int j = 0; j < 4000; j++) many += kRequest;
    c.SetWriteDeadline(Clock::now() + std::chrono::milliseconds(300));
    try {
      c.Write(many.data(), many.size());
    } catch (const gort::net::Error& e) {
      if (!e.Timeout()) throw;
    }
  }
  c.SetLinger(0);
}

// A request, then shutdown(SHUT_WR): the answer and EOF must still come.
void HalfClose(int) {
  gort::net::Conn c = gort::net::Dial("tcp", opt.addr);
  c.SetDeadline(Clock::now() + std::chrono::seconds(30));
  c.Write(kRequest.data(), kRequest.size());
  c.CloseWrite();
  std::string reply = ReadAll(c);
  if (!HasStatus(reply, "200") ||
      reply.find("Hello, World!\n") == std::string::npos) {
    Wrong(kHalfClose, "reply " + reply.substr(0, 40));
  }
}

// A header over the server's 8 KiB limit: 431.
void Oversize(int) {
  gort::net::Conn c = gort::net::Dial("tcp", opt.addr);
  c.SetDeadline(Clock::now() + std::chrono::seconds(30));
  std::string req =
      "GET / HTTP/1.1\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n";
  try {
    c.Write(req.data(), req.size());
  } catch (const gort::net::Error&) {
    // The server may answer and close before all of it is written.
  }
  std::string reply = ReadAll(c);
  if (!HasStatus(reply, "431"))
    Wrong(kOversize, "reply " + reply.substr(0, 40));
}

// A malformed request line: 400.
void Bad(int) {
  gort::net::Conn c = gort::net::Dial("tcp", opt.addr);
  c.SetDeadline(Clock::now() + std::chrono::seconds(30));
  std::string_view req = "NONSENSE\r\n\r\n";
  c.Write(req.data(), req.size());
  std::string reply = ReadAll(c);
  if (!HasStatus(reply, "400")) Wrong(kBad, "reply " + reply.substr(0, 40));
}

// A request a byte every 100 ms: the server must cut it off in time.
void Slowloris(int) {
  gort::net::Conn c = gort::net::Dial("tcp", opt.addr);
  Clock::time_point start = Clock::now();
  try {
    for (std::size_t i = 0;; i = (i + 1) % (kRequest.size() - 4)) {
      c.Write(&kRequest[i], 1);
      gort::Sleep(std::chrono::milliseconds(100));
      if (Clock::now() - start > opt.cutoff) {
        return Wrong(kSlowloris, "not cut off in time");
      }
    }
  } catch (const gort::net::Error&) {
    // Cut off: the write failed once the server closed.
  }
}

using Behaviour = void (*)(int);
const Behaviour kBehaviours[kKinds] = {Drop,     Reset, HalfClose,
                                       Oversize, Bad,   Slowloris};

// One worker: kind k's behaviour again and again until the end.
void Worker(Kind k, Clock::time_point end) {
  for (int i = 0; Clock::now() < end; i++) {
    counts[k].n++;
    try {
      kBehaviours[k](i);
    } catch (const gort::net::Error& e) {
      // The server's listen queue can overflow under the churn; a refused
      // or reset dial is not the server's fault, an answer never is.
      if (counts[k].dial_errors.fetch_add(1) < 3) {
        std::fprintf(stderr, "churn: %s: %s\n", kNames[k], e.what());
      }
      gort::Sleep(std::chrono::milliseconds(10));
    }
  }
}

// Parses --name=value flags; false on a bad one.
bool ParseFlags(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::string_view a = argv[i];
    std::size_t eq = a.find('=');
    if (eq == std::string_view::npos) return false;
    std::string_view name = a.substr(0, eq);
    std::string value(a.substr(eq + 1));
    if (name == "--addr") {
      opt.addr = value;
    } else if (name == "--seconds") {
      opt.seconds = std::atoi(value.c_str());
    } else if (name == "--workers") {
      opt.workers = std::atoi(value.c_str());
    } else if (name == "--cutoff-ms") {
      opt.cutoff = std::chrono::milliseconds(std::atoi(value.c_str()));
    } else {
      return false;
    }
  }
  return opt.seconds > 0 && opt.workers > 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!ParseFlags(argc, argv)) {
    std::fprintf(stderr,
                 "usage: %s --addr=host:port [--seconds=N] [--workers=N] "
                 "[--cutoff-ms=N]\n",
                 argv[0]);
    return 2;
  }
  long wrong = 0;
  gort::Run([&wrong] {
    Clock::time_point end = Clock::now() + std::chrono::seconds(opt.seconds);
    gort::WaitGroup wg;
    for (int k = 0; k < kKinds; k++) {
      for (int w = 0; w < opt.workers; w++) {
        wg.Go([k, end] { Worker(static_cast<Kind>(k), end); });
      }
    }
    wg.Wait();
    for (int k = 0; k < kKinds; k++) {
      std::printf("churn: %-9s %7ld connections, %ld wrong, %ld errors\n",
                  kNames[k], counts[k].n.load(), counts[k].wrong.load(),
                  counts[k].dial_errors.load());
      wrong += counts[k].wrong.load();
    }
  });
  return wrong == 0 ? 0 : 1;
}
