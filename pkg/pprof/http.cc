// pkg/pprof/http.cc: the /debug/pprof endpoints (Go's net/http/pprof:
// Index, Profile, Trace and Handler(name)), served by a goroutine on
// gort::net with a minimal HTTP/1.1 server of its own: one request per
// connection (a request line and headers, no body), answered with a
// Content-Length and closed. examples/http.cc's parser is the example's own
// (keep-alive, pipelining, bodies, timeouts) and is not shared.
//
// Answers follow net/http/pprof: an unknown profile is 404 "Unknown
// profile"; a CPU profile or trace that cannot start (one is running) is
// 500 "Could not enable CPU profiling: ..." / "Could not enable tracing:
// ..."; a duration at or over the server's write timeout (kWriteTimeout) is
// 400 "profile duration exceeds server's WriteTimeout". Where gort differs:
// a `seconds` that is present but not a positive integer (a positive number,
// for trace) is 400 with the text Go gives for delta profiles, where Go's
// Profile and Trace quietly use their defaults (30 s, 1 s); `seconds` on the
// other profiles (delta profiles in Go) is 400 "not supported". While a CPU
// profile or trace is collected, the handler waits in a read of the
// connection, so a client that disconnects (EOF or reset) ends the
// collection at once (as net/http/pprof's sleep on the request's context).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "gort/gort.h"
#include "gort/net.h"
#include "gort/pprof.h"
#include "gort/trace.h"

namespace gort::pprof {

namespace {

constexpr std::size_t kMaxHeader = 8 << 10;
constexpr std::int64_t kWriteTimeout = 300;  // seconds, as a WriteTimeout

// request: what the handlers need of one.
struct request {
  std::string path;
  std::string query;
};

// response: the status and body to send, and headers beyond the usual.
struct response {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string extra;  // "Name: value\r\n" lines
  std::string body;
};

const char* statusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Internal Server Error";
  }
}

// serveError mirrors net/http/pprof's serveError (net/http/pprof/pprof.go:109).
response serveError(int status, const std::string& txt) {
  response r;
  r.status = status;
  r.extra = "X-Go-Pprof: 1\r\n";
  r.body = txt + "\n";
  return r;
}

// formValue: the value of key in query ("" if absent, as Go's FormValue
// (net/http/request.go:1364)), and whether it was there.
std::string formValue(const std::string& query, std::string_view key,
                      bool* present = nullptr) {
  if (present != nullptr) *present = false;
  std::string_view q = query;
  while (!q.empty()) {
    std::string_view kv = q.substr(0, q.find('&'));
    q.remove_prefix(kv.size() < q.size() ? kv.size() + 1 : kv.size());
    std::string_view k = kv.substr(0, kv.find('='));
    if (k != key) continue;
    if (present != nullptr) *present = true;
    return k.size() < kv.size() ? std::string(kv.substr(k.size() + 1)) : "";
  }
  return "";
}

// parseSeconds: seconds from s, a positive integer (or number, if
// fractional); false if it is not one.
bool parseSeconds(const std::string& s, bool fractional, double* out) {
  if (s.empty() || s.size() > 20) return false;
  std::size_t used = 0;
  try {
    *out = fractional ? std::stod(s, &used)
                      : static_cast<double>(std::stoll(s, &used));
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size() && *out > 0;
}

// seconds: the collection's duration from the request, or an error answer.
bool seconds(const request& req, bool fractional, double def, double* sec,
             response* err) {
  bool present = false;
  std::string s = formValue(req.query, "seconds", &present);
  *sec = def;
  if (present && !parseSeconds(s, fractional, sec)) {
    *err = serveError(400, fractional
                               ? "invalid value for \"seconds\" - must be a "
                                 "positive number"
                               : "invalid value for \"seconds\" - must be a "
                                 "positive integer");
    return false;
  }
  if (*sec >= static_cast<double>(kWriteTimeout)) {
    *err = serveError(400, "profile duration exceeds server's WriteTimeout");
    return false;
  }
  return true;
}

// waitOrHangup mirrors net/http/pprof's sleep (net/http/pprof/pprof.go:98):
// waits sec seconds, or until the client closes the connection (false then).
// Not inlined: tests look for it in the goroutine dump.
[[gnu::noinline]] bool waitOrHangup(net::Conn& c, double sec) {
  auto end = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::duration<double>(sec));
  c.SetReadDeadline(end);
  char buf[512];
  for (;;) {
    auto r = c.TryRead(buf, sizeof buf);
    if (r.ok() && *r == 0) return false;  // EOF: the client left
    if (r.ok()) continue;                 // more bytes: ignored
    c.SetReadDeadline({});
    return r.error()->Timeout();  // else reset: left as well
  }
}

// profile mirrors net/http/pprof's Profile (net/http/pprof/pprof.go:120).
response profile(const request& req, net::Conn& c, bool* hangup) {
  response r;
  double sec = 0;
  if (!seconds(req, false, 30, &sec, &r)) return r;
  std::ostringstream out;
  std::string why;
  if (!StartCPUProfile(out, &why)) {
    return serveError(500, "Could not enable CPU profiling: " + why);
  }
  *hangup = !waitOrHangup(c, sec);
  StopCPUProfile();
  r.contentType = "application/octet-stream";
  r.extra = "Content-Disposition: attachment; filename=\"profile\"\r\n";
  r.body = out.str();
  return r;
}

// readFile: path's bytes (a blocking read, off the P).
std::string readFile(const std::string& path) {
  return Syscall([&path] {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  });
}

