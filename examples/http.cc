// examples/http.cc: a minimal HTTP/1.1 keep-alive server on gort::net, one
// goroutine per connection, as a Go server on package net would be written
// (its twin: benchmarks/go/httpserve.go, `gortbench-go -serve=http`).
//
// Requests are parsed from a buffer and answered in order, so pipelined
// requests work; bodies come with Content-Length (chunked bodies get 501).
// A request's header over 8 KiB gets 431, a malformed one 400, a body over
// 1 MiB 413. Each request must arrive within the read timeout of the server
// starting to wait for it, which cuts off slowloris clients; responses must
// be taken within the same time. SIGINT, SIGTERM or --shutdown-after end the
// server gracefully (a Context is cancelled): the listener closes, idle
// connections are closed, busy ones finish their request, and connections
// still open after the grace period are closed.
//
//   gort-example-http [--addr=127.0.0.1:8080] [--read-timeout-ms=10000]
//                     [--grace-ms=5000] [--shutdown-after-ms=0]
//
// GOMAXPROCS comes from the environment. Paths: "/" answers
// "Hello, World!\n", "/echo" the request's body, "/debug" the goroutine,
// thread and connection counts (what scripts/soak.sh checks); others 404.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "gort/gort.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHeaderBytes = 8 << 10;
constexpr std::size_t kMaxBodyBytes = 1 << 20;
constexpr std::size_t kReadChunk = 16 << 10;

struct Options {
  std::string addr = "127.0.0.1:8080";
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds grace{5000};
  std::chrono::milliseconds shutdown_after{0};  // 0: only on a signal.
};

// One accepted connection, registered with the server for shutdown.
struct ConnState {
  gort::net::Conn c;
  std::atomic<bool> idle{false};  // Waiting for a request's first byte.
};

struct Server {
  Options opt;
  std::atomic<bool> shutting{false};
  std::atomic<std::int64_t> accepted{0};
  gort::WaitGroup wg;  // The accept loop and every connection.
  gort::Mutex mu;
  std::unordered_set<ConnState*> conns;  // Guarded by mu.
};

// ---- Parsing -------------------------------------------------------------

enum class Parse {
  kNeedMore,
  kOk,
  kBad,
  kHeaderTooLarge,
  kBodyTooLarge,
  kUnsupported
};

struct Request {
  std::string_view method, target;
  bool keep_alive = true;
  std::size_t header_len = 0;  // Through the blank line.
  std::size_t body_len = 0;
};

// Whether a and b are equal, ignoring ASCII case.
bool EqualFold(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

// Whether the comma-separated list v holds token (a Connection header).
bool HasToken(std::string_view v, std::string_view token) {
  while (!v.empty()) {
    std::size_t comma = v.find(',');
    std::string_view t = v.substr(0, comma);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t'))
      t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t'))
      t.remove_suffix(1);
    if (EqualFold(t, token)) return true;
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  return false;
}

// Parses "METHOD SP TARGET SP HTTP/1.x" into r.
bool ParseRequestLine(std::string_view line, Request* r, bool* http10) {
  std::size_t sp1 = line.find(' ');
  if (sp1 == 0 || sp1 == std::string_view::npos) return false;
  std::size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1) return false;
  r->method = line.substr(0, sp1);
  r->target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (version == "HTTP/1.1") {
    *http10 = false;
  } else if (version == "HTTP/1.0") {
    *http10 = true;
  } else {
    return false;
  }
  for (char ch : r->method) {
    if (ch <= ' ' || ch >= 0x7f) return false;
  }
  return true;
}

// Applies one "Name: value" header line to r.
Parse ParseHeader(std::string_view line, Request* r, bool http10,
                  bool* seen_length) {
  std::size_t colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos) return Parse::kBad;
  std::string_view name = line.substr(0, colon);
  if (name.find_first_of(" \t") != std::string_view::npos) return Parse::kBad;
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
    value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
    value.remove_suffix(1);
  if (EqualFold(name, "content-length")) {
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(value.begin(), value.end(), n);
    if (ec != std::errc() || end != value.end() || value.empty())
      return Parse::kBad;
    if (*seen_length && n != r->body_len) return Parse::kBad;
    if (n > kMaxBodyBytes) return Parse::kBodyTooLarge;
    r->body_len = n;
    *seen_length = true;
  } else if (EqualFold(name, "transfer-encoding")) {
    return Parse::kUnsupported;
  } else if (EqualFold(name, "connection")) {
    if (HasToken(value, "close")) r->keep_alive = false;
    if (http10 && HasToken(value, "keep-alive")) r->keep_alive = true;
  }
  return Parse::kOk;
}

