// runtime/os/netpoll_os.h: the seam between the portable network poller
// (runtime/netpoll.cc, Go's netpoll.go) and the OS's readiness or completion
// mechanism (Go's netpoll_epoll.go, netpoll_windows.go). No system header
// here: the poller passes descriptors as integers and identifies each
// registration by an opaque 64-bit key it chose (a pollDesc slot and its
// fdseq), which the OS layer hands back with every event.
//
// One implementation per OS: netpoll_epoll.cc (Linux) and, until the IOCP
// backend exists, netpoll_stub.cc (Windows: netpollSupported() is false and
// registering a descriptor fails with a "not supported" error).
#ifndef GORT_RUNTIME_OS_NETPOLL_OS_H_
#define GORT_RUNTIME_OS_NETPOLL_OS_H_

#include <cstdint>

namespace gort::os {

// Poll modes (Go's 'r' and 'w'); an event may carry both.
inline constexpr std::int32_t kPollRead = 1;
inline constexpr std::int32_t kPollWrite = 2;

// PollEvent: one descriptor found ready by netpoll.
// No default member initializers: netpoll's batch of 128 lives on the stack
// of every poll, and zeroing it (2 KiB, a rep stos) was half of netpoll's
// own time in TCPPingPong's profile; os::netpoll writes every field of each
// event it returns.
struct PollEvent {
  std::uint64_t key;  // the key given to netpollopen
  std::int32_t mode;  // kPollRead | kPollWrite
  bool err;           // an error condition alone (events == EPOLLERR)
  bool unclean;       // with a hang-up or an error (gort: pdReadyUnclean)
};

// netpollSupported: whether this OS has a poller backend at all.
bool netpollSupported();
// netpollinit: creates the poller and its break channel; 0 or an errno
// (Go's netpollinit (netpoll_epoll.go:32)).
int netpollinit();
// netpollfini: closes what netpollinit opened (gort: at the end of a Run).
void netpollfini();
// netpollIsPollDescriptor: fd is the poller's own (Go's function).
bool netpollIsPollDescriptor(std::uintptr_t fd);
// netpollopen: registers fd, edge-triggered for read and write, with key;
// 0 or an errno (Go's netpollopen (netpoll_epoll.go:64)).
int netpollopen(std::uintptr_t fd, std::uint64_t key);
// netpollclose: removes fd; 0 or an errno (Go's netpollclose
// (netpoll_epoll.go:71)).
int netpollclose(std::uintptr_t fd);
// netpollBreak: wakes a thread blocked in netpoll; several calls before it
// wakes cost one wake-up (Go's netpollBreak (netpoll_epoll.go:81)). 0, or an
// errno if the wake-up could not be sent (the runtime throws).
int netpollBreak();
// netpoll: waits at most delay ns (< 0: until an event or a break, 0: not
// at all) and stores up to max ready descriptors in ev; returns how many.
// highRes: honour delay to the nanosecond (epoll_pwait2, or a timerfd in
// the set); otherwise wait in whole milliseconds (Linux: netpollWaitMs, as
// Go does; Windows: rounded up). A break
// or an interrupted wait returns 0 early (Go's netpoll (netpoll_epoll.go:106));
// a failed wait returns -errno (the runtime throws).
std::int32_t netpoll(std::int64_t delay, bool highRes, PollEvent* ev,
                     std::int32_t max);
// netpollWaitMs: epoll_wait's timeout in ms for a low-resolution wait of
// delay ns (Linux; Go's netpoll (netpoll_epoll.go:106): below 1 ms waits 1 ms,
// and from 1e15 ns on it waits a capped 1e9 ms).
int netpollWaitMs(std::int64_t delay);
// netpollHighResMethod: how high-resolution waits are done: "epoll_pwait2",
// "timerfd", "wait completion packet" (Windows), or "none" (for the usleep
// probe and docs).
const char* netpollHighResMethod();

}  // namespace gort::os

#endif  // GORT_RUNTIME_OS_NETPOLL_OS_H_
