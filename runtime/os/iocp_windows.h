// runtime/os/iocp_windows.h: what the Windows poller (netpoll_windows.cc)
// and the Windows socket layer (net_windows.cc) share: one overlapped
// operation (Go's internal/poll.operation (internal/poll/fd_windows.go:66)) and
// the system headers, in the order Winsock wants them. Included by those two
// files only.
#ifndef GORT_RUNTIME_OS_IOCP_WINDOWS_H_
#define GORT_RUNTIME_OS_IOCP_WINDOWS_H_

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0A00
#endif
// clang-format off
#include <winsock2.h>
#include <ws2tcpip.h>
#include <mswsock.h>
#include <windows.h>
// clang-format on

#include <atomic>
#include <cstdint>

#include "os/net_os.h"

namespace gort::os {

// IoOp mirrors Go's poll.operation (internal/poll/fd_windows.go:66): the
// OVERLAPPED the OS writes to while the operation is in flight, what netpoll
// reports it as, and its result. IoOps are pooled and never freed, so a
// completion for an abandoned operation always finds valid memory; netpoll
// recognises it as stale by its completion key (the registration's), which then
// differs from op->key.
struct IoOp {
  OVERLAPPED ov;  // first: a completion hands back &ov
  SOCKET fd = INVALID_SOCKET;
  std::uint64_t key = 0;  // the pollDesc's key (also the completion key)
  std::int32_t mode = 0;  // kPollRead or kPollWrite
  DWORD qty = 0;          // bytes transferred
  int err = 0;            // the Winsock error, 0 if none
  bool connect = false;   // a ConnectEx is in flight or done
  bool skipSync = false;  // no completion packet for an at-once success
  SOCKET accepted = INVALID_SOCKET;  // AcceptEx's new socket
  // AcceptEx's local and remote addresses, each sockaddr_storage + 16.
  char addrs[2 * (sizeof(sockaddr_storage) + 16)];
  // WSARecvFrom's sender (and its length), or WSASendTo's target, which
  // the OS may read until the operation completes.
  sockaddr_storage peer{};
  INT peerLen = 0;
  DWORD len = 0;         // the buffer's size, for a truncated datagram
  IoOp* next = nullptr;  // in the pool
  // The thread that started the current operation (ioThreadExit).
  std::atomic<DWORD> starter{0};
};

// completionKey: the completion key a socket registered with key gets: the
// key itself where pointers have 64 bits, else a 32-bit mix of its slot and
// sequence halves (a stale packet then passes only on a hash collision).
inline ULONG_PTR completionKey(std::uint64_t key) {
  if constexpr (sizeof(ULONG_PTR) >= 8) {
    return static_cast<ULONG_PTR>(key);
  } else {
    return static_cast<ULONG_PTR>((key * 0x9E3779B97F4A7C15ull) >> 32);
  }
}

// ioComplete: netpoll found a completion for op: fetch its result into op;
// false if op is still in flight (the packet is a stale one).
bool ioComplete(IoOp* op);

}  // namespace gort::os

#endif  // GORT_RUNTIME_OS_IOCP_WINDOWS_H_
