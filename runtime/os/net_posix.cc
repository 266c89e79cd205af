// runtime/os/net_posix.cc: descriptor and socket calls for poll::FD and net
// on POSIX systems (Go's syscall package, used by internal/poll and net).
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cstring>

#include "os/net_os.h"

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
    // Go's accept retries these: the connection died in the queue.
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

int sockName(std::intptr_t fd, SockAddr* sa) {
  socklen_t len = sizeof sa->data;
  if (getsockname(fdOf(fd), reinterpret_cast<sockaddr*>(sa->data), &len) < 0) {
    return errno;
  }
  sa->len = len;
  return 0;
}

int sockPeer(std::intptr_t fd, SockAddr* sa) {
  socklen_t len = sizeof sa->data;
  if (getpeername(fdOf(fd), reinterpret_cast<sockaddr*>(sa->data), &len) < 0) {
    return errno;
  }
  sa->len = len;
  return 0;
}

bool parseIP(const std::string& s, unsigned char* ip, bool* v4) {
  std::memset(ip, 0, 16);
  if (inet_pton(AF_INET, s.c_str(), ip) == 1) {
    *v4 = true;
    return true;
  }
  if (inet_pton(AF_INET6, s.c_str(), ip) == 1) {
    *v4 = false;
    return true;
  }
  return false;
}

int lookupHost(const std::string& host, bool want4, bool want6,
               unsigned char* ip, bool* v4) {
  addrinfo hints{};
  hints.ai_family = want4 && !want6 ? AF_INET : want6 && !want4 ? AF_INET6
                                                                 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    return kErrNoSuchHost;
  }
  // IPv4 first, as Go's dialer prefers for "tcp".
  const addrinfo* pick = nullptr;
  for (const addrinfo* a = res; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
    if (pick == nullptr && a->ai_family == AF_INET6) pick = a;
  }
  int rc = kErrNoSuchHost;
  std::memset(ip, 0, 16);
  if (pick != nullptr && pick->ai_family == AF_INET) {
    std::memcpy(ip, &reinterpret_cast<sockaddr_in*>(pick->ai_addr)->sin_addr, 4);
    *v4 = true;
    rc = 0;
  } else if (pick != nullptr) {
    std::memcpy(ip, &reinterpret_cast<sockaddr_in6*>(pick->ai_addr)->sin6_addr,
                16);
    *v4 = false;
    rc = 0;
  }
  freeaddrinfo(res);
  return rc;
}

bool sockaddrInet(const unsigned char* ip, bool v4, int port, SockAddr* sa) {
  std::memset(sa->data, 0, sizeof sa->data);
  if (v4) {
    auto* a = reinterpret_cast<sockaddr_in*>(sa->data);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<std::uint16_t>(port));
    std::memcpy(&a->sin_addr, ip, 4);
    sa->len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(sa->data);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<std::uint16_t>(port));
    std::memcpy(&a->sin6_addr, ip, 16);
    sa->len = sizeof *a;
  }
  return true;
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

std::string sockaddrString(const SockAddr& sa) {
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  char buf[INET6_ADDRSTRLEN];
  if (sa.len == 0) return "";
  if (a->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa.data);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (a->sa_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(sa.data);
    inet_ntop(AF_INET6, &in->sin6_addr, buf, sizeof buf);
    return "[" + std::string(buf) + "]:" + std::to_string(ntohs(in->sin6_port));
  }
  if (a->sa_family == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(sa.data);
    std::size_t max = sa.len > offsetof(sockaddr_un, sun_path)
                          ? sa.len - offsetof(sockaddr_un, sun_path)
                          : 0;
    return std::string(un->sun_path, strnlen(un->sun_path, max));
  }
  return "";
}

void unlinkPath(const std::string& path) { unlink(path.c_str()); }

}  // namespace gort::os
