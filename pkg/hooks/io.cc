// pkg/hooks/io.cc: the hooked socket and descriptor calls of gort::hooks
// (Linux). Each is the libc function of the same name, defined in the
// program so that it interposes libc's for the executable and every shared
// library it loads; each forwards to libc's (real.h) when the caller is not
// a goroutine, and otherwise parks a call that would block on gort's poller
// (fdtable.h). Creating, duplicating and closing sockets, fcntl and
// setsockopt keep the descriptor table up to date on every thread.
#include <fcntl.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "hooks/fdtable.h"
#include "hooks/real.h"

// glibc's _FORTIFY_SOURCE failure report (not in its public headers).
extern "C" [[noreturn]] void __chk_fail(void);

namespace gh = gort::hooks;
using gh::real;

namespace {

// trackNew: a descriptor just returned by socket/accept/socketpair.
int trackNew(int fd, bool nonblock) {
  if (fd >= 0) gh::track(fd, nonblock);
  return fd;
}

// totalWrite loops a stream write until all len bytes are out, where the
// hooks emulate a blocking socket (a blocking socket's write returns short
// only on an error after progress); elsewhere one call, as libc.
template <class F>
ssize_t totalWrite(int fd, size_t len, F once) {
  size_t done = 0;
  for (;;) {
    ssize_t r = gh::hookedIO(fd, gh::kWrite, false, true,
                             [&] { return static_cast<long>(once(done)); });
    if (r < 0) return done > 0 ? static_cast<ssize_t>(done) : -1;
    done += static_cast<size_t>(r);
    if (done >= len || r == 0 || !gh::emulatesBlocking(fd)) {
      return static_cast<ssize_t>(done);
    }
  }
}

// waitConnect: a blocking connect that the non-blocking socket answered
// with EINPROGRESS: park until writable, then report SO_ERROR, as
// Go's netFD.connect (net/fd_unix.go:55) does. SO_SNDTIMEO expiring gives
// EINPROGRESS, as Linux does.
int waitConnect(gh::hookFd* e) {
  int err = 0;
  long r = gh::parkIO(e, gh::kWrite, [&]() -> long {
    pollfd p{e->fd, POLLOUT, 0};
    if (real().poll(&p, 1, 0) == 0) {
      errno = EAGAIN;
      return -1;
    }
    return 0;
  });
  if (r < 0) {
    if (errno == EAGAIN) errno = EINPROGRESS;
    return -1;
  }
  socklen_t len = sizeof err;
  if (getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return -1;
  if (err != 0) {
    errno = err;
    return -1;
  }
  return 0;
}

// acceptHooked: accept4 parking on a blocking listener.
int acceptHooked(int fd, sockaddr* addr, socklen_t* len, int flags) {
  long r = gh::hookedIO(fd, gh::kRead, false, false, [&]() -> long {
    return real().accept4(fd, addr, len, flags);
  });
  return trackNew(static_cast<int>(r), (flags & SOCK_NONBLOCK) != 0);
}

}  // namespace

extern "C" {

// socket: libc's, then tracked (the caller's O_NONBLOCK from type).
int socket(int domain, int type, int protocol) noexcept {
  return trackNew(real().socket(domain, type, protocol),
                  (type & SOCK_NONBLOCK) != 0);
}

// socketpair: libc's, both ends tracked.
int socketpair(int domain, int type, int protocol, int sv[2]) noexcept {
  int r = real().socketpair(domain, type, protocol, sv);
  if (r == 0) {
    trackNew(sv[0], (type & SOCK_NONBLOCK) != 0);
    trackNew(sv[1], (type & SOCK_NONBLOCK) != 0);
  }
  return r;
}

// connect: on a goroutine, a blocking socket connects without blocking and
// parks until the connection completes.
int connect(int fd, const sockaddr* addr, socklen_t len) {
  if (!gh::onGoroutine()) {
    gh::hookFd* e = gh::anyHidden() ? gh::lookup(fd) : nullptr;
    int r = real().connect(fd, addr, len);
    if (r < 0 && errno == EINPROGRESS && e != nullptr &&
        e->hiddenNonblock.load() && !e->userNonblock.load()) {
      if (int err = gh::threadWait(e, gh::kWrite)) {
        errno = err == EAGAIN ? EINPROGRESS : err;
        return -1;
      }
      int soerr = 0;
      socklen_t sl = sizeof soerr;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
      if (soerr != 0) {
        errno = soerr;
        return -1;
      }
      return 0;
    }
    return r;
  }
  gh::hookFd* e = gh::lookup(fd);
  bool regular = false;
  if (e == nullptr) e = gh::adopt(fd, &regular);
  if (e == nullptr || e->userNonblock.load()) {
    return real().connect(fd, addr, len);
  }
  // The write lock and the pollDesc first, so the socket is non-blocking
  // before libc's connect sees it.
  long r = gh::parkIO(e, gh::kWrite, [&]() -> long {
    int c = real().connect(fd, addr, len);
    if (c < 0 && errno == EINPROGRESS) return 1;  // in flight: wait below
    return c;
  });
  if (r != 1) return static_cast<int>(r);
  return waitConnect(e);
}

// accept: a blocking listener parks until a connection arrives.
int accept(int fd, sockaddr* addr, socklen_t* len) {
  return acceptHooked(fd, addr, len, 0);
}

// accept4: as accept, with flags.
int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  return acceptHooked(fd, addr, len, flags);
}

// read: parks on a blocking socket; a regular file runs as gort::Syscall.
ssize_t read(int fd, void* buf, size_t n) {
  return gh::hookedIO(fd, gh::kRead, false, true,
                      [&]() -> long { return real().read(fd, buf, n); });
}

// write: as read; a blocking socket takes every byte before returning.
ssize_t write(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const char*>(buf);
  return totalWrite(
      fd, n, [&](size_t done) { return real().write(fd, p + done, n - done); });
}

// readv: as read.
ssize_t readv(int fd, const iovec* iov, int cnt) {
  return gh::hookedIO(fd, gh::kRead, false, true,
                      [&]() -> long { return real().readv(fd, iov, cnt); });
}

// writev: as write, but may return short once some bytes went out.
ssize_t writev(int fd, const iovec* iov, int cnt) {
  return gh::hookedIO(fd, gh::kWrite, false, true,
                      [&]() -> long { return real().writev(fd, iov, cnt); });
}

// recv: as read; MSG_DONTWAIT never parks.
ssize_t recv(int fd, void* buf, size_t n, int flags) {
  return gh::hookedIO(fd, gh::kRead, flags & MSG_DONTWAIT, false,
                      [&]() -> long { return real().recv(fd, buf, n, flags); });
}

// recvfrom: as recv.
ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* addr,
                 socklen_t* len) {
  return gh::hookedIO(
      fd, gh::kRead, flags & MSG_DONTWAIT, false,
      [&]() -> long { return real().recvfrom(fd, buf, n, flags, addr, len); });
}

