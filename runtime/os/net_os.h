// runtime/os/net_os.h: the socket and descriptor calls poll::FD and net
// need (Go's syscall package, the parts internal/poll and net use). All
// descriptors are made non-blocking and close-on-exec; EINTR is retried
// here. Calls return 0 or an error code: an OS errno (> 0), or one of the
// negative codes below, so the portable code needs no system header.
#ifndef GORT_RUNTIME_OS_NET_OS_H_
#define GORT_RUNTIME_OS_NET_OS_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace gort::os {

inline constexpr int kErrAgain = -1000;         // EAGAIN / EWOULDBLOCK
inline constexpr int kErrInProgress = -1001;    // EINPROGRESS (connect)
inline constexpr int kErrNoSuchHost = -1002;    // the name did not resolve
inline constexpr int kErrNotSupported = -1003;  // no sockets on this OS
inline constexpr int kErrPending = -1004;   // started; the poller reports it
inline constexpr int kErrCanceled = -1005;  // an operation canceled by ioCancel

// errstrOwn: the text of one of gort's own codes above, worded as in Go
// where Go has that error; nullptr for an OS error code. Each OS's errstr
// asks it first.
inline const char* errstrOwn(int err) {
  switch (err) {
    case kErrAgain:
      return "resource temporarily unavailable";
    case kErrInProgress:
      return "operation now in progress";
    case kErrNoSuchHost:
      return "no such host";
    case kErrNotSupported:
      return "not supported by gort on this OS yet";
    case kErrCanceled:
      return "operation was canceled";
    default:
      return nullptr;
  }
}

// Address families.
enum class Family { kInet4, kInet6, kUnix };

// SockAddr: an OS socket address, opaque to the portable code.
struct SockAddr {
  alignas(8) unsigned char data[128] = {};
  std::uint32_t len = 0;
};

// errstr: the error's text as Go's syscall package spells it
// ("connection refused").
std::string errstr(int err);
// osErrno: the OS errno for err (0 for the negative codes).
int osErrno(int err);
// genericErrno: the POSIX errno value of an OS error (the same on POSIX;
// Windows maps WSAECONNREFUSED to ECONNREFUSED...), 0 if it has none.
int genericErrno(int err);
// isPermErr: err means the descriptor cannot be polled (epoll's EPERM).
bool isPermErr(int err);

// fdSetNonblock: sets or clears O_NONBLOCK.
int fdSetNonblock(std::intptr_t fd, bool on);
// fdClose: close(2).
int fdClose(std::intptr_t fd);
// fdRead / fdWrite: one read(2) / write(2); *n gets the count.
int fdRead(std::intptr_t fd, void* buf, std::size_t len, std::size_t* n);
// sockReadHint: asks the kernel to say, with each read of TCP socket fd, how
// many bytes it left queued (Linux's TCP_INQ); false where it cannot.
bool sockReadHint(std::intptr_t fd);
// sockReadHinted: fdRead on a socket sockReadHint accepted; *drained is
// true when the kernel reported nothing left to read after this one (no
// data, no end of stream), false when it did or said nothing.
int sockReadHinted(std::intptr_t fd, void* buf, std::size_t len, std::size_t* n,
                   bool* drained);
// fdWrite fails with EPIPE rather than raising SIGPIPE (except on fds 1
// and 2, as Go), without touching the program's SIGPIPE handler.
int fdWrite(std::intptr_t fd, const void* buf, std::size_t len, std::size_t* n);
// sockWrite: one send(2) on a socket, MSG_NOSIGNAL (no SIGPIPE).
int sockWrite(std::intptr_t fd, const void* buf, std::size_t len,
              std::size_t* n);
// WriteFn: one write call of the shape of fdWrite.
using WriteFn = int (*)(std::intptr_t fd, const void* buf, std::size_t len,
                        std::size_t* n);
