// tools/wine_net_probe.cc: what Wine's Winsock does with AF_UNIX and with
// IPv6 scope zones (bind, connect and accept on a link-local address with a
// zone, getsockname's sin6_scope_id, getaddrinfo of "addr%zone"); the
// answers are in docs/targets.md. Not part of the build; by hand:
//   x86_64-w64-mingw32-g++-posix -static -o probe.exe
//       tools/wine_net_probe.cc -lws2_32   (one command line)
//   WINEPREFIX=/tmp/probe-prefix WINEDEBUG=-all wine probe.exe [fe80::...]
// The argument is a link-local address of the host (ip -6 addr).
#include <winsock2.h>
#include <ws2tcpip.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  WSADATA w;
  WSAStartup(MAKEWORD(2, 2), &w);
  SOCKET u = socket(AF_UNIX, SOCK_STREAM, 0);
  std::printf("AF_UNIX socket: %s (WSAGetLastError %d)\n",
              u == INVALID_SOCKET ? "fails" : "works", WSAGetLastError());
  if (u != INVALID_SOCKET) closesocket(u);
  const char* ll = argc > 1 ? argv[1] : "fe80::fc:ff:fe00:1";
  for (unsigned zone = 0; zone < 10; zone++) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    inet_pton(AF_INET6, ll, &a.sin6_addr);
    a.sin6_scope_id = zone;
    SOCKET l = socket(AF_INET6, SOCK_STREAM, 0);
    if (bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      std::printf("bind %s%%%u: error %d\n", ll, zone, WSAGetLastError());
      closesocket(l);
      continue;
    }
    listen(l, 4);
    int len = sizeof a;
    getsockname(l, reinterpret_cast<sockaddr*>(&a), &len);
    std::printf("bind %s%%%u: ok, getsockname scope %lu port %u\n", ll, zone,
                static_cast<unsigned long>(a.sin6_scope_id),
                ntohs(a.sin6_port));
    SOCKET c = socket(AF_INET6, SOCK_STREAM, 0);
    int r = connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
    std::printf("  connect with the zone: %s (%d)\n", r == 0 ? "ok" : "fails",
                r == 0 ? 0 : WSAGetLastError());
    sockaddr_in6 peer{};
    len = sizeof peer;
    SOCKET s = accept(l, reinterpret_cast<sockaddr*>(&peer), &len);
    if (s != INVALID_SOCKET) {
      std::printf("  accept: peer scope %lu\n",
                  static_cast<unsigned long>(peer.sin6_scope_id));
      closesocket(s);
    }
    closesocket(c);
    closesocket(l);
    char host[64];
    std::snprintf(host, sizeof host, "%s%%%u", ll, zone);
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET6;
    hints.ai_flags = AI_NUMERICHOST;
    int g = getaddrinfo(host, "80", &hints, &res);
    std::printf(
        "  getaddrinfo(\"%s\"): %s scope %lu\n", host, g == 0 ? "ok" : "fails",
        g == 0
            ? static_cast<unsigned long>(
                  reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_scope_id)
            : 0ul);
    if (res) freeaddrinfo(res);
  }
  WSACleanup();
  return 0;
}