// recvmsg: as recv.
ssize_t recvmsg(int fd, msghdr* msg, int flags) {
  return gh::hookedIO(fd, gh::kRead, flags & MSG_DONTWAIT, false,
                      [&]() -> long { return real().recvmsg(fd, msg, flags); });
}

// send: as write; MSG_DONTWAIT never parks.
ssize_t send(int fd, const void* buf, size_t n, int flags) {
  if (flags & MSG_DONTWAIT) return real().send(fd, buf, n, flags);
  const auto* p = static_cast<const char*>(buf);
  return totalWrite(fd, n, [&](size_t done) {
    return real().send(fd, p + done, n - done, flags);
  });
}

// sendto: one datagram or stream write, parking while it cannot go out.
ssize_t sendto(int fd, const void* buf, size_t n, int flags,
               const sockaddr* addr, socklen_t len) {
  return gh::hookedIO(
      fd, gh::kWrite, flags & MSG_DONTWAIT, false,
      [&]() -> long { return real().sendto(fd, buf, n, flags, addr, len); });
}

// sendmsg: as sendto.
ssize_t sendmsg(int fd, const msghdr* msg, int flags) {
  return gh::hookedIO(fd, gh::kWrite, flags & MSG_DONTWAIT, false,
                      [&]() -> long { return real().sendmsg(fd, msg, flags); });
}

// close: a tracked socket's parked calls return EBADF; the last call out
// closes the descriptor.
int close(int fd) {
  gh::hookFd* e = gh::lookup(fd);
  if (e != nullptr) return gh::closeFd(e);
  gh::forget(fd);
  return real().close(fd);
}