// Parses the request at the start of buf (its header, not its body).
Parse ParseRequest(std::string_view buf, Request* r) {
  std::size_t end = buf.substr(0, kMaxHeaderBytes + 4).find("\r\n\r\n");
  if (end == std::string_view::npos) {
    return buf.size() >= kMaxHeaderBytes + 4 ? Parse::kHeaderTooLarge
                                             : Parse::kNeedMore;
  }
  *r = Request{};
  r->header_len = end + 4;
  std::string_view head = buf.substr(0, end + 2);
  std::size_t eol = head.find("\r\n");
  bool http10 = false;
  if (!ParseRequestLine(head.substr(0, eol), r, &http10)) return Parse::kBad;
  r->keep_alive = !http10;
  bool seen_length = false;
  for (head.remove_prefix(eol + 2); !head.empty();
       head.remove_prefix(eol + 2)) {
    eol = head.find("\r\n");
    Parse p = ParseHeader(head.substr(0, eol), r, http10, &seen_length);
    if (p != Parse::kOk) return p;
  }
  return Parse::kOk;
}

// ---- Responses -------------------------------------------------------------

// Appends a response with body to out.
void AppendResponse(std::string* out, std::string_view status,
                    std::string_view body, bool keep_alive, bool http10) {
  char len[24];
  auto res = std::to_chars(len, len + sizeof len, body.size());
  out->append("HTTP/1.1 ").append(status);
  out->append(
      "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ");
  out->append(len, res.ptr);
  if (!keep_alive) {
    out->append("\r\nConnection: close");
  } else if (http10) {
    out->append("\r\nConnection: keep-alive");
  }
  out->append("\r\n\r\n").append(body);
}

// The text /debug answers: what scripts/soak.sh compares with its baseline.
std::string DebugText(Server* s) {
  gort::Stats st = gort::ReadStats();
  std::size_t open;
  {
    std::lock_guard<gort::Mutex> l(s->mu);
    open = s->conns.size();
  }
  return "goroutines " + std::to_string(st.goroutines) + "\nthreads " +
         std::to_string(st.threads) + "\nconnections " + std::to_string(open) +
         "\naccepted " + std::to_string(s->accepted.load()) + "\n";
}

// Answers one complete request (header and body) into out.
void Handle(Server* s, const Request& r, std::string_view body, bool http10,
            std::string* out) {
  std::string_view path = r.target.substr(0, r.target.find('?'));
  if (path == "/") {
    AppendResponse(out, "200 OK", "Hello, World!\n", r.keep_alive, http10);
  } else if (path == "/echo") {
    AppendResponse(out, "200 OK", body, r.keep_alive, http10);
  } else if (path == "/debug") {
    AppendResponse(out, "200 OK", DebugText(s), r.keep_alive, http10);
  } else {
    AppendResponse(out, "404 Not Found", "404 page not found\n", r.keep_alive,
                   http10);
  }
}

// The status line answering a request that could not be parsed.
std::string_view ErrorStatus(Parse p) {
  switch (p) {
    case Parse::kHeaderTooLarge:
      return "431 Request Header Fields Too Large";
    case Parse::kBodyTooLarge:
      return "413 Request Entity Too Large";
    case Parse::kUnsupported:
      return "501 Not Implemented";
    default:
      return "400 Bad Request";
  }
}

// ---- Connections -----------------------------------------------------------

// A connection's input: bytes read but not yet consumed are [lo, hi).
struct InBuf {
  std::vector<char> b = std::vector<char>(kReadChunk);
  std::size_t lo = 0, hi = 0;
  std::string_view view() const { return {b.data() + lo, hi - lo}; }
};

