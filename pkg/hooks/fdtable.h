// pkg/hooks/fdtable.h: what gort::hooks knows about each descriptor, and the
// park-on-the-poller loop every hooked blocking call shares. Linux only.
#ifndef GORT_PKG_HOOKS_FDTABLE_H_
#define GORT_PKG_HOOKS_FDTABLE_H_

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "internal/poll/poll_fd.h"
#include "lock.h"

namespace gort::runtime {
struct pollDesc;
}  // namespace gort::runtime

namespace gort::hooks {

// hookFd: one tracked socket. Slots are allocated once per descriptor number
// and reused for every socket that later gets the number, so opening and
// closing sockets allocates nothing in steady state.
struct hookFd {
  poll::internal::fdMutex mu;  // references, read/write locks, closed bit
  std::atomic<runtime::pollDesc*> pd{nullptr};  // opened on first park
  runtime::mutex initLock;                      // guards opening pd
  int fd = -1;
  std::atomic<bool> live{false};            // a socket the hooks track
  std::atomic<bool> userNonblock{false};    // O_NONBLOCK as the caller set it
  std::atomic<bool> hiddenNonblock{false};  // O_NONBLOCK set underneath
  std::atomic<std::int64_t> rcvtimeo{0};    // SO_RCVTIMEO in ns, 0 none
  std::atomic<std::int64_t> sndtimeo{0};    // SO_SNDTIMEO in ns, 0 none
  // What a descriptor the hooks do not track was found to be (fstat, once
  // until the hooks see it closed): 0 not known, kRegularFile, kOtherFile.
  std::atomic<std::uint8_t> kind{0};
  bool unblocked = false;   // pollUnblock done (by close)
  bool closing = false;     // close has begun (under initLock)
  int closeErr = 0;         // errno of the real close, for the closer
  std::uint32_t csema = 0;  // a goroutine's close waits here for the last
                            // reference to leave, a plain thread's on cnote
  runtime::note cnote;
  bool closerIsG = false;  // which of them the closer waits on
};

// hookFd::kind values.
inline constexpr std::uint8_t kRegularFile = 1;  // regular file, block device
inline constexpr std::uint8_t kOtherFile = 2;    // pipe, terminal, eventfd...

// Modes, as the poller's (os::kPollRead / kPollWrite).
inline constexpr int kRead = 'r';
inline constexpr int kWrite = 'w';

// onGoroutine: the calling thread runs a user goroutine that is not already
// inside a syscall: the one thread-local check of every hooked call.
bool onGoroutine();
// anyHidden: some socket was ever made non-blocking underneath (a plain
// thread must then look its descriptor up before calling libc).
bool anyHidden();
// lookup: fd's entry if the hooks track it, else nullptr. Lock-free.
hookFd* lookup(int fd);
// track: start tracking a new socket fd (replacing a stale entry).
hookFd* track(int fd, bool userNonblock);
// trackDup: nfd is a duplicate of e's socket.
void trackDup(int nfd, const hookFd* e);
// adopt: on a goroutine, start tracking fd if it is a socket the hooks did
// not see created; nullptr if it is not one (*regular: a regular file or
// block device, whose calls block the thread).
hookFd* adopt(int fd, bool* regular);
// emulatesBlocking: fd is a socket the caller left blocking that the hooks
// made non-blocking underneath, and this caller gets blocking behaviour.
bool emulatesBlocking(int fd);
// forget: fd was closed (or replaced) while untracked: drop its kind.
void forget(int fd);
// dropPd: the caller made e non-blocking: its calls never park again, so
// its pollDesc is released (unless a goroutine is parked on it), leaving
// the descriptor free for the program's own gort::poll::FD.
void dropPd(hookFd* e);
// closeFd: the hooked close of a tracked fd; wakes parked calls with EBADF.
int closeFd(hookFd* e);

// parkIO runs call() (one real, non-blocking attempt, returning -1 with errno
// on failure) until it does not fail with EAGAIN, parking on the poller in
// between, as a blocking call would block; SO_RCVTIMEO / SO_SNDTIMEO give
// EAGAIN. The loop of Go's FD.Read (internal/poll/fd_unix.go:143) over
// pollDesc.waitRead, for a libc caller. errno as libc leaves it.
template <class F>
long parkIO(hookFd* e, int mode, F call);

// --- parkIO's pieces (fdtable.cc) ---
// ioBegin takes e's read or write lock, hides O_NONBLOCK and resets its
// pollDesc (Go's pd.prepare (internal/poll/fd_poll_runtime.go:64)); false:
// closed (errno EBADF).
bool ioBegin(hookFd* e, int mode);
// ioWait parks until e is ready for mode, the timeout passes (EAGAIN) or e is
// closed (EBADF); 0 when ready, else the errno. Where the poller refuses e,
// waits in libc's poll inside gort::Syscall.
int ioWait(hookFd* e, int mode, bool* armed);
// ioEnd drops the lock (and the deadline, if armed).
void ioEnd(hookFd* e, int mode, bool armed);
// blockingCall runs call() inside gort::Syscall (for what cannot be polled).
long blockingCall(long (*fn)(void*), void* arg);
// threadWait: off a goroutine, for a socket made non-blocking underneath
// whose caller expects blocking: poll(2) until ready or the timeout; 0 when
// ready, else the errno.
int threadWait(hookFd* e, int mode);

template <class F>
long parkIO(hookFd* e, int mode, F call) {
  if (!ioBegin(e, mode)) return -1;
  int saved = errno;
  bool armed = false;
  long r;
  int err;
  for (;;) {
    r = call();
    err = r >= 0 ? saved : errno;
    if (r >= 0 || (err != EAGAIN && err != EWOULDBLOCK)) break;
    if ((err = ioWait(e, mode, &armed)) != 0) break;
  }
  ioEnd(e, mode, armed);
  errno = err;
  return r;
}

// threadIO: parkIO for a plain thread: poll(2) instead of the poller.
template <class F>
long threadIO(hookFd* e, int mode, F call) {
  for (;;) {
    long r = call();
    if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return r;
    if (int err = threadWait(e, mode)) {
      errno = err;
      return -1;
    }
  }
}

// hookedIO: the body of every hooked read/write-like call on fd. nonblock:
// this call may not block (MSG_DONTWAIT); files: regular files run as
// gort::Syscall (read/write/readv/writev; a socket call never sees one).
template <class F>
long hookedIO(int fd, int mode, bool nonblock, bool files, F call) {
  if (!onGoroutine()) {
    if (!anyHidden()) return call();
    hookFd* e = lookup(fd);
    if (e == nullptr || nonblock || e->userNonblock.load() ||
        !e->hiddenNonblock.load()) {
      return call();
    }
    return threadIO(e, mode, call);
  }
  hookFd* e = lookup(fd);
  bool regular = false;
  if (e == nullptr) e = adopt(fd, &regular);
  if (e == nullptr) {
    if (!files || !regular) return call();
    auto fn = [](void* p) -> long { return (*static_cast<F*>(p))(); };
    return blockingCall(fn, &call);
  }
  if (nonblock || e->userNonblock.load(std::memory_order_relaxed)) {
    return call();
  }
  return parkIO(e, mode, call);
}

}  // namespace gort::hooks

#endif  // GORT_PKG_HOOKS_FDTABLE_H_
