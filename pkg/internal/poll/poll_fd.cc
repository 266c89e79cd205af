// pkg/internal/poll/poll_fd.cc: descriptors read and written through the poller
// (Go's internal/poll: fd_mutex.go, fd_unix.go, fd_poll_runtime.go) and the
// public gort::poll::FD on top.
//
// Every operation holds a reference in the FD's fdMutex (reads and writes
// also its read or write lock, so two readers never interleave). Close marks
// the mutex closed, evicts goroutines parked in the poller (they fail with
// "use of closed ..."), drops its own reference and waits on csema until the
// last reference is gone; whoever drops it closes the descriptor (destroy).
// Descriptors epoll refuses (regular files) are not pollable: their calls
// block the thread inside entersyscall / exitsyscall instead.
//
// Where the OS completes operations instead of reporting readiness
// (Windows' overlapped I/O: os::ioCompletion()), reads, writes, accepts and
// connects go through execIO as Go's fd_windows.go does: the OS starts the
// operation on the FD's rop or wop, the goroutine parks on the pollDesc until
// netpoll reports the completion, and a deadline or Close cancels the
// operation and still waits for its completion before returning.
#include "internal/poll/poll_fd.h"

#include <limits>

#include "gort/poll.h"
#include "gort/runtime.h"
#include "netpoll.h"
#include "os/net_os.h"
#include "os/netpoll_os.h"
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "sema.h"

