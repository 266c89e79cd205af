// runtime/os/net_addr.cc: socket addresses for poll::FD and net, the same
// on every OS with BSD sockets (POSIX and Winsock): numeric IP parsing,
// name lookup, sockaddr_in/sockaddr_in6 building and printing, and the
// local and peer addresses of a socket (the address side of Go's syscall
// package, used by net). What differs per OS is in os/net_addr.h's hooks.
#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#endif

#include <cstring>

#include "os/net_addr.h"

namespace gort::os {

namespace {

#if defined(_WIN32)
using Sock = SOCKET;
#else
using Sock = int;
#endif

// copyIP: a's address into ip (16 bytes, IPv4 in the first 4) and *v4.
void copyIP(const addrinfo* a, unsigned char* ip, bool* v4) {
  std::memset(ip, 0, 16);
  *v4 = a->ai_family == AF_INET;
  if (*v4) {
    std::memcpy(ip, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, 4);
  } else {
    std::memcpy(ip, &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr,
                16);
  }
}

// sockAddrOf: getsockname or getpeername (call) of fd into sa.
template <class Call>
int sockAddrOf(Call call, std::intptr_t fd, SockAddr* sa) {
  socklen_t len = sizeof sa->data;
  if (call(static_cast<Sock>(fd), reinterpret_cast<sockaddr*>(sa->data),
           &len) != 0) {
    return sockErr();
  }
  sa->len = static_cast<std::uint32_t>(len);
  return 0;
}

}  // namespace

int sockName(std::intptr_t fd, SockAddr* sa) {
  return sockAddrOf(getsockname, fd, sa);
}

int sockPeer(std::intptr_t fd, SockAddr* sa) {
  return sockAddrOf(getpeername, fd, sa);
}

bool parseIP(const std::string& s, unsigned char* ip, bool* v4,
             std::uint32_t* zone) {
  netStartup();
  std::memset(ip, 0, 16);
  if (zone != nullptr) *zone = 0;
  if (inet_pton(AF_INET, s.c_str(), ip) == 1) {
    *v4 = true;
    return true;
  }
  std::size_t pct = s.find('%');
  if (pct != std::string::npos && (zone == nullptr || pct + 1 == s.size())) {
    return false;
  }
  if (inet_pton(AF_INET6, s.substr(0, pct).c_str(), ip) == 1) {
    *v4 = false;
    if (pct != std::string::npos) *zone = zoneIndex(s.substr(pct + 1));
    return true;
  }
  return false;
}

int lookupPort(const std::string& service) {
  netStartup();
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (getaddrinfo(nullptr, service.c_str(), &hints, &res) != 0 ||
      res == nullptr) {
    return -1;
  }
  int port = ntohs(reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_port);
  freeaddrinfo(res);
  return port;
}

int lookupHostAll(const std::string& host, bool want4, bool want6, IPAddr* out,
                  int max, int* n) {
  netStartup();
  *n = 0;
  addrinfo hints{};
  hints.ai_family = want4 && !want6   ? AF_INET
                    : want6 && !want4 ? AF_INET6
                                      : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    return kErrNoSuchHost;
  }
  for (int family : {AF_INET, AF_INET6}) {  // IPv4 first, as Go's dialer
    for (const addrinfo* a = res; a != nullptr && *n < max; a = a->ai_next) {
      if (a->ai_family != family) continue;
      IPAddr ip;
      copyIP(a, ip.ip, &ip.v4);
      bool dup = false;  // one entry per address, not per protocol
      for (int i = 0; i < *n; i++) {
        dup = dup || (out[i].v4 == ip.v4 &&
                      std::memcmp(out[i].ip, ip.ip, sizeof ip.ip) == 0);
      }
      if (!dup) out[(*n)++] = ip;
    }
  }
  freeaddrinfo(res);
  return *n > 0 ? 0 : kErrNoSuchHost;
}

bool sockaddrInet(const unsigned char* ip, bool v4, int port, SockAddr* sa,
                  std::uint32_t zone) {
  std::memset(sa->data, 0, sizeof sa->data);
  const auto nport = htons(static_cast<std::uint16_t>(port));
  if (v4) {
    auto* a = reinterpret_cast<sockaddr_in*>(sa->data);
    a->sin_family = AF_INET;
    a->sin_port = nport;
    std::memcpy(&a->sin_addr, ip, 4);
    sa->len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(sa->data);
    a->sin6_family = AF_INET6;
    a->sin6_port = nport;
    std::memcpy(&a->sin6_addr, ip, 16);
    a->sin6_scope_id = zone;
    sa->len = sizeof *a;
  }
  return true;
}

std::string sockaddrString(const SockAddr& sa) {
  if (sa.len == 0) return "";
  const auto* a = reinterpret_cast<const sockaddr*>(sa.data);
  char buf[INET6_ADDRSTRLEN];
  if (a->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa.data);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (a->sa_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(sa.data);
    std::string port = std::to_string(ntohs(in->sin6_port));
    const auto* b = reinterpret_cast<const unsigned char*>(&in->sin6_addr);
    static constexpr unsigned char kV4Mapped[12] = {0, 0, 0, 0, 0,    0,
                                                    0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(b, kV4Mapped, 12) == 0) {  // a v4 peer of a [::] socket
      inet_ntop(AF_INET, b + 12, buf, sizeof buf);
      return std::string(buf) + ":" + port;
    }
    inet_ntop(AF_INET6, &in->sin6_addr, buf, sizeof buf);
    // Appended, not "[" + std::string(buf): GCC 12 warns falsely
    // (-Wrestrict) on a one-character literal plus a temporary string.
    std::string host = std::string("[").append(buf);
    if (in->sin6_scope_id != 0)
      host.append("%").append(zoneName(in->sin6_scope_id));
    return host.append("]:") + port;
  }
  return sockaddrLocalString(sa);
}

}  // namespace gort::os
