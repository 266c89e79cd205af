// runtime/os/net_windows.cc: the socket seam (os/net_os.h) on Windows:
// Winsock sockets, and the completion model's overlapped operations (Go's
// internal/poll/fd_windows.go and net/fd_windows.go; syscall's Winsock
// calls).
//
// Sockets are overlapped and stay in blocking mode (an overlapped call on a
// non-blocking socket fails with WSAEWOULDBLOCK instead of pending), as in
// Go. As in Go, where every installed Winsock provider hands out real
// handles (XP1_IFS_HANDLES), a socket is set to
// FILE_SKIP_COMPLETION_PORT_ON_SUCCESS: an operation that finishes at once
// returns its result without a trip through the port; elsewhere every
// completion is queued and waited for.
//
// Error texts: the common Winsock errors read as Go reads them on Unix
// ("connection refused"), so messages are the same on every OS; others use the
// system's text. Errno() is the Winsock code (WSAECONNREFUSED, ...). No
// unix-domain sockets yet. Socket addresses are net_addr.cc's, shared with
// POSIX.
#include <winsock2.h>
// after winsock2.h:
#include <mstcpip.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "os/iocp_windows.h"
#include "os/net_addr.h"

namespace gort::os {

namespace {

// wsaStartup: Winsock, once per process (Go's syscall package does it at
// start).
void wsaStartup() {
  static std::once_flag once;
  std::call_once(once, [] {
    WSADATA d;
    WSAStartup(MAKEWORD(2, 2), &d);
  });
}

SOCKET sockOf(std::intptr_t fd) { return static_cast<SOCKET>(fd); }

int lastErr() { return WSAGetLastError(); }

// extension loads a Winsock extension function (AcceptEx, ConnectEx) once.
template <class F>
F extension(SOCKET s, GUID id, std::atomic<F>* cache) {
  F f = cache->load(std::memory_order_acquire);
  if (f != nullptr) return f;
  DWORD bytes = 0;
  if (WSAIoctl(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &id, sizeof id, &f,
               sizeof f, &bytes, nullptr, nullptr) != 0) {
    return nullptr;
  }
  cache->store(f, std::memory_order_release);
  return f;
}

std::atomic<LPFN_ACCEPTEX> acceptEx{nullptr};
std::atomic<LPFN_CONNECTEX> connectEx{nullptr};

// The IoOp pool (iocp_windows.h: IoOps are never freed), and every IoOp made,
// for ioThreadExit.
std::mutex opLock;
IoOp* opFree = nullptr;    // guarded by opLock
std::vector<IoOp*> opAll;  // guarded by opLock

// start readies op for a new operation, started by this thread.
void start(IoOp* op) {
  std::memset(&op->ov, 0, sizeof op->ov);
  op->qty = 0;
  op->len = 0;
  op->err = 0;
  op->connect = false;
  op->starter.store(GetCurrentThreadId(), std::memory_order_relaxed);
}

// inFlight: the OS has not yet written op's status (it writes it last).
bool inFlight(const IoOp* op) {
  return reinterpret_cast<const volatile ULONG_PTR&>(op->ov.Internal) ==
         static_cast<ULONG_PTR>(STATUS_PENDING);
}

// started: an overlapped call's outcome. Its completion is queued on the
// port whether it finished at once or is pending.
int started(bool ok) {
  if (ok) return kErrPending;
  int e = lastErr();
  return e == WSA_IO_PENDING ? kErrPending : e;
}

// skipSupported mirrors Go's init (internal/poll/fd_windows.go:56) in
// fd_windows.go, which sets skipSyncNotif: every provider must be an IFS one
// (checked once).
bool skipSupported() {
  static const bool ok = [] {
    wsaStartup();
    DWORD len = 0;
    WSAEnumProtocolsW(nullptr, nullptr, &len);
    if (len == 0) return false;
    auto* buf = static_cast<WSAPROTOCOL_INFOW*>(std::malloc(len));
    if (buf == nullptr) return false;
    int n = WSAEnumProtocolsW(nullptr, buf, &len);
    bool all = n > 0;
    for (int i = 0; i < n; i++) {
      if ((buf[i].dwServiceFlags1 & XP1_IFS_HANDLES) == 0) all = false;
    }
    std::free(buf);
    return all;
  }();
  return ok;
}

// overlappedResult: op's finished operation's error and byte count, read
// from its OVERLAPPED (Wine leaves the calls' own count arguments unset).
void overlappedResult(IoOp* op) {
  DWORD qty = 0;
  DWORD flags = 0;
  op->err = WSAGetOverlappedResult(op->fd, &op->ov, &qty, FALSE, &flags)
                ? 0
                : lastErr();
  op->qty = qty;
}

// finished: an overlapped call's outcome when its socket skips completion
// packets on success: 0 (done, result in op) if it succeeded at once.
// The byte count comes from the OVERLAPPED, as for a queued completion
// (Wine leaves the call's own count argument unset).
int finished(IoOp* op, bool ok) {
  if (ok && op->skipSync) {
    overlappedResult(op);
    return 0;
  }
  return started(ok);
}

// recvFinished: finished for a receive, where a datagram longer than the
// buffer failing at once (WSAEMSGSIZE) counts as a read of the buffer's
// worth (see ioResult).
int recvFinished(IoOp* op, bool ok) {
  if (!ok && lastErr() == WSAEMSGSIZE) {
    op->err = 0;
    op->qty = op->len;
    return 0;
  }
  return finished(op, ok);
}

// acceptDied: AcceptEx failed for the new connection only (reset before it
// was accepted): accept again, as Go's acceptOne
// (internal/poll/fd_windows.go:938) loop does.
bool acceptDied(int err) {
  return err == WSAECONNRESET || err == ERROR_NETNAME_DELETED;
}

void closeAccepted(IoOp* op) {
  if (op->accepted != INVALID_SOCKET) closesocket(op->accepted);
  op->accepted = INVALID_SOCKET;
}

int newSocket(int family, SOCKET* s, bool dgram = false) {
  wsaStartup();
  *s = WSASocketW(family, dgram ? SOCK_DGRAM : SOCK_STREAM,
                  dgram ? IPPROTO_UDP : IPPROTO_TCP, nullptr, 0,
                  WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
  if (*s == INVALID_SOCKET) return lastErr();
  if (dgram) {
    // Go's FD.Init (internal/poll/fd_windows.go:283) for UDP: an ICMP
    // port-unreachable would otherwise fail the next WSARecvFrom with
    // WSAECONNRESET.
    BOOL off = FALSE;
    DWORD ret = 0;
    WSAIoctl(*s, SIO_UDP_CONNRESET, &off, sizeof off, nullptr, 0, &ret, nullptr,
             nullptr);
  }
  return 0;
}

}  // namespace

std::string errstr(int err) {
  if (const char* own = errstrOwn(err)) return own;
  switch (err) {
    case WSAECONNREFUSED:
      return "connection refused";
    case WSAECONNRESET:
      return "connection reset by peer";
    case WSAECONNABORTED:
      return "software caused connection abort";
    case WSAEADDRINUSE:
      return "address already in use";
    case WSAEADDRNOTAVAIL:
      return "cannot assign requested address";
    case WSAENETUNREACH:
      return "network is unreachable";
    case WSAEHOSTUNREACH:
      return "no route to host";
    case WSAETIMEDOUT:
      return "connection timed out";
    case WSAENOTCONN:
      return "transport endpoint is not connected";
    case WSAESHUTDOWN:
      return "cannot send after transport endpoint shutdown";
    case WSAEAFNOSUPPORT:
      return "address family not supported by protocol";
    case WSAEINVAL:
      return "invalid argument";
    case WSAEMFILE:
      return "too many open files";
    case WSAENOBUFS:
      return "no buffer space available";
    case WSAEACCES:
      return "permission denied";
    case WSAENOTSOCK:
      return "socket operation on non-socket";
    case ERROR_NETNAME_DELETED:
      return "connection reset by peer";
    default:
      break;
  }
  char buf[256];
  DWORD n = FormatMessageA(
      FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
      static_cast<DWORD>(err), 0, buf, sizeof buf, nullptr);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
                   buf[n - 1] == '.' || buf[n - 1] == ' ')) {
    n--;
  }
  if (n == 0) return "winsock error " + std::to_string(err);
  return std::string(buf, n);
}

