// runtime/os/net_posix.cc: descriptor and socket calls for poll::FD and net
// on POSIX systems (Go's syscall package, used by internal/poll and net).
// Socket addresses are net_addr.cc's, shared with Winsock.
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "os/net_addr.h"

namespace gort::os {

namespace {

int code(int e) {
  if (e == EAGAIN || e == EWOULDBLOCK) return kErrAgain;
  if (e == EINPROGRESS) return kErrInProgress;
  return e;
}

int fdOf(std::intptr_t fd) { return static_cast<int>(fd); }

}  // namespace

std::string errstr(int err) {
  if (const char* own = errstrOwn(err)) return own;
  char buf[128];
  const char* s = strerror_r(err, buf, sizeof buf);  // GNU: returns the text
  std::string out = s != nullptr ? s : "errno " + std::to_string(err);
  // Go's syscall table spells these in lower case ("connection refused").
  if (!out.empty()) out[0] = static_cast<char>(std::tolower(out[0]));
  return out;
}

int osErrno(int err) {
  if (err == kErrAgain) return EAGAIN;
  if (err == kErrInProgress) return EINPROGRESS;
  return err > 0 ? err : 0;
}

bool isPermErr(int err) { return err == EPERM; }

int genericErrno(int err) { return err > 0 ? err : 0; }

int fdSetNonblock(std::intptr_t fd, bool on) {
  int fl = fcntl(fdOf(fd), F_GETFL);
  if (fl < 0) return errno;
  fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
  return fcntl(fdOf(fd), F_SETFL, fl) < 0 ? errno : 0;
}

int fdClose(std::intptr_t fd) { return close(fdOf(fd)) < 0 ? errno : 0; }

int fdRead(std::intptr_t fd, void* buf, std::size_t len, std::size_t* n) {
  for (;;) {
    ssize_t r = read(fdOf(fd), buf, len);
    if (r >= 0) {
      *n = static_cast<std::size_t>(r);
      return 0;
    }
    if (errno != EINTR) return code(errno);
  }
}

bool sockReadHint(std::intptr_t fd) {
#ifdef TCP_INQ
  int one = 1;
  return setsockopt(fdOf(fd), IPPROTO_TCP, TCP_INQ, &one, sizeof one) == 0;
#else
  (void)fd;
  return false;
#endif
}

int sockReadHinted(std::intptr_t fd, void* buf, std::size_t len, std::size_t* n,
                   bool* drained) {
  *drained = false;
#ifdef TCP_INQ
  iovec iov{buf, len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  for (;;) {
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t r = recvmsg(fdOf(fd), &msg, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return code(errno);
    }
    *n = static_cast<std::size_t>(r);
    // The kernel counts an end of stream as a byte left (tcp_inq_hint), so
    // 0 means a read now would find nothing. Only the sign matters: a
    // translating emulator that copies the int unconverted keeps it.
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
         c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != IPPROTO_TCP || c->cmsg_type != TCP_CM_INQ ||
          c->cmsg_len < CMSG_LEN(sizeof(int))) {
        continue;
      }
      int left;
      std::memcpy(&left, CMSG_DATA(c), sizeof left);
      *drained = left == 0;
    }
    return 0;
  }
#else
  return fdRead(fd, buf, len, n);
#endif
}

