// runtime/os/net_addr.h: the OS hooks of net_addr.cc, the socket-address
// code POSIX sockets and Winsock share (both are BSD sockets). Each OS's
// net_<os>.cc defines them; net_addr.cc defines the rest of the address part
// of os/net_os.h (parseIP, lookupHostAll, sockaddrInet, sockaddrString,
// sockName, sockPeer) once.
#ifndef GORT_RUNTIME_OS_NET_ADDR_H_
#define GORT_RUNTIME_OS_NET_ADDR_H_

#include <cstdint>
#include <string>

#include "os/net_os.h"

namespace gort::os {

// netStartup readies the socket library before a resolver call (Winsock's
// WSAStartup, once; nothing on POSIX).
void netStartup();
// sockErr: the error of the socket call that just failed (errno on POSIX,
// WSAGetLastError() on Windows).
int sockErr();
// sockaddrLocalString: sockaddrString for the address families beyond
// IPv4 and IPv6 that the OS has (unix-domain paths on POSIX); "" if none.
std::string sockaddrLocalString(const SockAddr& sa);
// zoneIndex / zoneName: an IPv6 zone's interface index from its name (or
// number) and back (Go's zoneCache (net/interface.go:186)); 0 / the number if
// the OS has no name.
std::uint32_t zoneIndex(const std::string& zone);
std::string zoneName(std::uint32_t index);

}  // namespace gort::os

#endif  // GORT_RUNTIME_OS_NET_ADDR_H_