int osErrno(int err) { return err > 0 ? err : 0; }

bool isPermErr(int) { return false; }

int genericErrno(int err) {
  switch (err) {
    case WSAECONNREFUSED:
      return ECONNREFUSED;
    case WSAECONNRESET:
      return ECONNRESET;
    case WSAECONNABORTED:
      return ECONNABORTED;
    case WSAETIMEDOUT:
      return ETIMEDOUT;
    case WSAEADDRINUSE:
      return EADDRINUSE;
    case WSAEADDRNOTAVAIL:
      return EADDRNOTAVAIL;
    case WSAENETUNREACH:
      return ENETUNREACH;
    case WSAEHOSTUNREACH:
      return EHOSTUNREACH;
    case WSAENETDOWN:
      return ENETDOWN;
    case WSAENETRESET:
      return ENETRESET;
    case WSAENOTCONN:
      return ENOTCONN;
    case WSAEWOULDBLOCK:
      return EWOULDBLOCK;
    case WSAEINPROGRESS:
      return EINPROGRESS;
    case WSAEMSGSIZE:
      return EMSGSIZE;
    case WSAEINVAL:
      return EINVAL;
    case WSAEACCES:
      return EACCES;
    case WSAEMFILE:
      return EMFILE;
    case WSAENOBUFS:
      return ENOBUFS;
    case WSAESHUTDOWN:
      return EPIPE;
    default:
      return 0;
  }
}

