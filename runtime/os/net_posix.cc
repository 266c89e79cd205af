// runtime/os/net_posix.cc: descriptor and socket calls for poll::FD and net
// on POSIX systems (Go's syscall package, used by internal/poll and net).
// Socket addresses are net_addr.cc's, shared with Winsock.
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
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
  switch (err) {
    case kErrAgain: return "resource temporarily unavailable";
    case kErrInProgress: return "operation now in progress";
    case kErrNoSuchHost: return "no such host";
    case kErrNotSupported: return "not supported by gort on this OS yet";
    default: break;
  }
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

int fdWrite(std::intptr_t fd, const void* buf, std::size_t len,
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

int sockSocket(Family f, std::intptr_t* fd) {
  int dom = f == Family::kInet4 ? AF_INET : f == Family::kInet6 ? AF_INET6
                                                                 : AF_UNIX;
  int s = socket(dom, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  *fd = s;
  return 0;
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
    // Go's accept (internal/poll/sock_cloexec.go:16) retries these: the connection died in the queue.
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return code(errno);
  }
}

int sockConnect(std::intptr_t fd, const SockAddr& sa) {
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  for (;;) {
    if (connect(fdOf(fd), a, sa.len) == 0) return 0;
    if (errno == EINTR) continue;  // the connect goes on: wait as for EINPROGRESS
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

int sockShutdownWrite(std::intptr_t fd) {
  return shutdown(fdOf(fd), SHUT_WR) < 0 ? errno : 0;
}

bool sockaddrUnix(const std::string& path, SockAddr* sa) {
  std::memset(sa->data, 0, sizeof sa->data);
  auto* a = reinterpret_cast<sockaddr_un*>(sa->data);
  if (path.empty() || path.size() >= sizeof a->sun_path) return false;
  a->sun_family = AF_UNIX;
  std::memcpy(a->sun_path, path.data(), path.size());
  sa->len = static_cast<std::uint32_t>(offsetof(sockaddr_un, sun_path) +
                                       path.size() + 1);
  return true;
}

std::string sockaddrLocalString(const SockAddr& sa) {
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  if (a->sa_family != AF_UNIX) return "";
  const auto* un = reinterpret_cast<const sockaddr_un*>(sa.data);
  std::size_t max = sa.len > offsetof(sockaddr_un, sun_path)
                        ? sa.len - offsetof(sockaddr_un, sun_path)
                        : 0;
  return std::string(un->sun_path, strnlen(un->sun_path, max));
}

void netStartup() {}

int sockErr() { return errno; }

void unlinkPath(const std::string& path) { unlink(path.c_str()); }

}  // namespace gort::os