// Reads more bytes into in; false on EOF. Throws gort::net::Error.
bool Fill(gort::net::Conn& c, InBuf* in) {
  if (in->lo > 0) {
    std::memmove(in->b.data(), in->b.data() + in->lo, in->hi - in->lo);
    in->hi -= in->lo;
    in->lo = 0;
  }
  if (in->hi == in->b.size()) in->b.resize(in->b.size() * 2);
  std::size_t n = c.Read(in->b.data() + in->hi, in->b.size() - in->hi);
  in->hi += n;
  return n > 0;
}

// Writes out (if anything is in it) within the server's timeout.
void Flush(Server* s, gort::net::Conn& c, std::string* out) {
  if (out->empty()) return;
  c.SetWriteDeadline(Clock::now() + s->opt.read_timeout);
  c.Write(out->data(), out->size());
  out->clear();
}

// After an error response: stop writing and drain what the client still
// sends for a moment, so that closing does not reset the connection before
// the client has read the response (Go's closeWriteAndWait).
void CloseWriteAndDrain(gort::net::Conn& c) {
  c.CloseWrite();
  c.SetReadDeadline(Clock::now() + std::chrono::milliseconds(500));
  char sink[4096];
  for (std::size_t total = 0; total < (256 << 10);) {
    std::size_t n = c.Read(sink, sizeof sink);
    if (n == 0) break;
    total += n;
  }
}

// Marks st idle (between requests) and reports whether to go on serving.
// The read deadline is set first, so that a shutdown that sees the
// connection idle moves the deadline after this one.
bool EnterIdle(Server* s, ConnState* st) {
  st->c.SetReadDeadline(Clock::now() + s->opt.read_timeout);
  st->idle.store(true);
  return !s->shutting.load();
}

// Serves requests on st until the client closes, an error, or shutdown.
void ServeRequests(Server* s, ConnState* st) {
  InBuf in;
  std::string out;
  for (;;) {
    Request r;
    Parse p = ParseRequest(in.view(), &r);
    if (p == Parse::kOk && in.hi - in.lo >= r.header_len + r.body_len) {
      bool http10 = in.view().substr(0, r.header_len).find("HTTP/1.0\r\n") !=
                    std::string_view::npos;
      Handle(s, r, in.view().substr(r.header_len, r.body_len), http10, &out);
      in.lo += r.header_len + r.body_len;
      if (!r.keep_alive) return Flush(s, st->c, &out);
      continue;
    }
    if (p != Parse::kOk && p != Parse::kNeedMore) {
      AppendResponse(&out, ErrorStatus(p), "", false, false);
      Flush(s, st->c, &out);
      return CloseWriteAndDrain(st->c);
    }
    Flush(s, st->c, &out);  // Everything complete is answered: write it.
    if (in.lo == in.hi) {
      in.lo = in.hi = 0;
      if (!EnterIdle(s, st)) return;
    }
    if (!Fill(st->c, &in)) return;
    st->idle.store(false);
  }
}

// One connection's goroutine: registered for shutdown, served, closed.
void ServeConn(Server* s, gort::net::Conn c) {
  ConnState st;
  st.c = std::move(c);
  {
    std::lock_guard<gort::Mutex> l(s->mu);
    s->conns.insert(&st);
  }
  try {
    ServeRequests(s, &st);
  } catch (const gort::net::Error&) {
    // Resets, timeouts (slowloris) and shutdown end the connection quietly,
    // as in Go's net/http.
  }
  std::lock_guard<gort::Mutex> l(s->mu);
  s->conns.erase(&st);
}

// Accepts until the listener is closed, a goroutine per connection.
void AcceptLoop(Server* s, gort::net::Listener* ln) {
  for (;;) {
    gort::net::Result<gort::net::Conn> c = ln->TryAccept();
    if (!c) {
      if (c.error()->Closed()) return;
      // EMFILE and the like: back off and retry, as Go's net/http does.
      std::fprintf(stderr, "http: accept: %s\n", c.error()->what());
      gort::Sleep(std::chrono::milliseconds(5));
      continue;
    }
    s->accepted.fetch_add(1, std::memory_order_relaxed);
    s->wg.Go([s, c = std::move(*c)]() mutable { ServeConn(s, std::move(c)); });
  }
}

// ---- Shutdown --------------------------------------------------------------

int signal_pipe[2] = {-1, -1};

// SIGINT/SIGTERM handler: one byte into the pipe the watcher reads.
void OnSignal(int) {
  char b = 1;
  [[maybe_unused]] ssize_t r = write(signal_pipe[1], &b, 1);
}