// trace mirrors net/http/pprof's Trace (net/http/pprof/pprof.go:147): gort's
// StartTrace writes a file, so the trace goes through a temporary one.
response trace(const request& req, net::Conn& c, bool* hangup) {
  response r;
  double sec = 0;
  if (!seconds(req, true, 1, &sec, &r)) return r;
  static std::atomic<int> seq{0};
  std::string path = (std::filesystem::temp_directory_path() /
                      ("gort-pprof-trace-" + std::to_string(Nanotime()) + "-" +
                       std::to_string(seq.fetch_add(1))))
                         .string();
  if (!StartTrace(path)) {
    return serveError(500,
                      "Could not enable tracing: tracing is already enabled");
  }
  *hangup = !waitOrHangup(c, sec);
  bool ok = StopTrace();
  r.body = readFile(path);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (!ok) return serveError(500, "Could not write the trace");
  r.contentType = "application/octet-stream";
  r.extra = "Content-Disposition: attachment; filename=\"trace\"\r\n";
  return r;
}

constexpr const char* kProfiles[] = {"block", "goroutine", "mutex",
                                     "threadcreate"};

// index mirrors net/http/pprof's Index page (net/http/pprof/pprof.go:365), with
// the profiles gort has.
response index() {
  response r;
  r.contentType = "text/html; charset=utf-8";
  r.body =
      "<html>\n<head>\n<title>/debug/pprof/</title>\n</head>\n<body>\n"
      "/debug/pprof/<br>\n<br>\nTypes of profiles available:\n<table>\n"
      "<thead><td>Profile</td></thead>\n";
  for (const char* p : kProfiles) {
    r.body += std::string("<tr><td><a href='") + p + "?debug=1'>" + p +
              "</a></td></tr>\n";
  }
  r.body +=
      "<tr><td><a href='profile'>profile</a></td></tr>\n"
      "<tr><td><a href='trace'>trace</a></td></tr>\n"
      "</table>\n<a href=\"goroutine?debug=2\">full goroutine stack dump</a>\n"
      "</body>\n</html>\n";
  return r;
}

// named mirrors net/http/pprof's handler.ServeHTTP
// (net/http/pprof/pprof.go:230) for the profiles WriteProfile writes.
response named(const std::string& name, const request& req) {
  bool known = false;
  for (const char* p : kProfiles) known |= name == p;
  if (!known) return serveError(404, "Unknown profile");
  bool present = false;
  formValue(req.query, "seconds", &present);
  if (present) {
    return serveError(
        400, "\"seconds\" parameter is not supported for this profile type");
  }
  int debug = std::atoi(formValue(req.query, "debug").c_str());
  response r;
  std::ostringstream out;
  WriteProfile(name, out, debug);
  r.body = out.str();
  if (debug == 0) {
    r.contentType = "application/octet-stream";
    r.extra = "Content-Disposition: attachment; filename=\"" + name + "\"\r\n";
  }
  return r;
}

// route: the answer to req (hangup set if the client left meanwhile).
response route(const request& req, net::Conn& c, bool* hangup) {
  constexpr std::string_view kPrefix = "/debug/pprof/";
  if (req.path.rfind(kPrefix, 0) != 0) {
    response r;
    r.status = 404;
    r.body = "404 page not found\n";
    return r;
  }
  std::string name = req.path.substr(kPrefix.size());
  if (name.empty()) return index();
  if (name == "profile") return profile(req, c, hangup);
  if (name == "trace") return trace(req, c, hangup);
  return named(name, req);
}

// readRequest reads the request line and headers; 0 if they parse, else
// the status to answer (-1: the client sent nothing).
int readRequest(net::Conn& c, request* req) {
  std::string buf;
  char chunk[1024];
  while (buf.find("\r\n\r\n") == std::string::npos) {
    if (buf.size() > kMaxHeader) return 431;
    std::size_t n = c.Read(chunk, sizeof chunk);
    if (n == 0) return buf.empty() ? -1 : 400;
    buf.append(chunk, n);
  }
  // "METHOD SP TARGET SP HTTP/1.x"
  std::string_view line(buf.data(), buf.find("\r\n"));
  auto sp1 = line.find(' ');
  auto sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1 ||
      line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0) {
    return 400;
  }
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.empty() || target[0] != '/') return 400;
  auto q = target.find('?');
  req->path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) req->query = target.substr(q + 1);
  return 0;
}

void writeResponse(net::Conn& c, const response& r) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " +
                     statusText(r.status) +
                     "\r\nContent-Type: " + r.contentType +
                     "\r\nX-Content-Type-Options: nosniff\r\n" + r.extra +
                     "Content-Length: " + std::to_string(r.body.size()) +
                     "\r\nConnection: close\r\n\r\n";
  std::string_view parts[] = {head, r.body};
  c.WriteBuffers(parts);
}

// serveConn answers the one request on c, then closes it.
void serveConn(net::Conn c) {
  try {
    request req;
    int bad = readRequest(c, &req);
    if (bad < 0) return;
    bool hangup = false;
    response r =
        bad != 0 ? serveError(bad, statusText(bad)) : route(req, c, &hangup);
    if (!hangup) writeResponse(c, r);
  } catch (const net::Error&) {
    // the client went away
  }
}

}  // namespace

std::string ListenAndServe(std::string_view address) {
  auto ln = std::make_shared<net::Listener>(net::Listen("tcp", address));
  std::string bound = ln->Addr();
  Go([ln] {
    for (;;) {
      auto c = ln->TryAccept();
      if (!c.ok()) {
        if (c.error()->Closed()) return;
        // A failed accept (say, out of descriptors): wait a little, as Go's
        // Server.Serve does, and go on.
        Sleep(std::chrono::milliseconds(10));
        continue;
      }
      Go([conn = std::move(*c)]() mutable { serveConn(std::move(conn)); });
    }
  });
  return bound;
}

}  // namespace gort::pprof