// fdWriter: the write call for descriptor fd, chosen once when it is
// wrapped, since its kind never changes: a socket's is sockWrite, a pipe's
// (and fds 1 and 2) fdWrite, any other's one plain write(2), which cannot
// raise SIGPIPE and so needs no signal mask around it (an eventfd, a file).
WriteFn fdWriter(std::intptr_t fd);

// IoVec: one buffer of a gathered write.
struct IoVec {
  const void* base;
  std::size_t len;
};
// sockWritev: one sendmsg(2) of n buffers (MSG_NOSIGNAL); *done bytes.
// Windows: not used (the completion model writes buffer by buffer).
int sockWritev(std::intptr_t fd, const IoVec* v, int n, std::size_t* done);

// sockSocket: a non-blocking socket of family f: a stream one, or with
// dgram a datagram one (UDP, unixgram).
int sockSocket(Family f, std::intptr_t* fd, bool dgram = false);
// sockRecvFrom: one recvfrom(2); *n bytes of the datagram (the rest of a
// longer one is dropped), its sender in *from (len 0 if it has none).
int sockRecvFrom(std::intptr_t fd, void* buf, std::size_t len, std::size_t* n,
                 SockAddr* from);
// sockSendTo: one sendto(2) of a datagram to `to` (MSG_NOSIGNAL).
int sockSendTo(std::intptr_t fd, const void* buf, std::size_t len,
               const SockAddr& to, std::size_t* n);
// sockListen: SO_REUSEADDR (inet), bind and listen.
int sockBind(std::intptr_t fd, const SockAddr& sa, bool reuseAddr);
int sockListen(std::intptr_t fd);
// sockAccept: accept4, non-blocking and close-on-exec.
int sockAccept(std::intptr_t fd, std::intptr_t* nfd);
// sockConnect: 0, kErrInProgress, or an error.
int sockConnect(std::intptr_t fd, const SockAddr& sa);
// sockError: the pending SO_ERROR in *err.
int sockError(std::intptr_t fd, int* err);
// sockNoDelay: TCP_NODELAY on (Go's default for TCP).
int sockNoDelay(std::intptr_t fd);
// sockKeepAlive: SO_KEEPALIVE on or off; sockKeepAlivePeriod: the idle time
// and the probe interval in seconds (Go's setKeepAlivePeriod
// (net/tcpsockopt_unix.go:15)).
int sockKeepAlive(std::intptr_t fd, bool on);
int sockKeepAlivePeriod(std::intptr_t fd, int secs);
// sockSetNoDelay: TCP_NODELAY on or off.
int sockSetNoDelay(std::intptr_t fd, bool on);
// sockLinger: SO_LINGER (secs < 0: off, the default).
int sockLinger(std::intptr_t fd, int secs);
// sockBuffer: SO_RCVBUF (read) or SO_SNDBUF.
int sockBuffer(std::intptr_t fd, bool read, int bytes);
// sockV6Only: IPV6_V6ONLY on or off (Go: on for "tcp6", off for "tcp").
int sockV6Only(std::intptr_t fd, bool on);
// lookupPort: a service name's TCP port ("http" -> 80; Go's LookupPort
// (net/lookup.go:408)), -1 if unknown.
int lookupPort(const std::string& service);
// sockShutdownWrite: shutdown(SHUT_WR).
int sockShutdownWrite(std::intptr_t fd);
// sockName / sockPeer: getsockname / getpeername.
int sockName(std::intptr_t fd, SockAddr* sa);
int sockPeer(std::intptr_t fd, SockAddr* sa);

// parseIP: a numeric IPv4 or IPv6 address into ip (16 bytes; IPv4 in the
// first 4) and *v4; false if s is not one.
// An IPv6 address may carry a zone ("fe80::1%eth0"): *zone gets its
// interface index if zone is not nullptr (else a zone is refused).
bool parseIP(const std::string& s, unsigned char* ip, bool* v4,
             std::uint32_t* zone = nullptr);
