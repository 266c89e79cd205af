// runtime/os/netpoll_windows.cc: the poller's OS half on Windows, an I/O
// completion port (Go's netpoll_windows.go).
//
// Windows reports completions, not readiness: poll::FD starts each
// operation itself (overlapped WSARecv, WSASend, AcceptEx, ConnectEx in
// net_windows.cc) and parks on its pollDesc; netpoll dequeues completions
// with GetQueuedCompletionStatusEx, stores each operation's result in its
// IoOp and reports the operation's pollDesc key and mode as "ready".
// netpollBreak posts an empty packet.
//
// Differences from Go:
// - A socket's completion key is its pollDesc key; an operation whose key
//   no longer matches the packet's is stale (its descriptor was closed and
//   its IoOp reused) and is dropped. Go compares op.pd with the key.
// - No high-resolution waits yet: a wait is rounded up to whole
//   milliseconds in both timer modes (Go 1.23's high-resolution timer
//   packets, NtAssociateWaitCompletionPacket, are not done).
#include <atomic>

#include "os/iocp_windows.h"
#include "os/netpoll_os.h"

namespace gort::os {

namespace {

HANDLE iocp = nullptr;
// netpollWakeSig: a break packet is queued and not yet dequeued.
std::atomic<std::uint32_t> wakeSig{0};

constexpr ULONG kEntries = 64;

// waitMillis: GetQueuedCompletionStatusEx's timeout for delay ns.
DWORD waitMillis(std::int64_t delay) {
  if (delay < 0) return INFINITE;
  if (delay == 0) return 0;
  if (delay >= std::int64_t{1'000'000'000'000'000}) return 1'000'000'000;
  return static_cast<DWORD>((delay + 999'999) / 1'000'000);
}

}  // namespace

bool netpollSupported() { return true; }

// netpollinit mirrors Go's netpollinit: the completion port.
int netpollinit() {
  iocp = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0xffffffff);
  if (iocp == nullptr) return static_cast<int>(GetLastError());
  wakeSig.store(0);
  return 0;
}

void netpollfini() {
  if (iocp != nullptr) CloseHandle(iocp);
  iocp = nullptr;
  wakeSig.store(0);
}

bool netpollIsPollDescriptor(std::uintptr_t fd) {
  return iocp != nullptr && fd == reinterpret_cast<std::uintptr_t>(iocp);
}

// netpollopen mirrors Go's netpollopen: associate the socket with the port.
int netpollopen(std::uintptr_t fd, std::uint64_t key) {
  HANDLE h = reinterpret_cast<HANDLE>(fd);
  if (CreateIoCompletionPort(h, iocp, completionKey(key), 0) == nullptr) {
    return static_cast<int>(GetLastError());
  }
  return 0;
}

// netpollclose mirrors Go's: nothing to undo (closing the socket does).
int netpollclose(std::uintptr_t) { return 0; }

// netpollBreak mirrors Go's netpollBreak: one queued packet at most.
int netpollBreak() {
  std::uint32_t zero = 0;
  if (!wakeSig.compare_exchange_strong(zero, 1)) return 0;
  if (!PostQueuedCompletionStatus(iocp, 0, 0, nullptr)) {
    wakeSig.store(0);
    return static_cast<int>(GetLastError());
  }
  return 0;
}

// netpoll mirrors Go's netpoll: dequeue completions (up to max).
std::int32_t netpoll(std::int64_t delay, bool highRes, PollEvent* ev,
                     std::int32_t max) {
  if (iocp == nullptr || max <= 0) return 0;
  OVERLAPPED_ENTRY entries[kEntries];
  ULONG want =
      static_cast<ULONG>(max) < kEntries ? static_cast<ULONG>(max) : kEntries;
  ULONG got = 0;
  if (!GetQueuedCompletionStatusEx(iocp, entries, want, &got, waitMillis(delay),
                                   FALSE)) {
    return 0;  // WAIT_TIMEOUT, or the port closed under us at a Run's end
  }
  std::int32_t n = 0;
  for (ULONG i = 0; i < got; i++) {
    OVERLAPPED* ov = entries[i].lpOverlapped;
    if (ov == nullptr) {  // netpollBreak's packet
      wakeSig.store(0);
      // A non-blocking poll consumed a break meant for a blocked one.
      if (delay == 0) netpollBreak();
      continue;
    }
    auto* op = reinterpret_cast<IoOp*>(ov);
    if (completionKey(op->key) != entries[i].lpCompletionKey) {
      continue;  // stale: an abandoned operation's IoOp was reused
    }
    if (!ioComplete(op)) continue;  // stale: op is in flight again
    ev[n].key = op->key;
    ev[n].mode = op->mode;
    ev[n].err = false;
    n++;
  }
  return n;
}

const char* netpollHighResMethod() { return "none"; }

}  // namespace gort::os
