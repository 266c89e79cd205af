// runtime/os/net_readiness.cc: the completion-model calls of os/net_os.h
// for an OS whose sockets are readiness-based (net_posix.cc) or absent
// (net_stub.cc). The completion model is Windows' (net_windows.cc); here
// ioCompletion() is false and the runtime never calls the rest.
#include "os/net_os.h"

namespace gort::os {

// The completion model is Windows' (os/net_os.h): never used here.
bool ioCompletion() { return false; }
IoOp* ioOpNew(std::intptr_t, std::uint64_t, std::int32_t) { return nullptr; }
void ioOpFree(IoOp*) {}
int ioRecv(IoOp*, void*, std::size_t) { return kErrNotSupported; }
int ioSend(IoOp*, const void*, std::size_t) { return kErrNotSupported; }
int ioRecvFrom(IoOp*, void*, std::size_t) { return kErrNotSupported; }
int ioSendTo(IoOp*, const void*, std::size_t, const SockAddr&) {
  return kErrNotSupported;
}
void ioFrom(const IoOp*, SockAddr* from) { from->len = 0; }
int ioAccept(IoOp*) { return kErrNotSupported; }
int ioConnect(IoOp*, const SockAddr&) { return kErrNotSupported; }
int ioResult(IoOp*, std::size_t* n, std::intptr_t*) {
  *n = 0;
  return kErrNotSupported;
}
void ioCancel(IoOp*) {}
void ioAbandon(IoOp*) {}
void ioThreadExit() {}

}  // namespace gort::os
