// runtime/os/net_stub.cc: the socket seam (os/net_os.h) on an OS whose
// poller backend does not exist yet (Windows until netpoll_windows.cc):
// every call fails with kErrNotSupported, so net and poll::FD throw
// gort::net::Error "... not supported by gort on this OS yet".
#include "os/net_os.h"

namespace gort::os {

std::string errstr(int err) {
  if (err == kErrNotSupported) return "not supported by gort on this OS yet";
  if (err == kErrNoSuchHost) return "no such host";
  return "errno " + std::to_string(err);
}
int osErrno(int err) { return err > 0 ? err : 0; }
bool isPermErr(int) { return false; }
int fdSetNonblock(std::intptr_t, bool) { return kErrNotSupported; }
int fdClose(std::intptr_t) { return kErrNotSupported; }
int fdRead(std::intptr_t, void*, std::size_t, std::size_t*) {
  return kErrNotSupported;
}
bool sockReadHint(std::intptr_t) { return false; }
int sockReadHinted(std::intptr_t, void*, std::size_t, std::size_t*, bool* d) {
  *d = false;
  return kErrNotSupported;
}
int fdWrite(std::intptr_t, const void*, std::size_t, std::size_t*) {
  return kErrNotSupported;
}
WriteFn fdWriter(std::intptr_t) { return fdWrite; }
int sockSocket(Family, std::intptr_t*, bool) { return kErrNotSupported; }
int sockRecvFrom(std::intptr_t, void*, std::size_t, std::size_t*, SockAddr*) {
  return kErrNotSupported;
}
int sockSendTo(std::intptr_t, const void*, std::size_t, const SockAddr&,
               std::size_t*) {
  return kErrNotSupported;
}
int sockBind(std::intptr_t, const SockAddr&, bool) { return kErrNotSupported; }
int sockListen(std::intptr_t) { return kErrNotSupported; }
int sockAccept(std::intptr_t, std::intptr_t*) { return kErrNotSupported; }
int sockConnect(std::intptr_t, const SockAddr&) { return kErrNotSupported; }
int sockError(std::intptr_t, int*) { return kErrNotSupported; }
int sockNoDelay(std::intptr_t) { return kErrNotSupported; }
int sockShutdownWrite(std::intptr_t) { return kErrNotSupported; }
int sockName(std::intptr_t, SockAddr*) { return kErrNotSupported; }
int sockPeer(std::intptr_t, SockAddr*) { return kErrNotSupported; }
bool parseIP(const std::string&, unsigned char*, bool*) { return false; }
int lookupHostAll(const std::string&, bool, bool, IPAddr*, int, int* n) {
  *n = 0;
  return kErrNotSupported;
}
bool sockaddrInet(const unsigned char*, bool, int, SockAddr*) { return false; }
bool sockaddrUnix(const std::string&, SockAddr*) { return false; }
std::string sockaddrString(const SockAddr&) { return ""; }
void unlinkPath(const std::string&) {}

}  // namespace gort::os