namespace {

// writeNoSigpipe: write(2) that fails with EPIPE instead of raising SIGPIPE,
// leaving the process's SIGPIPE disposition (a program's own handler) alone:
// SIGPIPE is blocked on this thread for the call, and one the call raised is
// taken off the thread before the old mask returns. (Go ignores SIGPIPE in
// its handler for descriptors other than 1 and 2, os/file_unix.go's
// epipecheck; gort installs no handler for it.)
ssize_t writeNoSigpipe(int fd, const void* buf, std::size_t len) {
  sigset_t pipe, old, pending;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  sigemptyset(&pending);
  sigpending(&pending);
  bool wasPending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe, &old);
  ssize_t r = write(fd, buf, len);
  int e = errno;
  if (r < 0 && e == EPIPE && !wasPending) {
    timespec zero{0, 0};
    while (sigtimedwait(&pipe, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = e;
  return r;
}

}  // namespace

int fdWrite(std::intptr_t fd, const void* buf, std::size_t len,
            std::size_t* n) {
  for (;;) {
    // Go lets a broken pipe on standard output or error kill the program.
    ssize_t r = fd == 1 || fd == 2 ? write(fdOf(fd), buf, len)
                                   : writeNoSigpipe(fdOf(fd), buf, len);
    if (r >= 0) {
      *n = static_cast<std::size_t>(r);
      return 0;
    }
    if (errno != EINTR) return code(errno);
  }
}

int sockWrite(std::intptr_t fd, const void* buf, std::size_t len,
              std::size_t* n) {
  for (;;) {
    ssize_t r = send(fdOf(fd), buf, len, MSG_NOSIGNAL);
    if (r >= 0) {
      *n = static_cast<std::size_t>(r);
      return 0;
    }
    if (errno != EINTR) return code(errno);
  }
}

namespace {
// plainWrite: one write(2), for descriptors that cannot raise SIGPIPE.
int plainWrite(std::intptr_t fd, const void* buf, std::size_t len,
               std::size_t* n) {
  for (;;) {
    ssize_t r = write(fdOf(fd), buf, len);
    if (r >= 0) {
      *n = static_cast<std::size_t>(r);
      return 0;
    }
    if (errno != EINTR) return code(errno);
  }
}
}  // namespace

// fdWriter: Linux raises SIGPIPE only for pipes (FIFOs) and sockets. Go
// needs no such choice (its handler ignores the signal, os/file_unix.go's
// epipecheck); gort leaves the handler to the program, so it keeps the
// masking write (three more system calls) to the descriptors that need it.
WriteFn fdWriter(std::intptr_t fd) {
  struct stat st;
  if (fd == 1 || fd == 2 || fstat(fdOf(fd), &st) != 0) return fdWrite;
  if (S_ISSOCK(st.st_mode)) return sockWrite;
  if (S_ISFIFO(st.st_mode)) return fdWrite;
  return plainWrite;
}

int sockWritev(std::intptr_t fd, const IoVec* v, int n, std::size_t* done) {
  static_assert(sizeof(IoVec) == sizeof(iovec));
  msghdr m{};
  m.msg_iov = const_cast<iovec*>(reinterpret_cast<const iovec*>(v));
  m.msg_iovlen = static_cast<std::size_t>(n);
  for (;;) {
    ssize_t r = sendmsg(fdOf(fd), &m, MSG_NOSIGNAL);
    if (r >= 0) {
      *done = static_cast<std::size_t>(r);
      return 0;
    }
    if (errno != EINTR) return code(errno);
  }
}

int sockSocket(Family f, std::intptr_t* fd, bool dgram) {
  int dom = f == Family::kInet4   ? AF_INET
            : f == Family::kInet6 ? AF_INET6
                                  : AF_UNIX;
  int type = dgram ? SOCK_DGRAM : SOCK_STREAM;
  int s = socket(dom, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  *fd = s;
  return 0;
}

int sockRecvFrom(std::intptr_t fd, void* buf, std::size_t len, std::size_t* n,
                 SockAddr* from) {
  for (;;) {
    socklen_t alen = sizeof from->data;
    ssize_t r = recvfrom(fdOf(fd), buf, len, 0,
                         reinterpret_cast<sockaddr*>(from->data), &alen);
    if (r >= 0) {
      *n = static_cast<std::size_t>(r);
      from->len = static_cast<std::uint32_t>(alen);
      return 0;
    }
    if (errno != EINTR) return code(errno);
  }
}

int sockSendTo(std::intptr_t fd, const void* buf, std::size_t len,
               const SockAddr& to, std::size_t* n) {
  const auto* a = reinterpret_cast<const sockaddr*>(to.data);
  for (;;) {
    ssize_t r = sendto(fdOf(fd), buf, len, MSG_NOSIGNAL, a, to.len);
    if (r >= 0) {
      *n = static_cast<std::size_t>(r);
      return 0;
    }
    if (errno != EINTR) return code(errno);
  }
}

int sockBind(std::intptr_t fd, const SockAddr& sa, bool reuseAddr) {
  if (reuseAddr) {
    int one = 1;
    setsockopt(fdOf(fd), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  }
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  return bind(fdOf(fd), a, sa.len) < 0 ? errno : 0;
}

int sockListen(std::intptr_t fd) {
  return listen(fdOf(fd), SOMAXCONN) < 0 ? errno : 0;
}

int sockAccept(std::intptr_t fd, std::intptr_t* nfd) {
  for (;;) {
    int s = accept4(fdOf(fd), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (s >= 0) {
      *nfd = s;
      return 0;
    }
    // Go's accept (internal/poll/sock_cloexec.go:16) retries these: the
    // connection died in the queue.
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return code(errno);
  }
}

int sockConnect(std::intptr_t fd, const SockAddr& sa) {
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  for (;;) {
    if (connect(fdOf(fd), a, sa.len) == 0) return 0;
    if (errno == EINTR)
      continue;  // the connect goes on: wait as for EINPROGRESS
    return code(errno == EALREADY ? EINPROGRESS : errno);
  }
}

int sockError(std::intptr_t fd, int* err) {
  socklen_t len = sizeof *err;
  return getsockopt(fdOf(fd), SOL_SOCKET, SO_ERROR, err, &len) < 0 ? errno : 0;
}

int sockNoDelay(std::intptr_t fd) {
  int one = 1;
  return setsockopt(fdOf(fd), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0
             ? errno
             : 0;
}

namespace {
int setInt(std::intptr_t fd, int level, int opt, int v) {
  return setsockopt(fdOf(fd), level, opt, &v, sizeof v) < 0 ? errno : 0;
}
}  // namespace

int sockKeepAlive(std::intptr_t fd, bool on) {
  return setInt(fd, SOL_SOCKET, SO_KEEPALIVE, on ? 1 : 0);
}

int sockKeepAlivePeriod(std::intptr_t fd, int secs) {
  if (int err = setInt(fd, IPPROTO_TCP, TCP_KEEPINTVL, secs)) return err;
  return setInt(fd, IPPROTO_TCP, TCP_KEEPIDLE, secs);
}

int sockSetNoDelay(std::intptr_t fd, bool on) {
  return setInt(fd, IPPROTO_TCP, TCP_NODELAY, on ? 1 : 0);
}

int sockLinger(std::intptr_t fd, int secs) {
  linger l{secs >= 0 ? 1 : 0, secs >= 0 ? secs : 0};
  return setsockopt(fdOf(fd), SOL_SOCKET, SO_LINGER, &l, sizeof l) < 0 ? errno
                                                                       : 0;
}

int sockBuffer(std::intptr_t fd, bool read, int bytes) {
  return setInt(fd, SOL_SOCKET, read ? SO_RCVBUF : SO_SNDBUF, bytes);
}

int sockV6Only(std::intptr_t fd, bool on) {
  int v = on ? 1 : 0;
  return setsockopt(fdOf(fd), IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof v) < 0
             ? errno
             : 0;
}

std::uint32_t zoneIndex(const std::string& zone) {
  if (unsigned i = if_nametoindex(zone.c_str())) return i;
  char* end = nullptr;
  unsigned long n = std::strtoul(zone.c_str(), &end, 10);
  return *end == '\0' ? static_cast<std::uint32_t>(n) : 0;
}

std::string zoneName(std::uint32_t index) {
  char name[IF_NAMESIZE];
  if (if_indextoname(index, name) != nullptr) return name;
  return std::to_string(index);
}

int sockShutdownWrite(std::intptr_t fd) {
  return shutdown(fdOf(fd), SHUT_WR) < 0 ? errno : 0;
}

bool sockaddrUnix(const std::string& path, SockAddr* sa) {
  std::memset(sa->data, 0, sizeof sa->data);
  auto* a = reinterpret_cast<sockaddr_un*>(sa->data);
  if (path.empty() || path.size() >= sizeof a->sun_path) return false;
  a->sun_family = AF_UNIX;
  std::memcpy(a->sun_path, path.data(), path.size());
  // "@name": Linux's abstract namespace, a leading NUL and no terminator
  // (Go's UnixAddr.sockaddr (net/unixsock_posix.go:90) for a name starting with
  // '@').
  bool abstract = path[0] == '@';
  if (abstract) a->sun_path[0] = '\0';
  sa->len = static_cast<std::uint32_t>(offsetof(sockaddr_un, sun_path) +
                                       path.size() + (abstract ? 0 : 1));
  return true;
}

std::string sockaddrLocalString(const SockAddr& sa) {
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  if (a->sa_family != AF_UNIX) return "";
  const auto* un = reinterpret_cast<const sockaddr_un*>(sa.data);
  std::size_t max = sa.len > offsetof(sockaddr_un, sun_path)
                        ? sa.len - offsetof(sockaddr_un, sun_path)
                        : 0;
  if (max > 0 && un->sun_path[0] == '\0') {  // abstract: "@name"
    std::string s = "@";  // not "@" + std::string: GCC 12 -Wrestrict
    s.append(un->sun_path + 1, max - 1);
    return s;
  }
  return std::string(un->sun_path, strnlen(un->sun_path, max));
}

void netStartup() {}

int sockErr() { return errno; }

void unlinkPath(const std::string& path) { unlink(path.c_str()); }

}  // namespace gort::os