// fdSetNonblock: nothing to do: overlapped sockets stay blocking (above).
int fdSetNonblock(std::intptr_t, bool) { return 0; }

int fdClose(std::intptr_t fd) {
  return closesocket(sockOf(fd)) != 0 ? lastErr() : 0;
}

int fdRead(std::intptr_t fd, void* buf, std::size_t len, std::size_t* n) {
  int r = recv(sockOf(fd), static_cast<char*>(buf),
               static_cast<int>(len > 0x7fffffff ? 0x7fffffff : len), 0);
  if (r < 0) return lastErr();
  *n = static_cast<std::size_t>(r);
  return 0;
}

bool sockReadHint(std::intptr_t) { return false; }

int sockReadHinted(std::intptr_t fd, void* buf, std::size_t len, std::size_t* n,
                   bool* drained) {
  *drained = false;
  return fdRead(fd, buf, len, n);
}

int fdWrite(std::intptr_t fd, const void* buf, std::size_t len,
            std::size_t* n) {
  int r = send(sockOf(fd), static_cast<const char*>(buf),
               static_cast<int>(len > 0x7fffffff ? 0x7fffffff : len), 0);
  if (r < 0) return lastErr();
  *n = static_cast<std::size_t>(r);
  return 0;
}

int sockWrite(std::intptr_t fd, const void* buf, std::size_t len,
              std::size_t* n) {
  return fdWrite(fd, buf, len, n);  // Winsock raises no SIGPIPE
}

// fdWriter: Windows raises no SIGPIPE: every descriptor writes with fdWrite.
WriteFn fdWriter(std::intptr_t) { return fdWrite; }

int sockWritev(std::intptr_t, const IoVec*, int, std::size_t*) {
  return kErrNotSupported;  // fdWritev writes buffer by buffer here
}

int sockSocket(Family f, std::intptr_t* fd, bool dgram) {
  if (f == Family::kUnix) return kErrNotSupported;
  SOCKET s;
  if (int err =
          newSocket(f == Family::kInet4 ? AF_INET : AF_INET6, &s, dgram)) {
    return err;
  }
  *fd = static_cast<std::intptr_t>(s);
  return 0;
}

// sockRecvFrom / sockSendTo: not used (the completion model's ioRecvFrom
// and ioSendTo are).
int sockRecvFrom(std::intptr_t, void*, std::size_t, std::size_t*, SockAddr*) {
  return kErrNotSupported;
}

int sockSendTo(std::intptr_t, const void*, std::size_t, const SockAddr&,
               std::size_t*) {
  return kErrNotSupported;
}

int sockBind(std::intptr_t fd, const SockAddr& sa, bool reuseAddr) {
  // Windows' SO_REUSEADDR would let another socket steal the port; its
  // default already allows rebinding a port in TIME_WAIT (Go sets nothing).
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  return bind(sockOf(fd), a, static_cast<int>(sa.len)) != 0 ? lastErr() : 0;
}

int sockListen(std::intptr_t fd) {
  return listen(sockOf(fd), SOMAXCONN) != 0 ? lastErr() : 0;
}

int sockAccept(std::intptr_t fd, std::intptr_t* nfd) {
  SOCKET s = accept(sockOf(fd), nullptr, nullptr);
  if (s == INVALID_SOCKET) return lastErr();
  *nfd = static_cast<std::intptr_t>(s);
  return 0;
}

int sockConnect(std::intptr_t fd, const SockAddr& sa) {
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  return connect(sockOf(fd), a, static_cast<int>(sa.len)) != 0 ? lastErr() : 0;
}