// Installs OnSignal for SIGINT and SIGTERM.
void InstallSignalHandlers() {
  if (pipe(signal_pipe) != 0) std::abort();
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Closes idle connections now; busy ones close after their request.
void NudgeIdle(Server* s) {
  std::lock_guard<gort::Mutex> l(s->mu);
  for (ConnState* st : s->conns) {
    if (st->idle.load()) st->c.SetReadDeadline(Clock::now());
  }
}

// Closes every connection still open (the grace period is over).
void CloseAll(Server* s) {
  std::lock_guard<gort::Mutex> l(s->mu);
  for (ConnState* st : s->conns) st->c.Close();
}

// Waits for every connection to end, at most the grace period.
bool WaitGrace(Server* s) {
  gort::Chan<std::monostate> done = gort::MakeChan<std::monostate>(0);
  gort::Go([s, done] {
    s->wg.Wait();
    done.Close();
  });
  gort::Chan<std::int64_t> timeout = gort::After(s->opt.grace);
  return gort::Select(gort::RecvCase(done), gort::RecvCase(timeout)) == 0;
}

// Shuts the server down gracefully once ctx is done.
void Shutdown(Server* s, const gort::Context& ctx, gort::net::Listener* ln) {
  ctx.Done().Recv();
  std::printf("http: shutting down (%s)\n",
              gort::ContextErrorString(ctx.Err()));
  std::fflush(stdout);
  ln->Close();
  s->shutting.store(true);
  NudgeIdle(s);
  if (!WaitGrace(s)) {
    CloseAll(s);
    s->wg.Wait();
  }
  std::printf("http: shut down after %lld connections\n",
              static_cast<long long>(s->accepted.load()));
}

// Parses --name=value flags into opt; false on a bad one.
bool ParseFlags(int argc, char** argv, Options* opt) {
  for (int i = 1; i < argc; i++) {
    std::string_view a = argv[i];
    std::size_t eq = a.find('=');
    std::string_view name = a.substr(0, eq);
    std::string value(eq == std::string_view::npos ? "" : a.substr(eq + 1));
    if (eq == std::string_view::npos) return false;
    if (name == "--addr") {
      opt->addr = value;
    } else if (name == "--read-timeout-ms") {
      opt->read_timeout = std::chrono::milliseconds(std::atoll(value.c_str()));
    } else if (name == "--grace-ms") {
      opt->grace = std::chrono::milliseconds(std::atoll(value.c_str()));
    } else if (name == "--shutdown-after-ms") {
      opt->shutdown_after =
          std::chrono::milliseconds(std::atoll(value.c_str()));
    } else {
      return false;
    }
  }
  return opt->read_timeout.count() > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Server s;
  if (!ParseFlags(argc, argv, &s.opt)) {
    std::fprintf(stderr,
                 "usage: %s [--addr=host:port] [--read-timeout-ms=N] "
                 "[--grace-ms=N] [--shutdown-after-ms=N]\n",
                 argv[0]);
    return 2;
  }
  InstallSignalHandlers();
  gort::Run([&s] {
    gort::net::Listener ln = gort::net::Listen("tcp", s.opt.addr);
    // Cancelled by a signal or, with --shutdown-after-ms, by its deadline.
    std::pair<gort::Context, gort::CancelFunc> cc =
        s.opt.shutdown_after.count() > 0
            ? gort::WithTimeout(gort::Background(), s.opt.shutdown_after)
            : gort::WithCancel(gort::Background());
    gort::Context ctx = cc.first;
    gort::CancelFunc cancel = cc.second;
    // The signal pipe, read on the poller: a signal cancels ctx.
    gort::poll::FD sig(signal_pipe[0]);
    gort::Go([&sig, cancel] {
      char b;
      try {
        if (sig.Read(&b, 1) == 1) cancel();
      } catch (const gort::net::Error&) {
      }
    });
    std::printf("http: listening on %s\n", ln.Addr().c_str());
    std::fflush(stdout);
    s.wg.Go([&s, &ln] { AcceptLoop(&s, &ln); });
    Shutdown(&s, ctx, &ln);
    cancel();
    sig.Close();
  });
  return 0;
}
