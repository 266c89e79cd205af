// pkg/internal/poll/poll_fd.h: the descriptor layer shared by poll::FD and net
// (Go's internal/poll: fd_unix.go, fd_mutex.go, fd_poll_runtime.go). Calls
// return a result code instead of throwing; the public classes turn codes into
// gort::poll::Error (gort::net::Error) with their own message prefix.
#ifndef GORT_PKG_INTERNAL_POLL_POLL_FD_H_
#define GORT_PKG_INTERNAL_POLL_POLL_FD_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "gort/poll.h"

namespace gort::runtime {
struct pollDesc;
}  // namespace gort::runtime
namespace gort::os {
struct IoOp;
struct SockAddr;
struct IoVec;
// os::WriteFn (os/net_os.h): one write call.
using WriteFn = int (*)(std::intptr_t fd, const void* buf, std::size_t len,
                        std::size_t* n);
}  // namespace gort::os

namespace gort::poll::internal {

// Result codes beyond the OS ones of os/net_os.h (Go's ErrNetClosing
// (internal/poll/fd.go:31), ErrDeadlineExceeded).
inline constexpr int kErrClosing = -1;
inline constexpr int kErrTimeout = -2;
inline constexpr int kErrCanceled = -3;  // Go's net errCanceled
inline constexpr int kErrNotPollable =
    -4;  // Go's ErrNotPollable (internal/poll/fd.go:66)
inline constexpr int kErrNoDeadline =
    -5;  // Go's ErrNoDeadline (internal/poll/fd.go:39)

// fdMutex mirrors Go's fdMutex (internal/poll/fd_mutex.go:12): a reference
// count, a read lock and a write lock in one word, so Close can wait for every
// operation in flight.
struct fdMutex {
  std::atomic<std::uint64_t> state{0};
  std::uint32_t rsema = 0;
  std::uint32_t wsema = 0;

  bool incref();             // false if closed
  bool increfAndClose();     // false if already closed; wakes lock waiters
  bool decref();             // true if this dropped the last ref after close
  bool rwlock(bool read);    // false if closed
  bool rwunlock(bool read);  // true if the last ref after close
};

// fdImpl mirrors Go's poll.FD (internal/poll/fd_unix.go:18).
struct fdImpl {
  fdMutex mu;
  std::intptr_t sysfd = -1;
  runtime::pollDesc* pd = nullptr;  // nullptr: not pollable (blocking calls)
  os::IoOp* rop = nullptr;  // completion model: the read / accept operation
  os::IoOp* wop = nullptr;  // and the write / connect one (Go's FD.rop
                            // (internal/poll/fd_windows.go:228), wop)
  std::uint32_t csema = 0;  // Close waits here for destroy
  bool isFile = true;       // errors say "file", not "network"
  os::WriteFn write1 = nullptr;  // one write: os::fdWriter's, or sockWrite
  bool stream = true;     // false for datagrams: a 0-byte read is a packet
  bool readHint = false;  // reads say when they drained it (fdReadHint)
  bool drained = false;   // the last read left nothing (under the read lock)
  std::uint64_t readsSkipped = 0;  // reads that parked at once (for tests)
  // raise throws the owner's poll::Error for a failed call; it runs while
  // the call still holds its reference, so Close (and the owner's
  // destructor) cannot free what the message is built from meanwhile.
  // n: the bytes a write got out before failing.
  void (*raise)(const void* owner, const char* op, int code,
                std::size_t n) = nullptr;
  const void* owner = nullptr;
};

// fdOpen wraps sysfd (already non-blocking or made so); *err on failure.
fdImpl* fdOpen(std::intptr_t sysfd, bool isFile, int* err);
// fdReadHint: a TCP connection's reads learn from the kernel when they
// drained the socket, so that the next read parks at once (gort's own).
void fdReadHint(fdImpl* fd);
// fdRead: one read, parking until ready; *n = 0 at EOF.
int fdRead(fdImpl* fd, void* buf, std::size_t len, std::size_t* n);
// fdReadFrom: one datagram and its sender (Go's FD.ReadFrom
// (internal/poll/fd_unix.go:207)), parking until one arrives.
int fdReadFrom(fdImpl* fd, void* buf, std::size_t len, std::size_t* n,
               os::SockAddr* from);
// fdWriteTo: one datagram to `to` (Go's FD.WriteTo
// (internal/poll/fd_unix.go:491)), parking until there is room.
int fdWriteTo(fdImpl* fd, const void* buf, std::size_t len,
              const os::SockAddr& to, std::size_t* n);
// fdWrite: writes all len bytes, parking as needed; *n written so far.
int fdWrite(fdImpl* fd, const void* buf, std::size_t len, std::size_t* n);
// fdWritev: writes every buffer in order, one sendmsg per batch of up to
// 1024 (Go's writev (internal/poll/fd_writev_unix.go:14) loop); *n written so
// far.
int fdWritev(fdImpl* fd, const os::IoVec* v, std::size_t count, std::size_t* n);
// fdAccept: a new connection's descriptor.
int fdAccept(fdImpl* fd, std::intptr_t* nfd);
// fdWaitWrite: parks until writable (connect's completion).
int fdWaitWrite(fdImpl* fd);
// fdConnectIO: connect by the completion model (Go's ConnectEx
// (internal/poll/fd_windows.go:929) path in net/fd_windows.go), parking until
// it completes or the write deadline.
int fdConnectIO(fdImpl* fd, const os::SockAddr& sa);
// fdSetDeadline: t as absolute nanotime (0 none, < 0 past) for mode bits.
int fdSetDeadline(fdImpl* fd, std::int64_t t, int mode);
// fdIncref / fdDecref: a reference held around a call on sysfd (Go's
// FD.incref / decref); fdIncref is false once the FD is closed.
bool fdIncref(fdImpl* fd);
void fdDecref(fdImpl* fd);
// fdShutdownWrite: shutdown(SHUT_WR) under a reference.
int fdShutdownWrite(fdImpl* fd);
// fdClose mirrors Go's FD.Close (internal/poll/fd_unix.go:93): waits for
// operations in flight.
int fdClose(fdImpl* fd);
// fdFree releases a closed fdImpl, or closes it outright outside a Run.
void fdFree(fdImpl* fd);

// moveOwned is the move assignment of the public handles (poll::FD,
// net::Conn, net::Listener), which own one implementation object: free the
// object impl holds, then take other's. (gort's own: Go has no moves.)
template <class T>
void moveOwned(T*& impl, T*& other, void (*free)(T*)) {
  if (&impl == &other) return;
  free(impl);
  impl = std::exchange(other, nullptr);
}
// fdDeadline converts a steady_clock deadline to fdSetDeadline's form.
std::int64_t fdDeadline(std::chrono::steady_clock::time_point t);
// checkInRun throws gort::Panic outside a goroutine of a Run.
void checkInRun(const char* what);
// errText: Go's text for a code ("i/o timeout", "connection refused").
std::string errText(int code, bool isFile);
// makeError: poll::Error "<prefix>: <text>" for a code; n bytes written.
poll::Error makeError(const std::string& prefix, int code, bool isFile,
                      std::size_t n = 0);

}  // namespace gort::poll::internal

#endif  // GORT_PKG_INTERNAL_POLL_POLL_FD_H_
