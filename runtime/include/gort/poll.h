// gort/poll.h: any pollable descriptor the program already has (a pipe, an
// eventfd, a socket), read and written through the network poller (Go's
// internal/poll.FD, as os.NewFile uses it).
#ifndef GORT_POLL_H_
#define GORT_POLL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>

namespace gort::poll {

namespace internal {
struct fdImpl;
}  // namespace internal

// An I/O error, thrown by FD and by gort::net (as gort::net::Error);
// what() is Go's message, e.g.
// "read tcp 127.0.0.1:41234->127.0.0.1:5000: i/o timeout".
class Error : public std::runtime_error {
 public:
  // Makes an error with Go's message text and what kind of failure it is;
  // code is the portable error, written the bytes a write got out first.
  Error(const std::string& message, bool timeout, bool closed, int err,
        std::error_code code = {}, std::size_t written = 0)
      : std::runtime_error(message),
        timeout_(timeout),
        closed_(closed),
        errno_(err),
        code_(code),
        written_(written) {}
  // Whether a deadline passed.
  bool Timeout() const { return timeout_; }
  // Whether the connection was closed ("use of closed network connection").
  bool Closed() const { return closed_; }
  // The OS error, 0 if none (Windows: a WSA code such as 10061).
  int Errno() const { return errno_; }
  // The error as std::system_error carries it: in the generic category
  // where the OS error has a POSIX meaning, so
  // e.code() == std::errc::connection_refused holds on every OS; a timeout
  // is std::errc::timed_out; empty if there is no OS error.
  const std::error_code& code() const noexcept { return code_; }
  // How many bytes a failed Write wrote before failing (0 for other calls).
  std::size_t Written() const { return written_; }

 private:
  bool timeout_;
  bool closed_;
  int errno_;
  std::error_code code_;
  std::size_t written_;
};

// A descriptor owned by the poller; move-only, closed by its destructor.
// Errors are Error (gort::net::Error), as for net::Conn.
class FD {
 public:
  // An empty FD.
  FD() = default;
  // Takes ownership of fd and makes it non-blocking (Windows: a SOCKET).
  explicit FD(std::intptr_t fd);
  // Moves the descriptor out of other, leaving it empty.
  FD(FD&& other) noexcept;
  // Closes this descriptor and takes other's.
  FD& operator=(FD&& other) noexcept;
  // Not copyable: one owner per descriptor.
  FD(const FD&) = delete;
  // Not copyable: one owner per descriptor.
  FD& operator=(const FD&) = delete;
  // Closes the descriptor if it is open.
  ~FD();

  // Parks until some bytes arrive (returns 1..n), EOF (returns 0), or throws.
  std::size_t Read(void* buf, std::size_t n);
  // Writes all n bytes or throws; returns n.
  std::size_t Write(const void* buf, std::size_t n);
  // Sets the read deadline; time_point{} clears it.
  void SetReadDeadline(std::chrono::steady_clock::time_point t);
  // Sets the write deadline; time_point{} clears it.
  void SetWriteDeadline(std::chrono::steady_clock::time_point t);
  // Closes; goroutines blocked in Read or Write get Closed() errors.
  void Close();
  // The OS descriptor, -1 once closed or if empty.
  std::intptr_t Sysfd() const;

 private:
  internal::fdImpl* impl_ = nullptr;
};

}  // namespace gort::poll

#endif  // GORT_POLL_H_
