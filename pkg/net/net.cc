// pkg/net/net.cc: gort::net, stream sockets on the poller (Go's net package:
// dial.go, ipsock.go's SplitHostPort, fd_unix.go's connect, tcpsock.go,
// unixsock.go, net.go's OpError text).
//
// Addresses: "host:port" with a numeric host, "localhost", or a name
// resolved by getaddrinfo inside a BlockingSyscall; "[v6]:port"; an empty
// host listens on every IPv4 address (Go would use a dual-stack "[::]").
// Errors read as Go's: "dial tcp 127.0.0.1:1: connect: connection refused".
#include "gort/net.h"

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gort/runtime.h"
#include "gort/select.h"
#include "gort/sync.h"
#include "gort/time.h"
#include "internal/poll/poll_fd.h"
#include "net/hook.h"
#include "os/net_os.h"
#include "os/netpoll_os.h"
#include "os/os.h"

namespace gort::net {

namespace internal {

std::vector<std::string> (*testHookLookupHost)(const std::string& host) =
    nullptr;

struct connImpl {
  poll::internal::fdImpl* fd = nullptr;
  std::string net;
  std::string laddr;
  std::string raddr;
};

struct packetImpl {
  poll::internal::fdImpl* fd = nullptr;
  std::string net;
  std::string laddr;
};

struct listenerImpl {
  poll::internal::fdImpl* fd = nullptr;
  std::string net;
  std::string addr;
  std::string unlink;  // unix socket file to remove on Close
};

// access builds Conn and Listener from their implementations.
struct access {
  static connImpl* impl(const Conn& c) { return c.impl_; }
  static Conn conn(connImpl* impl) {
    Conn c;
    c.impl_ = impl;
    return c;
  }
  static Listener listener(listenerImpl* impl) {
    Listener l;
    l.impl_ = impl;
    return l;
  }
  static PacketConn packet(packetImpl* impl) {
    PacketConn c;
    c.impl_ = impl;
    return c;
  }
};

std::uint64_t readsSkipped(const Conn& c) {
  connImpl* impl = access::impl(c);
  return impl == nullptr ? 0 : impl->fd->readsSkipped;
}

}  // namespace internal

namespace {

using internal::connImpl;
using internal::listenerImpl;
using internal::packetImpl;
namespace pi = gort::poll::internal;

Error plainError(const std::string& msg) { return Error(msg, false, false, 0); }

// opError mirrors Go's OpError.Error (net/net.go:473): "op net [src->]addr:
// [syscall: ]err".
Error opError(const std::string& op, const std::string& net,
              const std::string& src, const std::string& addr,
              const char* syscall, int code, std::size_t n = 0) {
  std::string s = op + " " + net;
  if (!src.empty()) s += " " + src;
  if (!addr.empty()) s += (src.empty() ? " " : "->") + addr;
  if (code > 0 && syscall != nullptr) s += std::string(": ") + syscall;
  return pi::makeError(s, code, false, n);
}

struct target {
  os::Family family = os::Family::kInet4;
  os::SockAddr sa;
  std::string text;  // the address as Go prints it in errors
};

// addrError mirrors Go's AddrError (net/net.go:554) inside an OpError without
// an address.
Error addrError(const std::string& op, const std::string& net,
                const std::string& addr, const std::string& why) {
  return plainError(op + " " + net + ": address " + addr + ": " + why);
}

// unexpectedAddr: the error of Go's ListenConfig.Listen (net/dial.go:624) for
// a datagram network (and of its ListenPacket for a stream one): "listen udp
// :0: address :0: unexpected address type".
Error unexpectedAddr(const std::string& net, const target& t,
                     std::string_view address) {
  std::string la = t.text;  // Go prints an empty host's address as ":port"
  if (!address.empty() && address[0] == ':') la = la.substr(la.rfind(':'));
  return plainError("listen " + net + " " + la + ": address " +
                    std::string(address) + ": unexpected address type");
}

// splitHostPort mirrors Go's SplitHostPort (net/ipsock.go:164); false with *why
// on error.
bool splitHostPort(std::string_view hp, std::string* host, std::string* port,
                   std::string* why) {
  std::size_t colon = hp.rfind(':');
  if (colon == std::string_view::npos) {
    *why = "missing port in address";
    return false;
  }
  if (!hp.empty() && hp[0] == '[') {
    std::size_t end = hp.find(']');
    if (end == std::string_view::npos) {
      *why = "missing ']' in address";
      return false;
    }
    if (end + 1 != colon) {
      *why = end + 1 == hp.size() ? "missing port in address"
                                  : "too many colons in address";
      return false;
    }
    *host = std::string(hp.substr(1, end - 1));
  } else {
    *host = std::string(hp.substr(0, colon));
    if (host->find(':') != std::string::npos) {
      *why = "too many colons in address";
      return false;
    }
  }
  *port = std::string(hp.substr(colon + 1));
  return true;
}

// netKind: what a network name means (Go's parseNetwork (net/dial.go:168)).
struct netKind {
  bool known = false;
  bool unix = false;
  bool dgram = false;
  bool want4 = true, want6 = true;
};

netKind parseNetwork(const std::string& net) {
  netKind k;
  k.known = true;
  if (net == "unix" || net == "unixgram") {
    k.unix = true;
    k.dgram = net == "unixgram";
  } else if (net == "tcp" || net == "udp") {
    k.dgram = net == "udp";
  } else if (net == "tcp4" || net == "udp4") {
    k.dgram = net == "udp4";
    k.want6 = false;
  } else if (net == "tcp6" || net == "udp6") {
    k.dgram = net == "udp6";
    k.want4 = false;
  } else {
    k.known = false;
  }
  return k;
}

// kMaxAddrs: how many of a name's addresses a dial tries.
constexpr int kMaxAddrs = 16;

// hostIPs: the addresses host stands for, IPv4 first; zone for a numeric
// IPv6 one. Go asks the resolver for "localhost" too; gort answers it as
// /etc/hosts usually does (127.0.0.1, then ::1).
std::vector<os::IPAddr> hostIPs(const std::string& op, const std::string& net,
                                const std::string& host, const netKind& k,
                                bool listening, std::uint32_t* zone) {
  std::vector<os::IPAddr> ips;
  os::IPAddr ip;
  if (internal::testHookLookupHost != nullptr && !host.empty() &&
      !os::parseIP(host, ip.ip, &ip.v4, zone)) {
    for (const std::string& s : internal::testHookLookupHost(host)) {
      if (os::parseIP(s, ip.ip, &ip.v4, zone)) ips.push_back(ip);
    }
    return ips;
  }
  if (host.empty() || host == "localhost") {
    // Empty: every address to listen on (0.0.0.0 or ::), the local system
    // to dial.
    bool loop = !host.empty() || !listening;
    if (k.want4) {
      ip.v4 = true;
      if (loop) ip.ip[0] = 127, ip.ip[3] = 1;
      ips.push_back(ip);
    }
    if (k.want6 && (!k.want4 || (loop && !listening))) {
      ip = {};
      ip.v4 = false;
      if (loop) ip.ip[15] = 1;
      ips.push_back(ip);
    }
    return ips;
  }
  if (os::parseIP(host, ip.ip, &ip.v4, zone)) {
    ips.push_back(ip);
    return ips;
  }
  os::IPAddr found[kMaxAddrs];
  int n = 0;
  int err = BlockingSyscall([&] {
    return os::lookupHostAll(host, k.want4, k.want6, found, kMaxAddrs, &n);
  });
  if (err != 0) {
    throw plainError(op + " " + net + ": lookup " + host + ": " +
                     os::errstr(err));
  }
  ips.assign(found, found + n);
  return ips;
}

// resolveAll turns network and address into the socket addresses it stands
// for (Go's resolveAddrList (net/dial.go:203)), or throws.
std::vector<target> resolveAll(const std::string& op, const std::string& net,
                               std::string_view address, bool listening) {
  std::string addr(address);
  netKind k = parseNetwork(net);
  if (!k.known) throw plainError(op + " " + net + ": unknown network " + net);
  if (k.unix) {
    target t;
    t.family = os::Family::kUnix;
    t.text = addr;
    if (!os::sockaddrUnix(addr, &t.sa)) {
      throw addrError(op, net, addr, "invalid unix socket path");
    }
    return {t};
  }
  std::string host, port, why;
  if (!splitHostPort(address, &host, &port, &why)) {
    throw addrError(op, net, addr, why);
  }
  // Go's parsePort (net/port.go:15): empty is port 0, a name is looked up
  // ("http": 80).
  char* end = nullptr;
  long p = port.empty() ? 0 : std::strtol(port.c_str(), &end, 10);
  if (!port.empty() && *end != '\0') {
    p = BlockingSyscall([&] { return os::lookupPort(port); });
    if (p < 0) throw addrError(op, net, port, "unknown port");
  }
  if (p < 0 || p > 65535) throw addrError(op, net, port, "invalid port");
  std::uint32_t zone = 0;
  std::vector<target> out;
  for (const os::IPAddr& ip : hostIPs(op, net, host, k, listening, &zone)) {
    if ((ip.v4 && !k.want4) || (!ip.v4 && !k.want6)) continue;
    target t;
    t.family = ip.v4 ? os::Family::kInet4 : os::Family::kInet6;
    os::sockaddrInet(ip.ip, ip.v4, static_cast<int>(p), &t.sa, zone);
    t.text = os::sockaddrString(t.sa);
    out.push_back(t);
  }
  if (out.empty()) throw addrError(op, net, host, "no suitable address found");
  return out;
}

// resolve: the first of resolveAll's addresses (Go's addrList.first
// (net/ipsock.go:99) for a listener).
target resolve(const std::string& op, const std::string& net,
               std::string_view address, bool listening) {
  return resolveAll(op, net, address, listening).front();
}

std::string localName(std::intptr_t fd) {
  os::SockAddr sa;
  return os::sockName(fd, &sa) == 0 ? os::sockaddrString(sa) : "";
}

std::string peerName(std::intptr_t fd) {
  os::SockAddr sa;
  return os::sockPeer(fd, &sa) == 0 ? os::sockaddrString(sa) : "";
}

// newSocket: a non-blocking socket registered with the poller.
pi::fdImpl* newSocket(const std::string& op, const std::string& net,
                      const target& t) {
  std::intptr_t s = -1;
  netKind k = parseNetwork(net);
  if (int err = os::sockSocket(t.family, &s, k.dgram)) {
    throw opError(op, net, "", t.text, "socket", err);
  }
  int err = 0;
  pi::fdImpl* fd = pi::fdOpen(s, false, &err);
  if (fd == nullptr) {
    os::fdClose(s);
    throw opError(op, net, "", t.text, "socket", err);
  }
  fd->stream = !k.dgram;
  // Go's setDefaultSockopts (net/sockopt_linux.go:12): "tcp6" and "udp6" are
  // IPv6 only, "tcp" and "udp" on [::] both.
  if (t.family == os::Family::kInet6) os::sockV6Only(s, !k.want4);
  return fd;
}

// connect mirrors Go's netFD.connect (net/fd_unix.go:55); the caller has set
// the deadline. Returns 0 or a code.
int connect(pi::fdImpl* fd, const target& t, const char** syscall) {
  *syscall = "connect";
  if (os::ioCompletion()) {  // Windows: ConnectEx on the write operation
    int err = pi::fdConnectIO(fd, t.sa);
    if (err == pi::kErrTimeout || err == pi::kErrClosing) *syscall = nullptr;
    return err;
  }
  int err = os::sockConnect(fd->sysfd, t.sa);
  if (err == 0) return 0;
  if (err != os::kErrInProgress) return err;
  for (;;) {
    if (int werr = pi::fdWaitWrite(fd)) {
      *syscall = nullptr;
      return werr;
    }
    int soerr = 0;
    if (int gerr = os::sockError(fd->sysfd, &soerr)) {
      *syscall = "getsockopt";
      return gerr;
    }
    if (soerr == 0) {
      // The poller may wake us spuriously: connected only with a peer.
      os::SockAddr peer;
      if (os::sockPeer(fd->sysfd, &peer) == 0) break;
      continue;
    }
    if (os::sockConnect(fd->sysfd, t.sa) == os::kErrInProgress) continue;
    return soerr;
  }
  return 0;
}

connImpl* newConn(pi::fdImpl* fd);

// tcpDefaults: what Go sets on a new TCP connection: no Nagle delay,
// keep-alive probes after 15 s idle, every 15 s.
void tcpDefaults(std::intptr_t fd) {
  os::sockNoDelay(fd);
  os::sockKeepAlive(fd, true);
  os::sockKeepAlivePeriod(fd, 15);
}

// ctxErr: the code a dial bounded by ctx fails with once ctx is done (Go's
// mapErr: context.Canceled reads "operation was canceled", a passed
// deadline "i/o timeout"); 0 while ctx is live.
int ctxErr(const Context* ctx) {
  if (ctx == nullptr) return 0;
  switch (ctx->Err()) {
    case ContextError::kNone:
      return 0;
    case ContextError::kCanceled:
      return pi::kErrCanceled;
    case ContextError::kDeadlineExceeded:
      return pi::kErrTimeout;
  }
  return 0;
}

// dialOne dials one address: with ctx, the connect is also interrupted when
// ctx is done, as Go's netFD.connect (net/fd_unix.go:55) does it: a goroutine
// waiting on ctx.Done moves the write deadline into the past, which wakes the
// connect. A datagram socket's connect only sets its peer (plain connect(2) on
// every OS, as Go's canUseConnectEx (net/fd_windows.go:27) keeps ConnectEx to
// TCP).
Conn dialOne(const std::string& net, const target& t, std::int64_t deadline,
             const Context* ctx) {
  if (int cerr = ctxErr(ctx))
    throw opError("dial", net, "", t.text, nullptr, cerr);
  pi::fdImpl* fd = newSocket("dial", net, t);
  const char* syscall = "connect";
  int err = 0;
  if (!fd->stream) {
    err = os::sockConnect(fd->sysfd, t.sa);
  } else {
    // The deadline first, then the interrupter (Go's netFD.connect
    // (net/fd_unix.go:55)): set after, the deadline would overwrite a cancel
    // that came in between.
    if (deadline != 0) pi::fdSetDeadline(fd, deadline, os::kPollWrite);
    std::function<bool()> stop;
    auto interrupted = std::make_shared<gort::WaitGroup>();
    if (ctx != nullptr && ctx->Done()) {
      interrupted->Add(1);
      stop = AfterFunc(*ctx, [fd, interrupted] {
        pi::fdSetDeadline(fd, -1, os::kPollWrite);
        interrupted->Done();
      });
    }
    err = connect(fd, t, &syscall);
    if (stop && !stop()) {
      // ctx ended during the connect: the dial fails even if it connected
      // (Go's connect (net/fd_unix.go:55) does too), once the interrupter is
      // done with fd.
      interrupted->Wait();
      err = ctxErr(ctx);
      syscall = nullptr;
    }
  }
  if (err != 0) {
    pi::fdFree(fd);
    throw opError("dial", net, "", t.text, syscall, err);
  }
  if (deadline != 0) pi::fdSetDeadline(fd, 0, os::kPollWrite);
  if (t.family != os::Family::kUnix && fd->stream) {
    tcpDefaults(fd->sysfd);
    pi::fdReadHint(fd);
  }
  connImpl* c = newConn(fd);
  c->net = net;
  c->laddr = localName(fd->sysfd);
  c->raddr = t.family == os::Family::kUnix ? t.text : peerName(fd->sysfd);
  return internal::access::conn(c);
}

// partialDeadline mirrors Go's partialDeadline (net/dial.go:138): the share
// of what is left before deadline that one of `left` addresses gets, at
// least 2 s where there is that much; 0 (none) stays none, and -1 means it
// has passed.
std::int64_t partialDeadline(std::int64_t now, std::int64_t deadline,
                             int left) {
  if (deadline == 0) return 0;
  std::int64_t remaining = deadline - now;
  if (deadline < 0 || remaining <= 0) return -1;
  constexpr std::int64_t kSaneMinimum = 2'000'000'000;
  std::int64_t timeout = remaining / left;
  if (timeout < kSaneMinimum) {
    timeout = remaining < kSaneMinimum ? remaining : kSaneMinimum;
  }
  return now + timeout;
}

// dialSerial mirrors Go's dialSerial (net/dial.go:523): each address in
// turn, each with its share of the deadline, until one connects; the first
// address's error if none does. A done ctx stops it between addresses.
Conn dialSerial(const std::string& net, const std::vector<target>& ts,
                std::int64_t deadline, const Context* ctx) {
  std::optional<Error> first;
  for (std::size_t i = 0; i < ts.size(); i++) {
    if (int cerr = ctxErr(ctx)) {
      throw opError("dial", net, "", ts[i].text, nullptr, cerr);
    }
    std::int64_t d = partialDeadline(os::nanotime(), deadline,
                                     static_cast<int>(ts.size() - i));
    if (d < 0) {  // the whole deadline has passed
      if (!first)
        first = opError("dial", net, "", ts[i].text, nullptr, pi::kErrTimeout);
      break;
    }
    try {
      return dialOne(net, ts[i], d, ctx);
    } catch (const Error& e) {
      if (!first) first = e;
    }
  }
  throw *first;
}

// The primary family's head start: Go's Dialer.fallbackDelay
// (net/dial.go:160) default.
constexpr std::chrono::milliseconds kFallbackDelay{300};

// racer: one family's dialSerial in dialParallel, and its outcome.
struct racer {
  std::pair<Context, CancelFunc> ctx;  // cancelled once the race is decided
  Conn conn;
  std::optional<Error> err;
};

// dialParallel mirrors Go's dialParallel (net/dial.go:449) (Happy Eyeballs,
// RFC 6555): the primaries are dialed at once, the fallbacks once the
// primaries fail or kFallbackDelay passes; the first connection wins, the
// other racer is cancelled. The primaries' error if both fail. Unlike Go,
// it returns only once the loser is done (its socket closed), so a Dial
// leaves no goroutine or descriptor behind.
Conn dialParallel(const std::string& net, const std::vector<target>& primaries,
                  const std::vector<target>& fallbacks, std::int64_t deadline,
                  const Context* ctx) {
  if (fallbacks.empty()) return dialSerial(net, primaries, deadline, ctx);
  Context parent = ctx != nullptr ? *ctx : Background();
  racer r[2] = {{WithCancel(parent), {}, {}}, {WithCancel(parent), {}, {}}};
  Chan<int> done = MakeChan<int>(2);
  auto start = [&](int i) {
    Go([&, i] {
      try {
        r[i].conn = dialSerial(net, i == 0 ? primaries : fallbacks, deadline,
                               &r[i].ctx.first);
      } catch (const Error& e) {
        r[i].err = e;
      }
      done.Send(i);
    });
  };
  start(0);
  Timer fallbackTimer = NewTimer(kFallbackDelay);
  int running = 1, winner = -1;
  bool fallbackStarted = false;
  auto startFallback = [&] {
    fallbackStarted = true;
    running++;
    start(1);
  };
  while (running > 0) {
    int i = -1;
    if (fallbackStarted || winner >= 0) {
      i = done.Recv();
    } else {
      Select(OnRecv(done, [&](int v) { i = v; }),
             OnRecv(fallbackTimer.C(), [&] { startFallback(); }));
      if (i < 0) continue;
    }
    running--;
    if (!r[i].err && winner < 0) {
      winner = i;
      r[1 - i].ctx.second();  // the loser gives up
    } else if (i == 0 && winner < 0 && !fallbackStarted) {
      startFallback();  // the primaries failed: no need to wait
    }
  }
  fallbackTimer.Stop();
  r[0].ctx.second();
  r[1].ctx.second();
  if (winner >= 0) return std::move(r[winner].conn);  // a losing Conn closes
  throw *r[0].err;
}

// partition mirrors Go's addrList.partition (net/ipsock.go:114): the
// addresses of the first one's family, then the others.
void partition(const std::vector<target>& ts, std::vector<target>* primaries,
               std::vector<target>* fallbacks) {
  for (const target& t : ts) {
    (t.family == ts[0].family ? primaries : fallbacks)->push_back(t);
  }
}

// dial mirrors Go's Dialer.DialContext (net/dial.go:376): resolve, then
// race the two IP families for "tcp" (dialParallel), else dialSerial.
Conn dial(std::string_view network, std::string_view address,
          std::int64_t deadline, const Context* ctx = nullptr) {
  pi::checkInRun("net::Dial");
  std::string net(network);
  std::vector<target> ts = resolveAll("dial", net, address, false);
  if (net != "tcp") return dialSerial(net, ts, deadline, ctx);
  std::vector<target> primaries, fallbacks;
  partition(ts, &primaries, &fallbacks);
  return dialParallel(net, primaries, fallbacks, deadline, ctx);
}

connImpl* needConn(connImpl* c, const char* op) {
  pi::checkInRun(op);
  if (c == nullptr) {
    throw plainError(std::string(op) + ": invalid argument (empty net::Conn)");
  }
  return c;
}

Error connError(const connImpl* c, const char* op, int code,
                std::size_t n = 0) {
  return opError(op, c->net, c->laddr, c->raddr, op, code, n);
}

// raiseConn / raiseListener: the fdImpl's raise for a Conn and a Listener.
void raiseConn(const void* owner, const char* op, int code, std::size_t n) {
  throw connError(static_cast<const connImpl*>(owner), op, code, n);
}
void raiseListener(const void* owner, const char* op, int code, std::size_t) {
  const auto* l = static_cast<const listenerImpl*>(owner);
  throw opError(op, l->net, "", l->addr, op, code);
}

connImpl* newConn(pi::fdImpl* fd) {
  auto* c = new connImpl;
  c->fd = fd;
  fd->owner = c;
  fd->raise = raiseConn;
  return c;
}

// freeConn / freeListener: what Conn's and Listener's destructors and move
// assignments release: the descriptor, and a listener's unix socket file.
void freeConn(internal::connImpl* c) {
  if (c == nullptr) return;
  pi::fdFree(c->fd);
  delete c;
}

void freeListener(internal::listenerImpl* l) {
  if (l == nullptr) return;
  pi::fdFree(l->fd);
  if (!l->unlink.empty()) os::unlinkPath(l->unlink);
  delete l;
}

}  // namespace

Conn::Conn(Conn&& other) noexcept : impl_(other.impl_) {
  other.impl_ = nullptr;
}

Conn& Conn::operator=(Conn&& other) noexcept {
  pi::moveOwned(impl_, other.impl_, freeConn);
  return *this;
}

Conn::~Conn() { freeConn(impl_); }

std::size_t Conn::Read(void* buf, std::size_t n) {
  connImpl* c = needConn(impl_, "read");
  std::size_t got = 0;
  if (int err = pi::fdRead(c->fd, buf, n, &got))
    throw connError(c, "read", err);
  return got;
}

std::size_t Conn::Write(const void* buf, std::size_t n) {
  connImpl* c = needConn(impl_, "write");
  std::size_t put = 0;
  if (int err = pi::fdWrite(c->fd, buf, n, &put)) {
    throw connError(c, "write", err, put);
  }
  return put;
}

std::size_t Conn::WriteBuffers(std::span<const std::string_view> buffers) {
  connImpl* c = needConn(impl_, "writev");
  std::vector<os::IoVec> v;
  v.reserve(buffers.size());
  for (std::string_view b : buffers) v.push_back({b.data(), b.size()});
  std::size_t put = 0;
  if (int err = pi::fdWritev(c->fd, v.data(), v.size(), &put)) {
    throw connError(c, "writev", err, put);
  }
  return put;
}

void Conn::SetDeadline(std::chrono::steady_clock::time_point t) {
  connImpl* c = needConn(impl_, "set");
  if (int err = pi::fdSetDeadline(c->fd, pi::fdDeadline(t),
                                  os::kPollRead | os::kPollWrite)) {
    throw connError(c, "set", err);
  }
}

void Conn::SetReadDeadline(std::chrono::steady_clock::time_point t) {
  connImpl* c = needConn(impl_, "set");
  if (int err = pi::fdSetDeadline(c->fd, pi::fdDeadline(t), os::kPollRead)) {
    throw connError(c, "set", err);
  }
}

void Conn::SetWriteDeadline(std::chrono::steady_clock::time_point t) {
  connImpl* c = needConn(impl_, "set");
  if (int err = pi::fdSetDeadline(c->fd, pi::fdDeadline(t), os::kPollWrite)) {
    throw connError(c, "set", err);
  }
}

namespace {
// sockopt applies a socket option under a reference to c's descriptor
// (Go's TCPConn (net/tcpsock.go:112) setters: "set tcp a->b: setsockopt:
// <err>").
template <class F>
void sockopt(connImpl* c, F set) {
  if (!pi::fdIncref(c->fd)) throw connError(c, "set", pi::kErrClosing);
  int err = set(c->fd->sysfd);
  pi::fdDecref(c->fd);
  if (err != 0) {
    throw opError("set", c->net, c->laddr, c->raddr, "setsockopt", err);
  }
}
int keepAliveSecs(std::chrono::nanoseconds d) {
  auto s = std::chrono::ceil<std::chrono::seconds>(d).count();
  return s < 1 ? 1 : s > 1 << 20 ? 1 << 20 : static_cast<int>(s);
}
}  // namespace

void Conn::SetNoDelay(bool on) {
  sockopt(needConn(impl_, "set"),
          [on](std::intptr_t fd) { return os::sockSetNoDelay(fd, on); });
}

void Conn::SetKeepAlive(bool on) {
  sockopt(needConn(impl_, "set"),
          [on](std::intptr_t fd) { return os::sockKeepAlive(fd, on); });
}

void Conn::SetKeepAlivePeriod(std::chrono::nanoseconds period) {
  int secs = keepAliveSecs(period);
  sockopt(needConn(impl_, "set"), [secs](std::intptr_t fd) {
    return os::sockKeepAlivePeriod(fd, secs);
  });
}

void Conn::SetLinger(int secs) {
  sockopt(needConn(impl_, "set"),
          [secs](std::intptr_t fd) { return os::sockLinger(fd, secs); });
}

void Conn::SetReadBuffer(int bytes) {
  sockopt(needConn(impl_, "set"), [bytes](std::intptr_t fd) {
    return os::sockBuffer(fd, true, bytes);
  });
}

void Conn::SetWriteBuffer(int bytes) {
  sockopt(needConn(impl_, "set"), [bytes](std::intptr_t fd) {
    return os::sockBuffer(fd, false, bytes);
  });
}

void Conn::CloseWrite() {
  connImpl* c = needConn(impl_, "close");
  if (int err = pi::fdShutdownWrite(c->fd)) {
    throw opError("close", c->net, c->laddr, c->raddr, "shutdown", err);
  }
}

void Conn::Close() {
  connImpl* c = needConn(impl_, "close");
  if (int err = pi::fdClose(c->fd)) throw connError(c, "close", err);
}

std::string Conn::LocalAddr() const { return impl_ ? impl_->laddr : ""; }

std::string Conn::RemoteAddr() const { return impl_ ? impl_->raddr : ""; }

Listener::Listener(Listener&& other) noexcept : impl_(other.impl_) {
  other.impl_ = nullptr;
}

Listener& Listener::operator=(Listener&& other) noexcept {
  pi::moveOwned(impl_, other.impl_, freeListener);
  return *this;
}

Listener::~Listener() { freeListener(impl_); }

Conn Listener::Accept() {
  pi::checkInRun("net::Listener::Accept");
  if (impl_ == nullptr) {
    throw plainError("accept: invalid argument (empty net::Listener)");
  }
  listenerImpl* l = impl_;
  std::intptr_t nfd = -1;
  if (int err = pi::fdAccept(l->fd, &nfd)) {
    throw opError("accept", l->net, "", l->addr, "accept", err);
  }
  int err = 0;
  pi::fdImpl* fd = pi::fdOpen(nfd, false, &err);
  if (fd == nullptr) {
    os::fdClose(nfd);
    throw opError("accept", l->net, "", l->addr, "accept", err);
  }
  if (l->net != "unix") {
    tcpDefaults(nfd);
    pi::fdReadHint(fd);
  }
  connImpl* c = newConn(fd);
  c->net = l->net;
  c->laddr = l->net == "unix" ? l->addr : localName(nfd);
  c->raddr = peerName(nfd);
  return internal::access::conn(c);
}

void Listener::Close() {
  pi::checkInRun("net::Listener::Close");
  if (impl_ == nullptr) {
    throw plainError("close: invalid argument (empty net::Listener)");
  }
  if (int err = pi::fdClose(impl_->fd)) {
    throw opError("close", impl_->net, "", impl_->addr, "close", err);
  }
  if (!impl_->unlink.empty()) {
    os::unlinkPath(impl_->unlink);
    impl_->unlink.clear();
  }
}

std::string Listener::Addr() const { return impl_ ? impl_->addr : ""; }

void Listener::SetDeadline(std::chrono::steady_clock::time_point t) {
  pi::checkInRun("net::Listener::SetDeadline");
  if (impl_ == nullptr) {
    throw plainError("set: invalid argument (empty net::Listener)");
  }
  if (int err =
          pi::fdSetDeadline(impl_->fd, pi::fdDeadline(t), os::kPollRead)) {
    throw opError("set", impl_->net, "", impl_->addr, nullptr, err);
  }
}

namespace {
// freePacket: what PacketConn's destructor and move assignment release.
void freePacket(packetImpl* c) {
  if (c == nullptr) return;
  pi::fdFree(c->fd);
  delete c;
}

packetImpl* needPacket(packetImpl* c, const char* op) {
  pi::checkInRun(op);
  if (c == nullptr) {
    throw plainError(std::string(op) +
                     ": invalid argument (empty net::PacketConn)");
  }
  return c;
}

// setPacketDeadline: Go's conn.SetDeadline (net/net.go:235) and friends for
// mode.
void setPacketDeadline(packetImpl* c, std::chrono::steady_clock::time_point t,
                       int mode) {
  if (int err = pi::fdSetDeadline(c->fd, pi::fdDeadline(t), mode)) {
    throw opError("set", c->net, c->laddr, "", nullptr, err);
  }
}

// packetBuffer: SO_RCVBUF or SO_SNDBUF under a reference.
void packetBuffer(packetImpl* c, bool read, int bytes) {
  if (!pi::fdIncref(c->fd)) {
    throw opError("set", c->net, c->laddr, "", nullptr, pi::kErrClosing);
  }
  int err = os::sockBuffer(c->fd->sysfd, read, bytes);
  pi::fdDecref(c->fd);
  if (err != 0) throw opError("set", c->net, c->laddr, "", "setsockopt", err);
}
}  // namespace

PacketConn::PacketConn(PacketConn&& other) noexcept : impl_(other.impl_) {
  other.impl_ = nullptr;
}

PacketConn& PacketConn::operator=(PacketConn&& other) noexcept {
  pi::moveOwned(impl_, other.impl_, freePacket);
  return *this;
}

PacketConn::~PacketConn() { freePacket(impl_); }

Packet PacketConn::ReadFrom(void* buf, std::size_t n) {
  Packet p;
  p.n = ReadFrom(buf, n, &p.addr);
  return p;
}

std::size_t PacketConn::ReadFrom(void* buf, std::size_t n, std::string* addr) {
  packetImpl* c = needPacket(impl_, "read");
  std::size_t got = 0;
  os::SockAddr from;
  // Go's UDPConn.ReadFrom (net/udpsock.go:157): "read udp <laddr>: recvfrom:
  // <err>".
  if (int err = pi::fdReadFrom(c->fd, buf, n, &got, &from)) {
    throw opError("read", c->net, c->laddr, "", "recvfrom", err);
  }
  addr->assign(os::sockaddrString(from));
  return got;
}

std::size_t PacketConn::WriteTo(const void* buf, std::size_t n,
                                std::string_view addr) {
  packetImpl* c = needPacket(impl_, "write");
  target t = resolve("write", c->net, addr, false);
  std::size_t put = 0;
  // Go's UDPConn.WriteTo (net/udpsock.go:235): "write udp <laddr>-><addr>:
  // sendto: <err>".
  if (int err = pi::fdWriteTo(c->fd, buf, n, t.sa, &put)) {
    throw opError("write", c->net, c->laddr, t.text, "sendto", err);
  }
  return put;
}

void PacketConn::SetDeadline(std::chrono::steady_clock::time_point t) {
  setPacketDeadline(needPacket(impl_, "set"), t,
                    os::kPollRead | os::kPollWrite);
}

void PacketConn::SetReadDeadline(std::chrono::steady_clock::time_point t) {
  setPacketDeadline(needPacket(impl_, "set"), t, os::kPollRead);
}

void PacketConn::SetWriteDeadline(std::chrono::steady_clock::time_point t) {
  setPacketDeadline(needPacket(impl_, "set"), t, os::kPollWrite);
}

void PacketConn::SetReadBuffer(int bytes) {
  packetBuffer(needPacket(impl_, "set"), true, bytes);
}

void PacketConn::SetWriteBuffer(int bytes) {
  packetBuffer(needPacket(impl_, "set"), false, bytes);
}

void PacketConn::Close() {
  packetImpl* c = needPacket(impl_, "close");
  if (int err = pi::fdClose(c->fd)) {
    throw opError("close", c->net, c->laddr, "", nullptr, err);
  }
}

std::string PacketConn::LocalAddr() const { return impl_ ? impl_->laddr : ""; }

PacketConn ListenPacket(std::string_view network, std::string_view address) {
  pi::checkInRun("net::ListenPacket");
  std::string net(network);
  target t = resolve("listen", net, address, true);
  if (!parseNetwork(net).dgram) throw unexpectedAddr(net, t, address);
  pi::fdImpl* fd = newSocket("listen", net, t);
  if (int err = os::sockBind(fd->sysfd, t.sa, false)) {
    pi::fdFree(fd);
    throw opError("listen", net, "", t.text, "bind", err);
  }
  auto* c = new packetImpl;
  c->fd = fd;
  c->net = net;
  c->laddr = t.family == os::Family::kUnix ? t.text : localName(fd->sysfd);
  return internal::access::packet(c);
}

std::pair<std::string, std::string> SplitHostPort(std::string_view hostport) {
  std::string host, port, why;
  if (!splitHostPort(hostport, &host, &port, &why)) {
    throw plainError("address " + std::string(hostport) + ": " + why);
  }
  return {host, port};
}

std::string JoinHostPort(std::string_view host, std::string_view port) {
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  return h + ":" + std::string(port);
}

Listener Listen(std::string_view network, std::string_view address) {
  pi::checkInRun("net::Listen");
  std::string net(network);
  target t = resolve("listen", net, address, true);
  if (parseNetwork(net).dgram) throw unexpectedAddr(net, t, address);
  pi::fdImpl* fd = newSocket("listen", net, t);
  bool inet = t.family != os::Family::kUnix;
  if (int err = os::sockBind(fd->sysfd, t.sa, inet)) {
    pi::fdFree(fd);
    throw opError("listen", net, "", t.text, "bind", err);
  }
  if (int err = os::sockListen(fd->sysfd)) {
    pi::fdFree(fd);
    if (!inet && t.text[0] != '@') os::unlinkPath(t.text);
    throw opError("listen", net, "", t.text, "listen", err);
  }
  auto* l = new listenerImpl;
  l->fd = fd;
  fd->owner = l;
  fd->raise = raiseListener;
  l->net = net;
  l->addr = inet ? localName(fd->sysfd) : t.text;
  if (!inet && t.text[0] != '@') l->unlink = t.text;  // not abstract
  return internal::access::listener(l);
}

Conn Dial(std::string_view network, std::string_view address) {
  return dial(network, address, 0);
}

Conn DialTimeout(std::string_view network, std::string_view address,
                 std::chrono::nanoseconds timeout) {
  pi::checkInRun("net::DialTimeout");
  // Go's Dialer.Timeout (net/dial.go:40): zero or less means no timeout.
  if (timeout.count() <= 0) return dial(network, address, 0);
  std::int64_t deadline =
      pi::fdDeadline(std::chrono::steady_clock::now() + timeout);
  return dial(network, address, deadline);
}

Conn DialContext(const Context& ctx, std::string_view network,
                 std::string_view address) {
  pi::checkInRun("net::DialContext");
  std::int64_t deadline = 0;
  if (auto d = ctx.Deadline()) deadline = pi::fdDeadline(*d);
  if (deadline < 0) {  // already passed: what Err says once the timer runs
    std::string net(network);
    target t = resolve("dial", net, address, false);
    throw opError("dial", net, "", t.text, nullptr, pi::kErrTimeout);
  }
  return dial(network, address, deadline, &ctx);
}

}  // namespace gort::net
