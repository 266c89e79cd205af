// gort/net.h: TCP, UDP and unix-domain sockets whose blocking calls park
// the goroutine on the network poller, not the thread (Go's package net).
#ifndef GORT_NET_H_
#define GORT_NET_H_

#include <chrono>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "gort/context.h"
#include "gort/poll.h"

namespace gort::net {

namespace internal {
struct connImpl;
struct listenerImpl;
struct packetImpl;
struct access;
}  // namespace internal

// An I/O error (defined in gort/poll.h, where the descriptor layer below
// net throws it, as Go's net wraps internal/poll's errors).
using Error = poll::Error;

// A value or the Error that kept it from being made: Go's (T, error) pair,
// for the Try forms of the calls a server loop makes.
template <class T>
class Result {
 public:
  // A success holding v.
  Result(T v) : v_(std::in_place_index<0>, std::move(v)) {}  // NOLINT
  // A failure holding e.
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT
  // Whether this holds a value (err == nil).
  bool ok() const { return v_.index() == 0; }
  // The same as ok().
  explicit operator bool() const { return ok(); }
  // The value; throws the Error if there is none.
  T& value() {
    if (!ok()) throw std::get<1>(v_);
    return std::get<0>(v_);
  }
  // The value; ok() must be true.
  T& operator*() { return *std::get_if<0>(&v_); }
  // The value's members; ok() must be true.
  T* operator->() { return std::get_if<0>(&v_); }
  // The Error, or nullptr on success.
  const Error* error() const { return std::get_if<1>(&v_); }

 private:
  std::variant<T, Error> v_;
};

// A connection (Go's net.Conn (net/net.go:113)): a stream, or a connected
// datagram socket from Dial("udp" | "unixgram", ...), where each Write is one
// packet and each Read takes one (0 then means an empty packet, not EOF).
// Move-only, closed by its destructor. Close may run while other goroutines
// use it; the destructor may not.
class Conn {
 public:
  // An empty connection.
  Conn() = default;
  // Moves the connection out of other, leaving it empty.
  Conn(Conn&& other) noexcept;
  // Closes this connection and takes other's.
  Conn& operator=(Conn&& other) noexcept;
  // Not copyable: one owner per socket.
  Conn(const Conn&) = delete;
  // Not copyable: one owner per socket.
  Conn& operator=(const Conn&) = delete;
  // Closes the connection if it is open.
  ~Conn();

  // Parks until some bytes arrive (returns 1..n), EOF (returns 0), or throws.
  std::size_t Read(void* buf, std::size_t n);
  // Writes all n bytes or throws; returns n.
  std::size_t Write(const void* buf, std::size_t n);
  // Writes every buffer in order with as few system calls as it can
  // (Go's net.Buffers (net/net.go:712): writev); returns the total or throws,
  // the Error's Written() saying how much went out.
  std::size_t WriteBuffers(std::span<const std::string_view> buffers);
  // Read returning its Error instead of throwing (n, err := c.Read(buf)).
  Result<std::size_t> TryRead(void* buf, std::size_t n) {
    try {
      return Read(buf, n);
    } catch (const Error& e) {
      return e;
    }
  }
  // Write returning its Error instead of throwing; the count written before
  // an error is not reported.
  Result<std::size_t> TryWrite(const void* buf, std::size_t n) {
    try {
      return Write(buf, n);
    } catch (const Error& e) {
      return e;
    }
  }
  // Sets the read and write deadlines; time_point{} clears them.
  void SetDeadline(std::chrono::steady_clock::time_point t);
  // Sets the read deadline; time_point{} clears it.
  void SetReadDeadline(std::chrono::steady_clock::time_point t);
  // Sets the write deadline; time_point{} clears it.
  void SetWriteDeadline(std::chrono::steady_clock::time_point t);
  // TCP_NODELAY (Go's default: on): false lets the OS delay small writes.
  void SetNoDelay(bool on);
  // SO_KEEPALIVE (Go's default: on, every 15 s).
  void SetKeepAlive(bool on);
  // The keep-alive idle time and probe interval, rounded up to seconds.
  void SetKeepAlivePeriod(std::chrono::nanoseconds period);
  // SO_LINGER: < 0 (the default) closes in the background, 0 resets the
  // connection on Close, > 0 lingers that many seconds.
  void SetLinger(int secs);
  // SO_RCVBUF: the OS receive buffer's size.
  void SetReadBuffer(int bytes);
  // SO_SNDBUF: the OS send buffer's size.
  void SetWriteBuffer(int bytes);
  // Shuts down the writing side (shutdown(SHUT_WR)); the peer reads EOF.
  void CloseWrite();
  // Closes; goroutines blocked in Read or Write get Closed() errors.
  void Close();
  // The local address: "127.0.0.1:5000", "[::1]:5000", or a unix path.
  std::string LocalAddr() const;
  // The remote address, in the same form.
  std::string RemoteAddr() const;
  // Whether this holds a connection (not empty, not moved from).
  bool Valid() const { return impl_ != nullptr; }

 private:
  friend struct internal::access;
  internal::connImpl* impl_ = nullptr;
};

// A stream listener (Go's net.Listener (net/net.go:384)); move-only, closed by
// its destructor.
class Listener {
 public:
  // An empty listener.
  Listener() = default;
  // Moves the listener out of other, leaving it empty.
  Listener(Listener&& other) noexcept;
  // Closes this listener and takes other's.
  Listener& operator=(Listener&& other) noexcept;
  // Not copyable: one owner per socket.
  Listener(const Listener&) = delete;
  // Not copyable: one owner per socket.
  Listener& operator=(const Listener&) = delete;
  // Closes the listener if it is open.
  ~Listener();

