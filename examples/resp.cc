// examples/resp.cc: a minimal server speaking Redis's protocol (RESP) on
// gort::net: PING, ECHO, SET and GET over one in-memory map, one goroutine
// per connection (its twin: benchmarks/go/respserve.go,
// `gortbench-go -serve=resp`). redis-benchmark and redis-cli talk to it.
//
// Commands are parsed from a buffer and answered in order, every complete
// command in the buffer before the replies are written, so pipelined clients
// (redis-benchmark -P 16) get one write per batch. Both RESP arrays and
// inline commands ("PING\r\n") are understood; a protocol error is answered
// with -ERR and the connection closed, as Redis does. SIGINT or SIGTERM
// close the listener and end the program.
//
//   gort-example-resp [--addr=127.0.0.1:6380]
//
// GOMAXPROCS comes from the environment.
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gort/gort.h"

namespace {

constexpr std::size_t kMaxBulk = 1 << 20;     // Longest argument accepted.
constexpr std::size_t kMaxArgs = 1 << 10;     // Most arguments per command.
constexpr std::size_t kMaxInline = 64 << 10;  // Longest inline command.
constexpr std::size_t kReadChunk = 16 << 10;

// std::hash over string_view for strings and views alike, so that GET
// looks a key up without copying it (as Go's m[string(b)] does not).
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view k) const {
    return std::hash<std::string_view>{}(k);
  }
};

// The key space: one map under one lock (the Go twin has the same).
struct Store {
  gort::Mutex mu;
  // Guarded by mu.
  std::unordered_map<std::string, std::string, KeyHash, std::equal_to<>> m;
};

enum class Parse { kNeedMore, kOk, kError };

// One parsed command: its arguments point into the connection's buffer.
struct Command {
  std::vector<std::string_view> args;
  std::size_t len = 0;          // Bytes it took in the buffer.
  const char* error = nullptr;  // Set with kError.
};

// Reads the CRLF-terminated decimal after buf[0] ('*' or '$') at *pos.
Parse ParseLength(std::string_view buf, std::size_t* pos, long long* n,
                  Command* cmd) {
  std::size_t eol = buf.find("\r\n", *pos);
  if (eol == std::string_view::npos) {
    if (buf.size() - *pos > 32) {
      cmd->error = "Protocol error: too big count";
      return Parse::kError;
    }
    return Parse::kNeedMore;
  }
  const char* first = buf.data() + *pos + 1;
  auto [end, ec] = std::from_chars(first, buf.data() + eol, *n);
  if (ec != std::errc() || end != buf.data() + eol) {
    cmd->error = "Protocol error: invalid count";
    return Parse::kError;
  }
  *pos = eol + 2;
  return Parse::kOk;
}

// Parses "*N\r\n" followed by N "$len\r\n<bytes>\r\n" bulk strings.
Parse ParseArray(std::string_view buf, Command* cmd) {
  std::size_t pos = 0;
  long long n = 0;
  if (Parse p = ParseLength(buf, &pos, &n, cmd); p != Parse::kOk) return p;
  if (n < 0 || static_cast<std::size_t>(n) > kMaxArgs) {
    cmd->error = "Protocol error: invalid multibulk length";
    return Parse::kError;
  }
  cmd->args.clear();
  for (long long i = 0; i < n; i++) {
    if (pos >= buf.size()) return Parse::kNeedMore;
    if (buf[pos] != '$') {
      cmd->error = "Protocol error: expected '$'";
      return Parse::kError;
    }
    long long len = 0;
    if (Parse p = ParseLength(buf, &pos, &len, cmd); p != Parse::kOk) return p;
    if (len < 0 || static_cast<std::size_t>(len) > kMaxBulk) {
      cmd->error = "Protocol error: invalid bulk length";
      return Parse::kError;
    }
    if (buf.size() - pos < static_cast<std::size_t>(len) + 2)
      return Parse::kNeedMore;
    cmd->args.push_back(buf.substr(pos, len));
    pos += len + 2;
  }
  cmd->len = pos;
  return Parse::kOk;
}

// Parses an inline command: words separated by spaces, ending in LF.
Parse ParseInline(std::string_view buf, Command* cmd) {
  std::size_t eol = buf.find('\n');
  if (eol == std::string_view::npos) {
    if (buf.size() > kMaxInline) {
      cmd->error = "Protocol error: too big inline request";
      return Parse::kError;
    }
    return Parse::kNeedMore;
  }
  std::string_view line = buf.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  cmd->args.clear();
  while (!line.empty()) {
    std::size_t sp = line.find(' ');
    if (sp != 0) cmd->args.push_back(line.substr(0, sp));
    if (sp == std::string_view::npos) break;
    line.remove_prefix(sp + 1);
  }
  cmd->len = eol + 1;
  return Parse::kOk;
}

// Parses the command at the start of buf.
Parse ParseCommand(std::string_view buf, Command* cmd) {
  if (buf.empty()) return Parse::kNeedMore;
  return buf[0] == '*' ? ParseArray(buf, cmd) : ParseInline(buf, cmd);
}

