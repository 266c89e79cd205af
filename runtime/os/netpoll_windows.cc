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
// - High-resolution waits as Go 1.23 does them (golang/go#44343): a timed
//   wait in high-resolution mode arms a high-resolution waitable timer and
//   associates it with the port through a wait completion packet
//   (NtCreateWaitCompletionPacket / NtAssociateWaitCompletionPacket), so
//   the timer's expiry arrives as a packet and GetQueuedCompletionStatusEx
//   waits without a millisecond timeout. Go keeps a timer and a packet per
//   M; gort keeps one, because only one M at a time blocks in netpoll with
//   a timeout (findRunnable's lastpoll), and a second timed poll (a test's)
//   falls back. Where ntdll lacks the entry points (before Windows 8, or
//   Wine 8) or the timer cannot be high-resolution (before Windows 10
//   1803), waits round up to whole milliseconds, as in low-resolution mode.
#include <atomic>

#include "os/iocp_windows.h"
#include "os/netpoll_os.h"
#include "os/windows_sdk.h"

namespace gort::os {

namespace {

HANDLE iocp = nullptr;
// netpollWakeSig: a break packet is queued and not yet dequeued.
std::atomic<std::uint32_t> wakeSig{0};

constexpr ULONG kEntries = 64;

// The high-resolution timer packet (ntdll's, resolved at run time).
using NtCreateWaitCompletionPacketFn = LONG(WINAPI*)(HANDLE*, ACCESS_MASK,
                                                     void*);
using NtAssociateWaitCompletionPacketFn = LONG(WINAPI*)(HANDLE, HANDLE, HANDLE,
                                                        void*, void*, LONG,
                                                        ULONG_PTR, BOOLEAN*);
using NtCancelWaitCompletionPacketFn = LONG(WINAPI*)(HANDLE, BOOLEAN);
NtAssociateWaitCompletionPacketFn ntAssociate = nullptr;
NtCancelWaitCompletionPacketFn ntCancel = nullptr;
HANDLE waitTimer = nullptr;   // high-resolution waitable timer
HANDLE waitPacket = nullptr;  // its wait completion packet
std::atomic<bool> waitBusy{false};
// timerPacket: the lpOverlapped of the timer's packet (break packets have
// none, operations their IoOp).
char timerPacketTag;
OVERLAPPED* const timerPacket = reinterpret_cast<OVERLAPPED*>(&timerPacketTag);

// initWaitPacket mirrors the part of Go 1.23's netpollinit and mpreinit
// that creates the timer and its packet; false leaves waits in milliseconds.
bool initWaitPacket() {
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  if (ntdll == nullptr) return false;
  auto create =
      reinterpret_cast<NtCreateWaitCompletionPacketFn>(reinterpret_cast<void*>(
          GetProcAddress(ntdll, "NtCreateWaitCompletionPacket")));
  ntAssociate = reinterpret_cast<NtAssociateWaitCompletionPacketFn>(
      reinterpret_cast<void*>(
          GetProcAddress(ntdll, "NtAssociateWaitCompletionPacket")));
  ntCancel =
      reinterpret_cast<NtCancelWaitCompletionPacketFn>(reinterpret_cast<void*>(
          GetProcAddress(ntdll, "NtCancelWaitCompletionPacket")));
  if (create == nullptr || ntAssociate == nullptr || ntCancel == nullptr) {
    return false;
  }
  waitTimer = CreateWaitableTimerExW(nullptr, nullptr,
                                     CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
                                     TIMER_ALL_ACCESS);
  if (waitTimer == nullptr) return false;
  if (create(&waitPacket, GENERIC_ALL, nullptr) < 0) {
    CloseHandle(waitTimer);
    waitTimer = waitPacket = nullptr;
    return false;
  }
  return true;
}

void finiWaitPacket() {
  if (waitPacket != nullptr) CloseHandle(waitPacket);
  if (waitTimer != nullptr) CloseHandle(waitTimer);
  waitTimer = waitPacket = nullptr;
  waitBusy.store(false);
}

// armWaitPacket: the timer's packet will reach the port in delay ns; false
// if that cannot be done (the caller then waits in milliseconds).
bool armWaitPacket(std::int64_t delay) {
  if (waitPacket == nullptr || waitBusy.exchange(true)) return false;
  LARGE_INTEGER due;
  due.QuadPart = -((delay + 99) / 100);  // relative, in 100 ns units
  if (!SetWaitableTimer(waitTimer, &due, 0, nullptr, nullptr, FALSE) ||
      ntAssociate(waitPacket, iocp, waitTimer, nullptr, timerPacket, 0, 0,
                  nullptr) < 0) {
    waitBusy.store(false);
    return false;
  }
  return true;
}

// disarmWaitPacket: after the wait: a packet not yet queued, or queued and
// not dequeued, is withdrawn (Go: NtCancelWaitCompletionPacket).
void disarmWaitPacket() {
  ntCancel(waitPacket, TRUE);
  CancelWaitableTimer(waitTimer);
  waitBusy.store(false);
}

// waitMillis: GetQueuedCompletionStatusEx's timeout for delay ns.
DWORD waitMillis(std::int64_t delay) {
  if (delay < 0) return INFINITE;
  if (delay == 0) return 0;
  if (delay >= std::int64_t{1'000'000'000'000'000}) return 1'000'000'000;
  return static_cast<DWORD>((delay + 999'999) / 1'000'000);
}

}  // namespace

bool netpollSupported() { return true; }

// netpollinit mirrors Go's netpollinit (netpoll_windows.go:41): the completion
// port.
int netpollinit() {
  iocp = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0xffffffff);
  if (iocp == nullptr) return static_cast<int>(GetLastError());
  wakeSig.store(0);
  if (!initWaitPacket()) finiWaitPacket();
  return 0;
}

void netpollfini() {
  finiWaitPacket();
  if (iocp != nullptr) CloseHandle(iocp);
  iocp = nullptr;
  wakeSig.store(0);
}

bool netpollIsPollDescriptor(std::uintptr_t fd) {
  return iocp != nullptr && fd == reinterpret_cast<std::uintptr_t>(iocp);
}

// netpollopen mirrors Go's netpollopen (netpoll_windows.go:53): associate the
// socket with the port.
int netpollopen(std::uintptr_t fd, std::uint64_t key) {
  HANDLE h = reinterpret_cast<HANDLE>(fd);
  if (CreateIoCompletionPort(h, iocp, completionKey(key), 0) == nullptr) {
    return static_cast<int>(GetLastError());
  }
  return 0;
}

// netpollclose mirrors Go's: nothing to undo (closing the socket does).
int netpollclose(std::uintptr_t) { return 0; }

// netpollBreak mirrors Go's netpollBreak (netpoll_windows.go:69): one queued
// packet at most.
int netpollBreak() {
  std::uint32_t zero = 0;
  if (!wakeSig.compare_exchange_strong(zero, 1)) return 0;
  if (!PostQueuedCompletionStatus(iocp, 0, 0, nullptr)) {
    wakeSig.store(0);
    return static_cast<int>(GetLastError());
  }
  return 0;
}

// netpoll mirrors Go's netpoll (netpoll_windows.go:83): dequeue completions (up
// to max).
std::int32_t netpoll(std::int64_t delay, bool highRes, PollEvent* ev,
                     std::int32_t max) {
  if (iocp == nullptr || max <= 0) return 0;
  OVERLAPPED_ENTRY entries[kEntries];
  ULONG want =
      static_cast<ULONG>(max) < kEntries ? static_cast<ULONG>(max) : kEntries;
  ULONG got = 0;
  bool packet = highRes && delay > 0 && armWaitPacket(delay);
  BOOL ok = GetQueuedCompletionStatusEx(
      iocp, entries, want, &got, packet ? INFINITE : waitMillis(delay), FALSE);
  if (packet) disarmWaitPacket();
  if (!ok) return 0;  // WAIT_TIMEOUT, or the port closed at a Run's end
  std::int32_t n = 0;
  for (ULONG i = 0; i < got; i++) {
    OVERLAPPED* ov = entries[i].lpOverlapped;
    if (ov == timerPacket) {  // the timed wait is over
      // A non-blocking poll took the packet meant for a blocked one.
      if (delay == 0) netpollBreak();
      continue;
    }
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
    ev[n].unclean = true;  // completions: no read is ever skipped
    n++;
  }
  return n;
}

const char* netpollHighResMethod() {
  return waitPacket != nullptr ? "wait completion packet" : "none";
}

}  // namespace gort::os