int sockError(std::intptr_t fd, int* err) {
  int len = sizeof *err;
  return getsockopt(sockOf(fd), SOL_SOCKET, SO_ERROR,
                    reinterpret_cast<char*>(err), &len) != 0
             ? lastErr()
             : 0;
}

int sockNoDelay(std::intptr_t fd) {
  BOOL one = TRUE;
  return setsockopt(sockOf(fd), IPPROTO_TCP, TCP_NODELAY,
                    reinterpret_cast<const char*>(&one), sizeof one) != 0
             ? lastErr()
             : 0;
}

namespace {
int setInt(std::intptr_t fd, int level, int opt, int v) {
  return setsockopt(sockOf(fd), level, opt, reinterpret_cast<const char*>(&v),
                    sizeof v) != 0
             ? lastErr()
             : 0;
}
}  // namespace

int sockKeepAlive(std::intptr_t fd, bool on) {
  return setInt(fd, SOL_SOCKET, SO_KEEPALIVE, on ? 1 : 0);
}

int sockKeepAlivePeriod(std::intptr_t fd, int secs) {
  // Go's Windows setKeepAlivePeriod: SIO_KEEPALIVE_VALS, milliseconds.
  tcp_keepalive ka{1, static_cast<ULONG>(secs) * 1000,
                   static_cast<ULONG>(secs) * 1000};
  DWORD ret = 0;
  return WSAIoctl(sockOf(fd), SIO_KEEPALIVE_VALS, &ka, sizeof ka, nullptr, 0,
                  &ret, nullptr, nullptr) != 0
             ? lastErr()
             : 0;
}

int sockSetNoDelay(std::intptr_t fd, bool on) {
  return setInt(fd, IPPROTO_TCP, TCP_NODELAY, on ? 1 : 0);
}

int sockLinger(std::intptr_t fd, int secs) {
  linger l{static_cast<u_short>(secs >= 0 ? 1 : 0),
           static_cast<u_short>(secs >= 0 ? secs : 0)};
  return setsockopt(sockOf(fd), SOL_SOCKET, SO_LINGER,
                    reinterpret_cast<const char*>(&l), sizeof l) != 0
             ? lastErr()
             : 0;
}

int sockBuffer(std::intptr_t fd, bool read, int bytes) {
  return setInt(fd, SOL_SOCKET, read ? SO_RCVBUF : SO_SNDBUF, bytes);
}

int sockV6Only(std::intptr_t fd, bool on) {
  DWORD v = on ? 1 : 0;
  return setsockopt(sockOf(fd), IPPROTO_IPV6, IPV6_V6ONLY,
                    reinterpret_cast<const char*>(&v), sizeof v) != 0
             ? lastErr()
             : 0;
}

// zoneIndex / zoneName: numeric zones only on Windows for now.
std::uint32_t zoneIndex(const std::string& zone) {
  char* end = nullptr;
  unsigned long n = std::strtoul(zone.c_str(), &end, 10);
  return *end == '\0' ? static_cast<std::uint32_t>(n) : 0;
}

std::string zoneName(std::uint32_t index) { return std::to_string(index); }

int sockShutdownWrite(std::intptr_t fd) {
  return shutdown(sockOf(fd), SD_SEND) != 0 ? lastErr() : 0;
}

bool sockaddrUnix(const std::string&, SockAddr*) { return false; }

std::string sockaddrLocalString(const SockAddr&) { return ""; }

void netStartup() { wsaStartup(); }

int sockErr() { return lastErr(); }

void unlinkPath(const std::string&) {}

// --- the completion model ---

bool ioCompletion() { return true; }

IoOp* ioOpNew(std::intptr_t fd, std::uint64_t key, std::int32_t mode) {
  IoOp* op;
  {
    std::lock_guard<std::mutex> g(opLock);
    op = opFree;
    if (op != nullptr) opFree = op->next;
  }
  if (op == nullptr) {
    op = new IoOp;
    std::lock_guard<std::mutex> g(opLock);
    opAll.push_back(op);
  }
  op->fd = sockOf(fd);
  op->key = key;
  op->mode = mode;
  op->accepted = INVALID_SOCKET;
  op->next = nullptr;
  // Already associated with the port (netpollopen); both of a socket's
  // operations make the same call and get the same answer.
  // $GORT_NETPOLL_SKIPSYNC=1 or 0 forces the choice (tests: Wine has a
  // non-IFS provider, so it would never be taken there).
  const char* force = std::getenv("GORT_NETPOLL_SKIPSYNC");
  bool want =
      force != nullptr && *force != '\0' ? *force == '1' : skipSupported();
  op->skipSync = want && SetFileCompletionNotificationModes(
                             reinterpret_cast<HANDLE>(op->fd),
                             FILE_SKIP_COMPLETION_PORT_ON_SUCCESS |
                                 FILE_SKIP_SET_EVENT_ON_HANDLE);
  start(op);
  return op;
}