// Whether a equals the upper-case word b, ignoring ASCII case.
bool Is(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); i++) {
    if ((a[i] & ~0x20) != b[i]) return false;
  }
  return true;
}

// Appends a bulk string reply.
void AppendBulk(std::string* out, std::string_view v) {
  char len[24];
  auto res = std::to_chars(len, len + sizeof len, v.size());
  out->append("$").append(len, res.ptr).append("\r\n").append(v).append("\r\n");
}

// Appends an -ERR reply for a command with the wrong number of arguments.
void AppendArity(std::string* out, std::string_view name) {
  out->append("-ERR wrong number of arguments for '")
      .append(name)
      .append("' command\r\n");
}

// Runs one command, appending its reply to out.
void Execute(Store* st, const Command& cmd, std::string* out) {
  const std::vector<std::string_view>& a = cmd.args;
  if (a.empty()) return;
  std::string_view name = a[0];
  if (Is(name, "PING")) {
    if (a.size() > 2) return AppendArity(out, "ping");
    if (a.size() == 2) return AppendBulk(out, a[1]);
    out->append("+PONG\r\n");
  } else if (Is(name, "ECHO")) {
    if (a.size() != 2) return AppendArity(out, "echo");
    AppendBulk(out, a[1]);
  } else if (Is(name, "SET")) {
    if (a.size() != 3) return AppendArity(out, "set");
    {
      std::lock_guard<gort::Mutex> l(st->mu);
      st->m.insert_or_assign(std::string(a[1]), std::string(a[2]));
    }
    out->append("+OK\r\n");
  } else if (Is(name, "GET")) {
    if (a.size() != 2) return AppendArity(out, "get");
    std::lock_guard<gort::Mutex> l(st->mu);
    auto it = st->m.find(a[1]);
    if (it == st->m.end()) {
      out->append("$-1\r\n");
    } else {
      AppendBulk(out, it->second);
    }
  } else {
    out->append("-ERR unknown command '").append(name).append("'\r\n");
  }
}

// Serves one connection until EOF, an error or a protocol error.
void Serve(Store* st, gort::net::Conn c) {
  std::vector<char> buf(kReadChunk);
  std::size_t lo = 0, hi = 0;
  std::string out;
  Command cmd;
  try {
    for (;;) {
      std::string_view in(buf.data() + lo, hi - lo);
      Parse p = ParseCommand(in, &cmd);
      if (p == Parse::kOk) {
        Execute(st, cmd, &out);
        lo += cmd.len;
        continue;
      }
      if (p == Parse::kError) {
        out.append("-ERR ").append(cmd.error).append("\r\n");
        c.Write(out.data(), out.size());
        return;
      }
      if (!out.empty()) c.Write(out.data(), out.size());
      out.clear();
      std::memmove(buf.data(), buf.data() + lo, hi - lo);
      hi -= lo;
      lo = 0;
      if (hi == buf.size()) buf.resize(buf.size() * 2);
      std::size_t n = c.Read(buf.data() + hi, buf.size() - hi);
      if (n == 0) return;
      hi += n;
    }
  } catch (const gort::net::Error&) {
    // A client that resets or goes away ends its connection quietly.
  }
}

int signal_pipe[2] = {-1, -1};

// SIGINT/SIGTERM handler: one byte into the pipe main reads.
void OnSignal(int) {
  char b = 1;
  [[maybe_unused]] ssize_t r = write(signal_pipe[1], &b, 1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string addr = "127.0.0.1:6380";
  for (int i = 1; i < argc; i++) {
    if (std::strncmp(argv[i], "--addr=", 7) != 0) {
      std::fprintf(stderr, "usage: %s [--addr=host:port]\n", argv[0]);
      return 2;
    }
    addr = argv[i] + 7;
  }
  if (pipe(signal_pipe) != 0) return 1;
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  static Store st;  // Outlives the Run: abandoned goroutines may hold it.
  gort::Run([&addr] {
    gort::net::Listener ln = gort::net::Listen("tcp", addr);
    gort::Go([&ln] {
      for (;;) {
        gort::net::Result<gort::net::Conn> c = ln.TryAccept();
        if (!c) {
          if (c.error()->Closed()) return;
          std::fprintf(stderr, "resp: accept: %s\n", c.error()->what());
          gort::Sleep(std::chrono::milliseconds(5));
          continue;
        }
        gort::Go([c = std::move(*c)]() mutable { Serve(&st, std::move(c)); });
      }
    });
    std::printf("resp: listening on %s\n", ln.Addr().c_str());
    std::fflush(stdout);
    gort::poll::FD sig(signal_pipe[0]);
    char b;
    sig.Read(&b, 1);  // Parks until a signal.
    ln.Close();
    std::printf("resp: shutting down\n");
    // Like Go's main returning: the connections' goroutines are abandoned.
  });
  return 0;
}