namespace gort::poll::internal {

using runtime::pollDesc;

namespace {

// fdMutex's state word (Go's layout): closed, read lock, write lock, then
// 20-bit counts of references, read waiters and write waiters.
constexpr std::uint64_t mutexClosed = 1 << 0;
constexpr std::uint64_t mutexRLock = 1 << 1;
constexpr std::uint64_t mutexWLock = 1 << 2;
constexpr std::uint64_t mutexRef = 1 << 3;
constexpr std::uint64_t mutexRefMask = std::uint64_t{(1 << 20) - 1} << 3;
constexpr std::uint64_t mutexRWait = std::uint64_t{1} << 23;
constexpr std::uint64_t mutexRMask = std::uint64_t{(1 << 20) - 1} << 23;
constexpr std::uint64_t mutexWWait = std::uint64_t{1} << 43;
constexpr std::uint64_t mutexWMask = std::uint64_t{(1 << 20) - 1} << 43;

// Go caps one read or write at 1 GiB (maxRW).
constexpr std::size_t kMaxRW = std::size_t{1} << 30;

[[noreturn]] void tooMany() {
  throw Panic(
      "too many concurrent operations on a single file or socket "
      "(max 1048575)");
}

int convertErr(int res) {
  switch (res) {
    case runtime::pollErrClosing:
      return kErrClosing;
    case runtime::pollErrTimeout:
      return kErrTimeout;
    case runtime::pollErrNotPollable:
      return kErrNotPollable;
    default:
      return res == runtime::pollNoError ? 0 : kErrClosing;
  }
}

// freeOps releases the completion model's operations (none in flight).
void freeOps(fdImpl* fd) {
  os::ioOpFree(fd->rop);
  os::ioOpFree(fd->wop);
  fd->rop = fd->wop = nullptr;
}

// destroy mirrors Go's FD.destroy (internal/poll/fd_unix.go:74): the last
// reference closes the OS fd.
void destroy(fdImpl* fd) {
  if (fd->pd != nullptr) {
    if (runtime::pollStale(fd->pd)) {
      runtime::pollRelease(fd->pd);
    } else {
      runtime::pollClose(fd->pd);
    }
    fd->pd = nullptr;
  }
  os::fdClose(fd->sysfd);
  fd->sysfd = -1;
  freeOps(fd);
  runtime::semrelease(&fd->csema);
}

void readUnlock(fdImpl* fd) {
  if (fd->mu.rwunlock(true)) destroy(fd);
}
void writeUnlock(fdImpl* fd) {
  if (fd->mu.rwunlock(false)) destroy(fd);
}
void decref(fdImpl* fd) {
  if (fd->mu.decref()) destroy(fd);
}

// unlocker drops a read or write lock on every way out of a call.
struct unlocker {
  fdImpl* fd;
  bool read;
  ~unlocker() { read ? readUnlock(fd) : writeUnlock(fd); }
};

// fail hands a failed call's code to the owner's raise (which throws, the
// reference still held), or returns it.
int fail(fdImpl* fd, const char* op, int err, std::size_t n = 0) {
  if (err != 0 && fd->raise != nullptr) fd->raise(fd->owner, op, err, n);
  return err;
}

int prepare(fdImpl* fd, int mode) {
  if (fd->pd == nullptr) return 0;
  return convertErr(runtime::pollReset(fd->pd, mode));
}

// wait parks on the poller; a pending error event counts as ready once, so
// the next call reports the socket's own error.
int wait(fdImpl* fd, int mode) {
  int res = runtime::pollWait(fd->pd, mode);
  if (res == runtime::pollErrNotPollable) return 0;
  return convertErr(res);
}

// waitRead is wait for reading, telling *clean whether the news it took was
// clean (runtime::pollWaitRead).
int waitRead(fdImpl* fd, bool* clean) {
  int res = runtime::pollWaitRead(fd->pd, clean);
  if (res == runtime::pollErrNotPollable) return 0;
  return convertErr(res);
}

// abandonGuard: if the goroutine unwinds while parked with op in flight
// (its Run ended), the OS must be done with op's buffer before the frame
// goes.
struct abandonGuard {
  os::IoOp* op;
  bool done = false;
  ~abandonGuard() {
    if (!done) os::ioAbandon(op);
  }
};

// execIO mirrors Go's execIO (internal/poll/fd_windows.go:147) (fd_windows.go):
// start() begins op; park until the poller reports its completion; on a
// deadline or Close, cancel it and wait for the cancellation, since the OS owns
// the buffer until then. An operation that completed despite the cancellation
// keeps its result.
template <class Start>
int execIO(fdImpl* fd, os::IoOp* op, int mode, Start start, std::size_t* n,
           std::intptr_t* nfd) {
  *n = 0;
  if (int err = prepare(fd, mode)) return err;
  int err = start();
  if (err == 0) return os::ioResult(op, n, nfd);
  if (err != os::kErrPending) return err;
  abandonGuard guard{op};
  int werr = wait(fd, mode);
  if (werr != 0) {
    os::ioCancel(op);
    runtime::pollWaitCanceled(fd->pd, mode);
  }
  guard.done = true;
  int res = os::ioResult(op, n, nfd);
  if (res == os::kErrCanceled && werr != 0) return werr;
  return res;
}

// rwSide: the read or the write side of mu, as Go's rwlock
// (internal/poll/fd_mutex.go:117) and rwunlock pick it: the lock bit, one
// waiter's count, the waiters' mask and the semaphore waiters sleep on.
struct rwSideBits {
  std::uint64_t bit, wait, mask;
  std::uint32_t* sema;
};
rwSideBits rwSide(fdMutex* mu, bool read) {
  if (read) return {mutexRLock, mutexRWait, mutexRMask, &mu->rsema};
  return {mutexWLock, mutexWWait, mutexWMask, &mu->wsema};
}

}  // namespace

bool fdMutex::incref() {
  for (;;) {
    std::uint64_t old = state.load(std::memory_order_acquire);
    if (old & mutexClosed) return false;
    std::uint64_t nw = old + mutexRef;
    if ((nw & mutexRefMask) == 0) tooMany();
    if (state.compare_exchange_weak(old, nw)) return true;
  }
}

bool fdMutex::increfAndClose() {
  for (;;) {
    std::uint64_t old = state.load(std::memory_order_acquire);
    if (old & mutexClosed) return false;
    std::uint64_t nw = (old | mutexClosed) + mutexRef;
    if ((nw & mutexRefMask) == 0) tooMany();
    nw &= ~(mutexRMask | mutexWMask);  // waiters will see it closed
    if (state.compare_exchange_weak(old, nw)) {
      for (; old & mutexRMask; old -= mutexRWait) runtime::semrelease(&rsema);
      for (; old & mutexWMask; old -= mutexWWait) runtime::semrelease(&wsema);
      return true;
    }
  }
}

bool fdMutex::decref() {
  for (;;) {
    std::uint64_t old = state.load(std::memory_order_acquire);
    if ((old & mutexRefMask) == 0) throw Panic("inconsistent poll.fdMutex");
    std::uint64_t nw = old - mutexRef;
    if (state.compare_exchange_weak(old, nw)) {
      return (nw & (mutexClosed | mutexRefMask)) == mutexClosed;
    }
  }
}

bool fdMutex::rwlock(bool read) {
  const auto [bit, wait, mask, sema] = rwSide(this, read);
  for (;;) {
    std::uint64_t old = state.load(std::memory_order_acquire);
    if (old & mutexClosed) return false;
    std::uint64_t nw;
    if ((old & bit) == 0) {
      nw = (old | bit) + mutexRef;
      if ((nw & mutexRefMask) == 0) tooMany();
    } else {
      nw = old + wait;
      if ((nw & mask) == 0) tooMany();
    }
    if (state.compare_exchange_weak(old, nw)) {
      if ((old & bit) == 0) return true;
      runtime::semacquire(sema);  // the unlocker took our wait count off
    }
  }
}

bool fdMutex::rwunlock(bool read) {
  const auto [bit, wait, mask, sema] = rwSide(this, read);
  for (;;) {
    std::uint64_t old = state.load(std::memory_order_acquire);
    if ((old & bit) == 0 || (old & mutexRefMask) == 0) {
      throw Panic("inconsistent poll.fdMutex");
    }
    std::uint64_t nw = (old & ~bit) - mutexRef;
    if (old & mask) nw -= wait;
    if (state.compare_exchange_weak(old, nw)) {
      if (old & mask) runtime::semrelease(sema);
      return (nw & (mutexClosed | mutexRefMask)) == mutexClosed;
    }
  }
}

void checkInRun(const char* what) {
  if (runtime::getcurg() == nullptr) {
    throw Panic(std::string("gort: ") + what + " called outside a goroutine");
  }
}

fdImpl* fdOpen(std::intptr_t sysfd, bool isFile, int* err) {
  *err = os::fdSetNonblock(sysfd, true);
  if (*err != 0) return nullptr;
  auto* fd = new fdImpl;
  fd->sysfd = sysfd;
  fd->isFile = isFile;
  fd->write1 = isFile ? os::fdWriter(sysfd) : os::sockWrite;
  int perr = 0;
  fd->pd = runtime::pollOpen(static_cast<std::uintptr_t>(sysfd), &perr);
  if (fd->pd != nullptr && os::ioCompletion()) {
    std::uint64_t key = runtime::pollKey(fd->pd);
    fd->rop = os::ioOpNew(sysfd, key, os::kPollRead);
    fd->wop = os::ioOpNew(sysfd, key, os::kPollWrite);
  }
  if (fd->pd == nullptr) {
    if (perr < 0) {
      *err = os::kErrNotSupported;
    } else if (os::isPermErr(perr)) {
      os::fdSetNonblock(sysfd, false);  // not pollable: plain blocking calls
      return fd;
    } else {
      *err = perr;
    }
    delete fd;
    return nullptr;
  }
  return fd;
}

void fdReadHint(fdImpl* fd) {
  if (fd->pd != nullptr && fd->rop == nullptr) {
    fd->readHint = os::sockReadHint(fd->sysfd);
  }
}

// fdRead mirrors Go's FD.Read (internal/poll/fd_unix.go:143): read first,
// park on the poller if nothing is there. gort's own: when the last read
// followed clean news (pollWaitRead) and the kernel said it drained the
// socket, this one parks at once, skipping the read that would fail with
// EAGAIN; it keeps rg as it is (no pollReset), since any news there came
// after that read. A read that cannot tell (no hint, a hang-up or error
// seen) tries first, as Go's.
int fdRead(fdImpl* fd, void* buf, std::size_t len, std::size_t* n) {
  *n = 0;
  if (!fd->mu.rwlock(true)) return kErrClosing;
  unlocker u{fd, true};
  if (len == 0 && fd->stream) return 0;  // a datagram read takes a packet
  if (len > kMaxRW) len = kMaxRW;
  if (fd->rop != nullptr) {
    os::IoOp* op = fd->rop;
    int err = execIO(
        fd, op, os::kPollRead, [&] { return os::ioRecv(op, buf, len); }, n,
        nullptr);
    if (err != 0) *n = 0;
    return fail(fd, "read", err);
  }
  bool skip = fd->drained;
  fd->drained = false;
  if (!skip) {
    if (int err = prepare(fd, os::kPollRead)) return fail(fd, "read", err);
  }
  bool clean = false;
  for (;;) {
    int err;
    bool drained = false;
    if (skip) {
      skip = false;
      fd->readsSkipped++;
      err = os::kErrAgain;
    } else if (fd->pd == nullptr) {
      runtime::entersyscall();
      err = os::fdRead(fd->sysfd, buf, len, n);
      runtime::exitsyscall();
    } else if (fd->readHint) {
      err = os::sockReadHinted(fd->sysfd, buf, len, n, &drained);
    } else {
      err = os::fdRead(fd->sysfd, buf, len, n);
    }
    if (err == os::kErrAgain && fd->pd != nullptr) {
      if ((err = waitRead(fd, &clean)) == 0) continue;
    }
    if (err != 0) *n = 0;
    fd->drained = err == 0 && *n > 0 && drained && clean;
    return fail(fd, "read", err);
  }
}

int fdReadFrom(fdImpl* fd, void* buf, std::size_t len, std::size_t* n,
               os::SockAddr* from) {
  *n = 0;
  from->len = 0;
  if (!fd->mu.rwlock(true)) return kErrClosing;
  unlocker u{fd, true};
  if (len > kMaxRW) len = kMaxRW;
  if (fd->rop != nullptr) {
    os::IoOp* op = fd->rop;
    int err = execIO(
        fd, op, os::kPollRead, [&] { return os::ioRecvFrom(op, buf, len); }, n,
        nullptr);
    if (err == 0) os::ioFrom(op, from);
    if (err != 0) *n = 0;
    return err;
  }
  if (int err = prepare(fd, os::kPollRead)) return err;
  for (;;) {
    int err = os::sockRecvFrom(fd->sysfd, buf, len, n, from);
    if (err == os::kErrAgain && fd->pd != nullptr) {
      if ((err = wait(fd, os::kPollRead)) == 0) continue;
    }
    if (err != 0) *n = 0;
    return err;
  }
}

int fdWriteTo(fdImpl* fd, const void* buf, std::size_t len,
              const os::SockAddr& to, std::size_t* n) {
  *n = 0;
  if (!fd->mu.rwlock(false)) return kErrClosing;
  unlocker u{fd, false};
  if (fd->wop != nullptr) {
    os::IoOp* op = fd->wop;
    return execIO(
        fd, op, os::kPollWrite, [&] { return os::ioSendTo(op, buf, len, to); },
        n, nullptr);
  }
  if (int err = prepare(fd, os::kPollWrite)) return err;
  for (;;) {
    int err = os::sockSendTo(fd->sysfd, buf, len, to, n);
    if (err == os::kErrAgain && fd->pd != nullptr) {
      if ((err = wait(fd, os::kPollWrite)) == 0) continue;
    }
    return err;
  }
}

// writeIO: fdWrite by the completion model, one WSASend per chunk.
static int writeIO(fdImpl* fd, const unsigned char* p, std::size_t len,
                   std::size_t* n) {
  os::IoOp* op = fd->wop;
  while (*n < len) {
    std::size_t max = len - *n > kMaxRW ? kMaxRW : len - *n;
    std::size_t w = 0;
    int err = execIO(
        fd, op, os::kPollWrite, [&] { return os::ioSend(op, p + *n, max); }, &w,
        nullptr);
    *n += w;
    if (err != 0) return fail(fd, "write", err, *n);
    if (w == 0) return fail(fd, "write", 5, *n);  // EIO: io.ErrUnexpectedEOF
  }
  return 0;
}

int fdWrite(fdImpl* fd, const void* buf, std::size_t len, std::size_t* n) {
  *n = 0;
  if (!fd->mu.rwlock(false)) return kErrClosing;
  unlocker u{fd, false};
  const auto* p = static_cast<const unsigned char*>(buf);
  if (fd->wop != nullptr) return writeIO(fd, p, len, n);
  if (int err = prepare(fd, os::kPollWrite)) return fail(fd, "write", err);
  for (;;) {
    std::size_t max = len - *n > kMaxRW ? kMaxRW : len - *n;
    std::size_t w = 0;
    int err;
    // A socket: send(MSG_NOSIGNAL); a pipe: a SIGPIPE-safe write; any other
    // descriptor: a plain write (fdOpen chose).
    auto write1 = fd->write1;
    if (fd->pd == nullptr) {
      runtime::entersyscall();
      err = write1(fd->sysfd, p + *n, max, &w);
      runtime::exitsyscall();
    } else {
      err = write1(fd->sysfd, p + *n, max, &w);
    }
    *n += w;
    if (*n == len) return 0;
    if (err == os::kErrAgain && fd->pd != nullptr) {
      if ((err = wait(fd, os::kPollWrite)) == 0) continue;
    }
    if (err != 0) return fail(fd, "write", err, *n);
    if (w == 0) return fail(fd, "write", 5, *n);  // EIO: io.ErrUnexpectedEOF
  }
}

int fdWritev(fdImpl* fd, const os::IoVec* v, std::size_t count,
             std::size_t* n) {
  *n = 0;
  if (fd->wop != nullptr || fd->isFile) {  // buffer by buffer
    for (std::size_t i = 0; i < count; i++) {
      std::size_t w = 0;
      int err = fdWrite(fd, v[i].base, v[i].len, &w);
      *n += w;
      if (err != 0) return err;
    }
    return 0;
  }
  if (!fd->mu.rwlock(false)) return kErrClosing;
  unlocker u{fd, false};
  if (int err = prepare(fd, os::kPollWrite)) return fail(fd, "writev", err);
  constexpr std::size_t kMaxIov = 1024;  // as Go 1.19 writev.go, 1024 at a time
  os::IoVec batch[kMaxIov];
  std::size_t i = 0, off = 0;  // the first unwritten byte: v[i] at off
  for (;;) {
    while (i < count && v[i].len == off) i++, off = 0;
    if (i == count) return 0;
    int nb = 0;
    for (std::size_t j = i; j < count && nb < static_cast<int>(kMaxIov); j++) {
      std::size_t skip = j == i ? off : 0;
      batch[nb++] = {static_cast<const char*>(v[j].base) + skip,
                     v[j].len - skip};
    }
    std::size_t w = 0;
    int err = os::sockWritev(fd->sysfd, batch, nb, &w);
    *n += w;
    for (; w > 0; i++, off = 0) {  // advance past what went out
      std::size_t rest = v[i].len - off;
      if (w < rest) {
        off += w;
        break;
      }
      w -= rest;
    }
    if (err == os::kErrAgain && fd->pd != nullptr) {
      if ((err = wait(fd, os::kPollWrite)) == 0) continue;
    }
    if (err != 0) return fail(fd, "writev", err, *n);
  }
}

int fdAccept(fdImpl* fd, std::intptr_t* nfd) {
  if (!fd->mu.rwlock(true)) return kErrClosing;
  unlocker u{fd, true};
  if (fd->rop != nullptr) {
    os::IoOp* op = fd->rop;
    std::size_t n = 0;
    int err;
    do {  // kErrAgain: that connection died before it was accepted
      err = execIO(
          fd, op, os::kPollRead, [&] { return os::ioAccept(op); }, &n, nfd);
    } while (err == os::kErrAgain);
    return fail(fd, "accept", err);
  }
  if (int err = prepare(fd, os::kPollRead)) return fail(fd, "accept", err);
  for (;;) {
    int err = os::sockAccept(fd->sysfd, nfd);
    if (err == os::kErrAgain && fd->pd != nullptr) {
      if ((err = wait(fd, os::kPollRead)) == 0) continue;
    }
    return fail(fd, "accept", err);
  }
}

int fdWaitWrite(fdImpl* fd) {
  if (!fd->mu.incref()) return kErrClosing;
  int err = fd->pd == nullptr ? 0 : wait(fd, os::kPollWrite);
  decref(fd);
  return err;
}

int fdConnectIO(fdImpl* fd, const os::SockAddr& sa) {
  if (!fd->mu.rwlock(false)) return kErrClosing;
  unlocker u{fd, false};
  if (fd->wop == nullptr) return os::kErrNotSupported;
  os::IoOp* op = fd->wop;
  std::size_t n = 0;
  return execIO(
      fd, op, os::kPollWrite, [&] { return os::ioConnect(op, sa); }, &n,
      nullptr);
}

int fdSetDeadline(fdImpl* fd, std::int64_t t, int mode) {
  if (!fd->mu.incref()) return kErrClosing;
  bool pollable = fd->pd != nullptr;
  if (pollable) runtime::pollSetDeadline(fd->pd, t, mode);
  decref(fd);
  // Go's ErrNoDeadline (internal/poll/fd.go:39) where it cannot be polled.
  return pollable ? 0 : kErrNoDeadline;
}

bool fdIncref(fdImpl* fd) { return fd->mu.incref(); }

void fdDecref(fdImpl* fd) { decref(fd); }

int fdShutdownWrite(fdImpl* fd) {
  if (!fd->mu.incref()) return kErrClosing;
  int err = os::sockShutdownWrite(fd->sysfd);
  decref(fd);
  return err;
}

int fdClose(fdImpl* fd) {
  if (!fd->mu.increfAndClose()) return kErrClosing;
  if (fd->pd != nullptr && !runtime::pollStale(fd->pd)) {
    runtime::pollUnblock(
        fd->pd);  // Go's pd.evict (internal/poll/fd_poll_runtime.go:57)
  }
  decref(fd);
  // Wait for the last reference to close it (at once if there was none).
  runtime::semacquire(&fd->csema);
  return 0;
}

void fdFree(fdImpl* fd) {
  if (fd == nullptr) return;
  if (!(fd->mu.state.load() & mutexClosed)) {
    if (runtime::getcurg() != nullptr) {
      fdClose(fd);
    } else {
      // Outside a goroutine (after its Run, or on a foreign thread): nothing
      // can be parked on it any more; close without the scheduler.
      if (fd->pd != nullptr) {
        if (!runtime::pollStale(fd->pd)) {
          os::netpollclose(static_cast<std::uintptr_t>(fd->sysfd));
        }
        runtime::pollRelease(fd->pd);
      }
      os::fdClose(fd->sysfd);
      freeOps(fd);
    }
  }
  delete fd;
}

std::int64_t fdDeadline(std::chrono::steady_clock::time_point t) {
  if (t == std::chrono::steady_clock::time_point{}) return 0;
  auto rel = std::chrono::duration_cast<std::chrono::nanoseconds>(
                 t - std::chrono::steady_clock::now())
                 .count();
  if (rel <= 0) return -1;
  std::int64_t now = os::nanotime();
  if (rel > std::numeric_limits<std::int64_t>::max() - now) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return now + rel;
}

std::string errText(int code, bool isFile) {
  if (code == kErrClosing) {
    return isFile ? "use of closed file" : "use of closed network connection";
  }
  if (code == kErrTimeout) return "i/o timeout";
  if (code == kErrCanceled) return "operation was canceled";
  if (code == kErrNotPollable) return "not pollable";
  if (code == kErrNoDeadline) return "file type does not support deadline";
  return os::errstr(code);
}

// errorCode: the portable std::error_code for a code (generic category
// where the OS error has a POSIX meaning).
std::error_code errorCode(int code) {
  if (code == kErrTimeout) return std::make_error_code(std::errc::timed_out);
  if (code == kErrCanceled) {
    return std::make_error_code(std::errc::operation_canceled);
  }
  if (code == kErrNoDeadline) {
    return std::make_error_code(std::errc::not_supported);
  }
  if (code == os::kErrAgain || code == os::kErrInProgress || code > 0) {
    int e = os::osErrno(code);
    int g = os::genericErrno(e);
    if (g > 0) return {g, std::generic_category()};
    return {e, std::system_category()};
  }
  return {};
}

poll::Error makeError(const std::string& prefix, int code, bool isFile,
                      std::size_t n) {
  return poll::Error(prefix + ": " + errText(code, isFile), code == kErrTimeout,
                     code == kErrClosing, code > 0 ? os::osErrno(code) : 0,
                     errorCode(code), n);
}

}  // namespace gort::poll::internal