void ioOpFree(IoOp* op) {
  if (op == nullptr) return;
  closeAccepted(op);
  std::lock_guard<std::mutex> g(opLock);
  op->next = opFree;
  opFree = op;
}

// ioRecv mirrors Go's FD.Read (internal/poll/fd_windows.go:408)'s WSARecv.
int ioRecv(IoOp* op, void* buf, std::size_t len) {
  start(op);
  op->len = static_cast<DWORD>(len);
  WSABUF b;
  b.len = static_cast<ULONG>(len);
  b.buf = static_cast<char*>(buf);
  DWORD flags = 0;
  return recvFinished(
      op, WSARecv(op->fd, &b, 1, nullptr, &flags, &op->ov, nullptr) == 0);
}

// ioSend mirrors Go's FD.Write (internal/poll/fd_windows.go:655)'s WSASend.
int ioSend(IoOp* op, const void* buf, std::size_t len) {
  start(op);
  WSABUF b;
  b.len = static_cast<ULONG>(len);
  b.buf = const_cast<char*>(static_cast<const char*>(buf));
  return finished(op,
                  WSASend(op->fd, &b, 1, nullptr, 0, &op->ov, nullptr) == 0);
}

// ioRecvFrom mirrors Go's FD.ReadFrom (internal/poll/fd_windows.go:568)'s
// WSARecvFrom; the sender lands in op->peer.
int ioRecvFrom(IoOp* op, void* buf, std::size_t len) {
  start(op);
  op->len = static_cast<DWORD>(len);
  op->peerLen = sizeof op->peer;
  WSABUF b;
  b.len = static_cast<ULONG>(len);
  b.buf = static_cast<char*>(buf);
  DWORD flags = 0;
  return recvFinished(op, WSARecvFrom(op->fd, &b, 1, nullptr, &flags,
                                      reinterpret_cast<sockaddr*>(&op->peer),
                                      &op->peerLen, &op->ov, nullptr) == 0);
}

// ioSendTo mirrors Go's FD.WriteTo (internal/poll/fd_windows.go:814)'s
// WSASendTo; the target is copied into op first.
int ioSendTo(IoOp* op, const void* buf, std::size_t len, const SockAddr& to) {
  start(op);
  std::memcpy(&op->peer, to.data, to.len);
  op->peerLen = static_cast<INT>(to.len);
  WSABUF b;
  b.len = static_cast<ULONG>(len);
  b.buf = const_cast<char*>(static_cast<const char*>(buf));
  return finished(op, WSASendTo(op->fd, &b, 1, nullptr, 0,
                                reinterpret_cast<sockaddr*>(&op->peer),
                                op->peerLen, &op->ov, nullptr) == 0);
}

void ioFrom(const IoOp* op, SockAddr* from) {
  std::size_t n = op->peerLen > 0 ? static_cast<std::size_t>(op->peerLen) : 0;
  if (n > sizeof from->data) n = sizeof from->data;
  std::memcpy(from->data, &op->peer, n);
  from->len = static_cast<std::uint32_t>(n);
}

// ioAccept mirrors Go's FD.acceptOne (internal/poll/fd_windows.go:938):
// AcceptEx into a new socket of the listener's family.
int ioAccept(IoOp* op) {
  start(op);
  closeAccepted(op);
  WSAPROTOCOL_INFOW info;
  int len = sizeof info;
  if (getsockopt(op->fd, SOL_SOCKET, SO_PROTOCOL_INFOW,
                 reinterpret_cast<char*>(&info), &len) != 0) {
    return lastErr();
  }
  if (int err = newSocket(info.iAddressFamily, &op->accepted)) return err;
  LPFN_ACCEPTEX fn = extension(op->fd, WSAID_ACCEPTEX, &acceptEx);
  if (fn == nullptr) {
    closeAccepted(op);
    return lastErr();
  }
  DWORD bytes = 0;
  constexpr DWORD kAddr = sizeof(sockaddr_storage) + 16;
  int res = finished(op, fn(op->fd, op->accepted, op->addrs, 0, kAddr, kAddr,
                            &bytes, &op->ov) != FALSE);
  if (res != kErrPending && res != 0) closeAccepted(op);
  return acceptDied(res) ? kErrAgain : res;
}