// IPAddr: one resolved address (16 bytes; IPv4 in the first 4).
struct IPAddr {
  unsigned char ip[16] = {};
  bool v4 = true;
};
// lookupHostAll: resolves a name (getaddrinfo; blocks the thread: call it in
// a BlockingSyscall); want4 / want6 restrict the family. Every address, up to
// max into out (IPv4 ones first, each family in the resolver's order), *n of
// them.
int lookupHostAll(const std::string& host, bool want4, bool want6, IPAddr* out,
                  int max, int* n);
// sockaddrInet / sockaddrUnix: build an address; false if it cannot be.
bool sockaddrInet(const unsigned char* ip, bool v4, int port, SockAddr* sa,
                  std::uint32_t zone = 0);
bool sockaddrUnix(const std::string& path, SockAddr* sa);
// sockaddrString: "127.0.0.1:5000", "[::1]:5000", "[fe80::1%eth0]:5000",
// or the unix path ("@name" for an abstract one); an IPv4-mapped IPv6
// address prints as IPv4 (Go's IP.String (net/ip.go:313)).
std::string sockaddrString(const SockAddr& sa);
// unlinkPath: removes a unix socket file.
void unlinkPath(const std::string& path);

// --- The completion model (Windows' overlapped I/O, Go's fd_windows.go) ---
// Where the OS starts an operation and the poller reports its completion
// (rather than readiness), poll::FD and net start each read, write, accept
// and connect here and park until netpoll hands back the operation's key
// and mode; the result is then read from the IoOp. On Linux ioCompletion()
// is false and the io* calls are never made.

// IoOp: one operation in flight, one per direction of a descriptor (Go's
// poll.operation); opaque to the portable code.
struct IoOp;

// ioCompletion: whether this OS uses the completion model.
bool ioCompletion();
// ioOpNew: an operation slot for mode on fd, reported to the poller with key
// (its pollDesc's); ioOpFree releases it once nothing is in flight.
IoOp* ioOpNew(std::intptr_t fd, std::uint64_t key, std::int32_t mode);
void ioOpFree(IoOp* op);
// ioRecv / ioSend / ioAccept / ioConnect start an operation: kErrPending
// (wait for the poller, then ioResult), 0 (done already: ioResult), or an
// error. ioAccept makes the new socket itself; ioConnect binds fd first.
int ioRecv(IoOp* op, void* buf, std::size_t len);
int ioSend(IoOp* op, const void* buf, std::size_t len);
// ioRecvFrom / ioSendTo: a datagram's WSARecvFrom / WSASendTo; once
// ioResult has the count, ioFrom gives a received one's sender.
int ioRecvFrom(IoOp* op, void* buf, std::size_t len);
int ioSendTo(IoOp* op, const void* buf, std::size_t len, const SockAddr& to);
void ioFrom(const IoOp* op, SockAddr* from);
int ioAccept(IoOp* op);
int ioConnect(IoOp* op, const SockAddr& sa);
// ioResult: a finished operation's outcome: 0 and *n bytes, kErrCanceled,
// or the OS error. For accept, *nfd gets the new socket (else it is
// closed), and kErrAgain (from ioAccept too) means that connection died
// before it was accepted: accept again.
int ioResult(IoOp* op, std::size_t* n, std::intptr_t* nfd);
// ioCancel asks the OS to cancel op (CancelIoEx); its completion still comes.
void ioCancel(IoOp* op);
// ioAbandon: op's goroutine is going away with op in flight (the end of a
// Run): cancel it and wait on this thread until the OS is done with it.
void ioAbandon(IoOp* op);
// ioThreadExit: the calling M's thread ends with its Run: cancel the
// operations it started that are still in flight, and wait until the OS is
// done with them, while the thread that must hear of it still exists.
void ioThreadExit();

}  // namespace gort::os

#endif  // GORT_RUNTIME_OS_NET_OS_H_