  // Parks until a connection arrives; Close() wakes it with a Closed() error.
  Conn Accept();
  // Accept returning its Error instead of throwing (c, err := l.Accept()).
  Result<Conn> TryAccept() {
    try {
      return Accept();
    } catch (const Error& e) {
      return e;
    }
  }
  // Closes the listener (and removes a unix socket file it created).
  void Close();
  // Accept fails with a Timeout() error after t; time_point{} clears it.
  void SetDeadline(std::chrono::steady_clock::time_point t);
  // The address listened on, with the port chosen if 0 was asked.
  std::string Addr() const;
  // Whether this holds a listener (not empty, not moved from).
  bool Valid() const { return impl_ != nullptr; }

 private:
  friend struct internal::access;
  internal::listenerImpl* impl_ = nullptr;
};

// What PacketConn::ReadFrom returns: the bytes read and the sender.
struct Packet {
  // The number of bytes of the datagram copied into the buffer.
  std::size_t n = 0;
  // The sender, as Conn::RemoteAddr spells it ("" for an unnamed one).
  std::string addr;
};

// A datagram socket (Go's net.PacketConn (net/net.go:309)) from ListenPacket;
// move-only, closed by its destructor. Close may run while other goroutines
// use it; the destructor may not.
class PacketConn {
 public:
  // An empty packet connection.
  PacketConn() = default;
  // Moves the socket out of other, leaving it empty.
  PacketConn(PacketConn&& other) noexcept;
  // Closes this socket and takes other's.
  PacketConn& operator=(PacketConn&& other) noexcept;
  // Not copyable: one owner per socket.
  PacketConn(const PacketConn&) = delete;
  // Not copyable: one owner per socket.
  PacketConn& operator=(const PacketConn&) = delete;
  // Closes the socket if it is open.
  ~PacketConn();

  // Parks until a datagram arrives; copies up to n bytes of it into buf
  // (the rest of a longer one is lost, as in Go) and returns the count and
  // the sender.
  Packet ReadFrom(void* buf, std::size_t n);
  // ReadFrom that stores the sender in *addr, reusing its capacity (no
  // allocation per packet); returns the count.
  std::size_t ReadFrom(void* buf, std::size_t n, std::string* addr);
  // Sends buf as one datagram to addr ("host:port", or a unix path for
  // unixgram); returns n or throws.
  std::size_t WriteTo(const void* buf, std::size_t n, std::string_view addr);
  // Sets the read and write deadlines; time_point{} clears them.
  void SetDeadline(std::chrono::steady_clock::time_point t);
  // Sets the read deadline; time_point{} clears it.
  void SetReadDeadline(std::chrono::steady_clock::time_point t);
  // Sets the write deadline; time_point{} clears it.
  void SetWriteDeadline(std::chrono::steady_clock::time_point t);
  // SO_RCVBUF: the OS receive buffer's size.
  void SetReadBuffer(int bytes);
  // SO_SNDBUF: the OS send buffer's size.
  void SetWriteBuffer(int bytes);
  // Closes; goroutines blocked in ReadFrom or WriteTo get Closed() errors.
  void Close();
  // The local address, with the port chosen if 0 was asked.
  std::string LocalAddr() const;
  // Whether this holds a socket (not empty, not moved from).
  bool Valid() const { return impl_ != nullptr; }

 private:
  friend struct internal::access;
  internal::packetImpl* impl_ = nullptr;
};

// Splits "host:port", "[v6]:port" or "[v6%zone]:port" into host and port
// (Go's SplitHostPort (net/ipsock.go:164)); throws Error on a malformed
// address.
std::pair<std::string, std::string> SplitHostPort(std::string_view hostport);
// Joins host and port into "host:port", bracketing a host with a colon
// (Go's JoinHostPort (net/ipsock.go:235)).
std::string JoinHostPort(std::string_view host, std::string_view port);

// Listens on network "tcp", "tcp4", "tcp6" or "unix" at address ("host:port",
// port 0 picks a free one; a path for unix).
Listener Listen(std::string_view network, std::string_view address);
// Listens for datagrams on network "udp", "udp4", "udp6" or "unixgram" at
// address (Go's ListenPacket (net/dial.go:739)); unlike a unix Listener's,
// a unixgram socket's file stays after Close, as in Go.
PacketConn ListenPacket(std::string_view network, std::string_view address);
// Connects to address on network: "tcp", "tcp4", "tcp6", "unix", or the
// datagram networks "udp", "udp4", "udp6", "unixgram" (a connected socket
// that sends to and receives from that address only). A name resolving to
// several addresses is tried address by address, the deadline shared out
// among them, and the first address's error is thrown if none connects
// (Go's dialSerial (net/dial.go:523)); for "tcp" with both IP families, the
// first address's family is raced against the other, started 300 ms later
// or when the first fails (Go's dialParallel (net/dial.go:449)).
Conn Dial(std::string_view network, std::string_view address);
// Dial that fails with a Timeout() error if not connected within timeout
// (zero or less: no timeout, as Go's Dialer.Timeout (net/dial.go:40)).
Conn DialTimeout(std::string_view network, std::string_view address,
                 std::chrono::nanoseconds timeout);
// Dial bounded by ctx (Go's Dialer.DialContext (net/dial.go:376)): its deadline
// is the connect's, and cancelling it stops the connect with an "operation was
// canceled" error (a passed deadline: a Timeout() error).
Conn DialContext(const Context& ctx, std::string_view network,
                 std::string_view address);

}  // namespace gort::net

#endif  // GORT_NET_H_