// ioConnect mirrors Go's netFD.connect (net/fd_windows.go:59) on Windows: bind
// to the wildcard address, then ConnectEx.
int ioConnect(IoOp* op, const SockAddr& sa) {
  start(op);
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  sockaddr_storage any{};
  any.ss_family = a->sa_family;
  int anyLen =
      a->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (bind(op->fd, reinterpret_cast<sockaddr*>(&any), anyLen) != 0) {
    return lastErr();
  }
  LPFN_CONNECTEX fn = extension(op->fd, WSAID_CONNECTEX, &connectEx);
  if (fn == nullptr) return lastErr();
  op->connect = true;
  return finished(op, fn(op->fd, a, static_cast<int>(sa.len), nullptr, 0,
                         nullptr, &op->ov) != FALSE);
}

bool ioComplete(IoOp* op) {
  // Still pending: the packet is an earlier operation's, late (an abandoned
  // one, or one whose socket could not skip packets after all).
  if (reinterpret_cast<volatile ULONG_PTR&>(op->ov.Internal) ==
      static_cast<ULONG_PTR>(STATUS_PENDING)) {
    return false;
  }
  overlappedResult(op);
  return true;
}

int ioResult(IoOp* op, std::size_t* n, std::intptr_t* nfd) {
  if (op->err == WSAEMSGSIZE) {
    // A datagram longer than the buffer: the buffer's worth, the rest
    // dropped, as on Unix (Go on Windows returns the error as well).
    op->err = 0;
    op->qty = op->len;
  }
  *n = op->qty;
  if (op->err == WSA_OPERATION_ABORTED || op->err == ERROR_OPERATION_ABORTED) {
    *n = 0;
    closeAccepted(op);
    return kErrCanceled;
  }
  if (op->err != 0) {
    bool accepting = op->accepted != INVALID_SOCKET;
    *n = 0;
    closeAccepted(op);
    if (accepting && acceptDied(op->err)) return kErrAgain;
    return op->err;
  }
  if (op->accepted != INVALID_SOCKET) {
    // Gives the new socket its addresses and lets shutdown work on it.
    SOCKET l = op->fd;
    setsockopt(op->accepted, SOL_SOCKET, SO_UPDATE_ACCEPT_CONTEXT,
               reinterpret_cast<const char*>(&l), sizeof l);
    if (nfd != nullptr) {
      *nfd = static_cast<std::intptr_t>(op->accepted);
      op->accepted = INVALID_SOCKET;
    } else {
      closeAccepted(op);
    }
  } else if (op->connect) {
    // A finished ConnectEx: the connect context lets getpeername and
    // shutdown work on the socket.
    setsockopt(op->fd, SOL_SOCKET, SO_UPDATE_CONNECT_CONTEXT, nullptr, 0);
  }
  return 0;
}

void ioCancel(IoOp* op) {
  CancelIoEx(reinterpret_cast<HANDLE>(op->fd), &op->ov);
}

void ioAbandon(IoOp* op) {
  CancelIoEx(reinterpret_cast<HANDLE>(op->fd), &op->ov);
  // The OS writes the status last; until then it owns op and the buffer.
  while (inFlight(op)) Sleep(1);
}

// Wine writes a finished operation's status from a call it queues to the
// thread that started the operation. Once that thread has exited, a
// cancelled operation can stay "pending" for good (seen: about one Run in
// two that ended with the pprof server's AcceptEx in flight, its starter
// an M that had exited; CancelIoEx said yes and the status never came), and
// ioAbandon, unwinding the goroutine after the Ms are gone, waited forever.
// So each M cancels what it started before its thread goes, and waits
// alertably for the status. Windows writes it from the kernel either way.
void ioThreadExit() {
  DWORD self = GetCurrentThreadId();
  std::vector<IoOp*> mine;
  {
    std::lock_guard<std::mutex> g(opLock);
    for (IoOp* op : opAll) {
      if (op->starter.load(std::memory_order_relaxed) == self && inFlight(op)) {
        mine.push_back(op);
      }
    }
  }
  for (IoOp* op : mine) CancelIoEx(reinterpret_cast<HANDLE>(op->fd), &op->ov);
  for (IoOp* op : mine) {
    // Bounded: past it, ioAbandon still waits before the frame goes.
    for (int ms = 0; inFlight(op) && ms < 1000; ms++) SleepEx(1, TRUE);
  }
}

}  // namespace gort::os