// dup: the duplicate is tracked as the original.
int dup(int fd) noexcept {
  int r = real().dup(fd);
  if (r >= 0) {
    if (gh::hookFd* e = gh::lookup(fd)) gh::trackDup(r, e);
  }
  return r;
}

// dupOnto: dup2 / dup3: a tracked target is closed through the hooks first
// (not atomically, unlike libc: docs/hooks.md).
static int dupOnto(int fd, int nfd, int flags, bool three) {
  if (fd == nfd) {
    if (three) {
      errno = EINVAL;
      return -1;
    }
    return real().fcntl(fd, F_GETFD) < 0 ? -1 : nfd;
  }
  if (gh::hookFd* t = gh::lookup(nfd)) gh::closeFd(t);
  gh::forget(nfd);
  int r = three ? real().dup3(fd, nfd, flags) : real().dup2(fd, nfd);
  if (r >= 0) {
    if (gh::hookFd* e = gh::lookup(fd)) gh::trackDup(r, e);
  }
  return r;
}

// dup2: as dup, onto nfd.
int dup2(int fd, int nfd) noexcept { return dupOnto(fd, nfd, 0, false); }

// dup3: as dup2, with O_CLOEXEC.
int dup3(int fd, int nfd, int flags) noexcept {
  return dupOnto(fd, nfd, flags, true);
}

// fcntl: F_GETFL reports O_NONBLOCK as the caller set it, F_SETFL records
// it (keeping the hidden one), F_DUPFD* track the duplicate.
int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  gh::hookFd* e = gh::lookup(fd);
  if (e == nullptr) return real().fcntl(fd, cmd, arg);
  switch (cmd) {
    case F_GETFL: {
      int r = real().fcntl(fd, cmd);
      if (r >= 0 && e->hiddenNonblock.load()) {
        r = (r & ~O_NONBLOCK) | (e->userNonblock.load() ? O_NONBLOCK : 0);
      }
      return r;
    }
    case F_SETFL: {
      int fl = static_cast<int>(reinterpret_cast<std::intptr_t>(arg));
      int set = e->hiddenNonblock.load() ? fl | O_NONBLOCK : fl;
      int r = real().fcntl(fd, cmd, set);
      if (r == 0) e->userNonblock.store((fl & O_NONBLOCK) != 0);
      if (r == 0 && (fl & O_NONBLOCK)) gh::dropPd(e);
      return r;
    }
    case F_DUPFD:
    case F_DUPFD_CLOEXEC: {
      int r = real().fcntl(fd, cmd, arg);
      if (r >= 0) gh::trackDup(r, e);
      return r;
    }
    default:
      return real().fcntl(fd, cmd, arg);
  }
}

// fcntl64: glibc's other name for fcntl.
int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl(fd, cmd, arg);
}

// setsockopt: libc's; SO_RCVTIMEO / SO_SNDTIMEO are also kept for parking.
int setsockopt(int fd, int level, int name, const void* val,
               socklen_t len) noexcept {
  int r = real().setsockopt(fd, level, name, val, len);
  if (r != 0 || level != SOL_SOCKET ||
      (name != SO_RCVTIMEO && name != SO_SNDTIMEO) || len < sizeof(timeval)) {
    return r;
  }
  gh::hookFd* e = gh::lookup(fd);
  if (e == nullptr) return r;
  const auto* tv = static_cast<const timeval*>(val);
  std::int64_t ns = std::int64_t{tv->tv_sec} * 1'000'000'000 +
                    std::int64_t{tv->tv_usec} * 1000;
  (name == SO_RCVTIMEO ? e->rcvtimeo : e->sndtimeo).store(ns);
  return r;
}

// __read_chk: _FORTIFY_SOURCE's read.
ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  if (n > buflen) __chk_fail();
  return read(fd, buf, n);
}

// __recv_chk: _FORTIFY_SOURCE's recv.
ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags) {
  if (n > buflen) __chk_fail();
  return recv(fd, buf, n, flags);
}

// __recvfrom_chk: _FORTIFY_SOURCE's recvfrom.
ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags,
                       sockaddr* addr, socklen_t* len) {
  if (n > buflen) __chk_fail();
  return recvfrom(fd, buf, n, flags, addr, len);
}

}  // extern "C"