namespace gort::poll {

using namespace gort::poll::internal;

namespace {
poll::Error ioError(const fdImpl* fd, const char* op, int code,
                    std::size_t n = 0);
void raiseFD(const void* owner, const char* op, int code, std::size_t n) {
  throw ioError(static_cast<const fdImpl*>(owner), op, code, n);
}
}  // namespace

FD::FD(std::intptr_t fd) {
  checkInRun("poll::FD");
  int err = 0;
  impl_ = fdOpen(fd, true, &err);
  if (impl_ == nullptr) {
    throw makeError("poll fd " + std::to_string(fd), err, true);
  }
  impl_->owner = impl_;
  impl_->raise = raiseFD;
}

FD::FD(FD&& other) noexcept : impl_(other.impl_) { other.impl_ = nullptr; }

FD& FD::operator=(FD&& other) noexcept {
  moveOwned(impl_, other.impl_, fdFree);
  return *this;
}

FD::~FD() { fdFree(impl_); }

namespace {
std::string fdName(const fdImpl* fd, const char* op) {
  return std::string(op) + " fd " + std::to_string(fd->sysfd);
}
fdImpl* need(fdImpl* fd, const char* op) {
  checkInRun(op);
  if (fd == nullptr) {
    throw poll::Error(std::string(op) + ": invalid argument (empty poll::FD)",
                      false, false, 0);
  }
  return fd;
}
// ioError: Go's *PathError "read fd 5: <syscall>: <text>"-like message.
poll::Error ioError(const fdImpl* fd, const char* op, int code, std::size_t n) {
  std::string prefix = fdName(fd, op);
  if (code > 0) prefix += std::string(": ") + op;
  return makeError(prefix, code, true, n);
}
}  // namespace

std::size_t FD::Read(void* buf, std::size_t n) {
  fdImpl* fd = need(impl_, "read");
  std::size_t got = 0;
  if (int err = fdRead(fd, buf, n, &got)) throw ioError(fd, "read", err);
  return got;
}

std::size_t FD::Write(const void* buf, std::size_t n) {
  fdImpl* fd = need(impl_, "write");
  std::size_t put = 0;
  if (int err = fdWrite(fd, buf, n, &put)) {
    throw ioError(fd, "write", err, put);
  }
  return put;
}

void FD::SetReadDeadline(std::chrono::steady_clock::time_point t) {
  fdImpl* fd = need(impl_, "SetReadDeadline");
  if (int err = fdSetDeadline(fd, fdDeadline(t), os::kPollRead)) {
    throw ioError(fd, "set deadline", err);
  }
}

void FD::SetWriteDeadline(std::chrono::steady_clock::time_point t) {
  fdImpl* fd = need(impl_, "SetWriteDeadline");
  if (int err = fdSetDeadline(fd, fdDeadline(t), os::kPollWrite)) {
    throw ioError(fd, "set deadline", err);
  }
}

void FD::Close() {
  fdImpl* fd = need(impl_, "close");
  std::intptr_t sys = fd->sysfd;
  if (int err = fdClose(fd)) {
    throw makeError("close fd " + std::to_string(sys), err, true);
  }
}

std::intptr_t FD::Sysfd() const {
  if (impl_ == nullptr) return -1;
  return (impl_->mu.state.load() & mutexClosed) ? -1 : impl_->sysfd;
}

}  // namespace gort::poll
