// pkg/hooks/fdtable.cc: the descriptor table of gort::hooks and the parking
// that turns a blocking socket call into a wait on gort's poller.
//
// The table is two-level, indexed by descriptor number: pages of 4096 slots
// allocated on first use (one compare-and-swap) and never freed, so a lookup
// takes no lock and always finds valid memory, even for a number another
// thread is closing. A slot is live while its socket is open; its fdMutex
// (Go's, from internal/poll) counts the calls in flight, serialises readers
// and writers as Go's FD (internal/poll/fd_unix.go:18) does, and carries the
// closed bit, so close can evict parked callers (pollUnblock: they return
// EBADF) and leave the real close to the last of them, as Go's FD.Close
// (internal/poll/fd_unix.go:93) does.
//
// A socket the caller left blocking gets O_NONBLOCK underneath and a
// pollDesc the first time a goroutine would block on it; the caller's view
// of O_NONBLOCK is kept in the slot (fcntl reports it). SO_RCVTIMEO and
// SO_SNDTIMEO become a poller deadline for the length of one call.
#include "hooks/fdtable.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>

#include <new>
#include <utility>

#include "gort/runtime.h"
#include "hooks/real.h"
#include "netpoll.h"
#include "os/netpoll_os.h"
#include "os/os.h"
#include "proc.h"
#include "sema.h"

namespace gort::hooks {

using runtime::pollDesc;

namespace {

constexpr int kPageBits = 12;
constexpr int kPageSize = 1 << kPageBits;
constexpr int kPages = 256;  // descriptors below 2^20 are tracked
constexpr int kMaxFd = kPages * kPageSize;

std::atomic<hookFd*> pages[kPages];
std::atomic<bool> hiddenAny{false};

// slot: fd's slot, allocating its page on first use; nullptr if fd is out
// of the table's range (such descriptors are left to libc).
hookFd* slot(int fd) {
  if (fd < 0 || fd >= kMaxFd) return nullptr;
  std::atomic<hookFd*>& pg = pages[fd >> kPageBits];
  hookFd* page = pg.load(std::memory_order_acquire);
  if (page == nullptr) {
    auto* fresh = new (std::nothrow) hookFd[kPageSize];
    if (fresh == nullptr) return nullptr;
    if (pg.compare_exchange_strong(page, fresh, std::memory_order_acq_rel)) {
      page = fresh;
    } else {
      delete[] fresh;
    }
  }
  return &page[fd & (kPageSize - 1)];
}

// releasePd frees e's pollDesc: through the poller if its Run is current.
void releasePd(hookFd* e) {
  pollDesc* pd = e->pd.exchange(nullptr);
  if (pd == nullptr) return;
  if (runtime::pollStale(pd)) {
    runtime::pollRelease(pd);
    return;
  }
  if (!e->unblocked) runtime::pollUnblock(pd);
  runtime::pollClose(pd);
}

// destroy mirrors Go's FD.destroy (internal/poll/fd_unix.go:74): the last
// reference out of a closed socket releases the pollDesc and closes the
// descriptor; it returns the real close's errno (0 if none) and, if that
// was not the closer itself, hands it over and lets the closer return (on
// csema for a goroutine, on cnote for a plain thread).
// The slot stops being live before the number is free again, so a thread
// that gets the number next (from open, say) never finds it tracked; the
// closer's own destroy touches the slot no more after that, since the next
// socket with the number may already be resetting it. (A destroy by the last
// call still in flight at close writes closeErr and wakes the closer
// afterwards: a socket reusing the number and closed before that wake
// would share the slot's close fields, docs/hooks.md.)
int destroy(hookFd* e, bool byCloser) {
  releasePd(e);
  int fd = e->fd;
  bool closerIsG = e->closerIsG;
  e->live.store(false, std::memory_order_release);
  int err = real().close(fd) < 0 ? errno : 0;
  if (byCloser) return err;
  e->closeErr = err;
  if (closerIsG) {
    runtime::semrelease(&e->csema);
  } else {
    runtime::notewakeup(&e->cnote);
  }
  return err;
}

// waitDestroy: a plain thread's close waits for the last call to leave
// the descriptor (on a note: it has no goroutine to park); false if the
// Run ends first (its parked calls are unwound there and may never leave).
bool waitDestroy(hookFd* e) {
  while (!runtime::notetsleep(&e->cnote, 10'000'000)) {
    pollDesc* pd = e->pd.load(std::memory_order_acquire);
    if (pd != nullptr && runtime::pollStale(pd)) return false;
  }
  return true;
}

// retire drops a stale entry: its descriptor was closed behind the hooks'
// back (a raw syscall, or libc's own internal close) and the number reused.
void retire(hookFd* e) {
  pollDesc* pd = e->pd.exchange(nullptr);
  if (pd == nullptr) return;
  if (runtime::pollStale(pd)) {
    runtime::pollRelease(pd);
  } else {
    // Whoever was parked on it wakes as from a close.
    if (!e->unblocked && runtime::getcurg() != nullptr) {
      runtime::pollUnblock(pd);
      e->unblocked = true;
    }
    if (e->unblocked) {
      runtime::pollClose(pd);
    } else {
      runtime::pollRelease(pd);  // off a goroutine: nobody can be woken
    }
  }
}

void unlockIO(hookFd* e, int mode) {
  if (e->mu.rwunlock(mode == kRead)) destroy(e, false);
}

int pollMode(int mode) {
  return mode == kRead ? os::kPollRead : os::kPollWrite;
}

// hideNonblock makes the caller's blocking socket non-blocking underneath,
// once, before the first call a goroutine makes on it.
void hideNonblock(hookFd* e) {
  if (e->hiddenNonblock.load(std::memory_order_acquire)) return;
  runtime::lock(&e->initLock);
  if (!e->hiddenNonblock.load(std::memory_order_relaxed)) {
    int fl = real().fcntl(e->fd, F_GETFL);
    if (fl >= 0 && !(fl & O_NONBLOCK)) {
      real().fcntl(e->fd, F_SETFL, fl | O_NONBLOCK);
    }
    hiddenAny.store(true, std::memory_order_relaxed);
    e->hiddenNonblock.store(true, std::memory_order_release);
  }
  runtime::unlock(&e->initLock);
}

// openPd gives e a pollDesc of the current Run, the first time a call
// would block (so a socket that never waits is never on the poller);
// nullptr if the poller refuses it (it is already there: the program's own
// gort::poll::FD took it).
pollDesc* openPd(hookFd* e) {
  pollDesc* pd = e->pd.load(std::memory_order_acquire);
  if (pd != nullptr && !runtime::pollStale(pd)) return pd;
  runtime::lock(&e->initLock);
  pd = e->pd.load(std::memory_order_acquire);
  if (pd != nullptr && runtime::pollStale(pd)) {
    runtime::pollRelease(pd);  // opened in an earlier Run
    e->pd.store(nullptr);
    pd = nullptr;
  }
  if (pd == nullptr) {
    int err = 0;
    pd = runtime::pollOpen(static_cast<std::uintptr_t>(e->fd), &err);
    if (pd != nullptr) {
      e->unblocked = false;
      e->pd.store(pd, std::memory_order_release);
      if (e->closing) {  // closed while this call was on its way to park
        runtime::pollUnblock(pd);
        e->unblocked = true;
      }
    }
  }
  runtime::unlock(&e->initLock);
  return pd;
}

// evict mirrors Go's pd.evict (internal/poll/fd_poll_runtime.go:57): calls
// parked on e return EBADF; from a plain thread too (the poller readies
// them). Under initLock with openPd, so a pollDesc that a call racing with
// the close opens is evicted too, once, by whichever of them comes second.
void evict(hookFd* e) {
  runtime::lock(&e->initLock);
  e->closing = true;
  pollDesc* pd = e->pd.load(std::memory_order_acquire);
  if (pd != nullptr && !runtime::pollStale(pd) && !e->unblocked) {
    runtime::pollUnblock(pd);
    e->unblocked = true;
  }
  runtime::unlock(&e->initLock);
}

// reset makes slot e a fresh socket.
void reset(hookFd* e, int fd, bool userNonblock) {
  if (e->live.load(std::memory_order_acquire)) retire(e);
  e->mu.state.store(0, std::memory_order_relaxed);
  e->fd = fd;
  e->kind.store(0, std::memory_order_relaxed);
  e->unblocked = false;  // csema is balanced: every close takes its release
  e->closing = false;
  e->userNonblock.store(userNonblock, std::memory_order_relaxed);
  e->hiddenNonblock.store(false, std::memory_order_relaxed);
  e->rcvtimeo.store(0, std::memory_order_relaxed);
  e->sndtimeo.store(0, std::memory_order_relaxed);
}

}  // namespace

bool onGoroutine() {
  runtime::G* gp = runtime::getcurg();
  return gp != nullptr &&
         gp->atomicstatus.load(std::memory_order_relaxed) == runtime::_Grunning;
}

bool anyHidden() { return hiddenAny.load(std::memory_order_relaxed); }

hookFd* lookup(int fd) {
  if (fd < 0 || fd >= kMaxFd) return nullptr;
  hookFd* page = pages[fd >> kPageBits].load(std::memory_order_acquire);
  if (page == nullptr) return nullptr;
  hookFd* e = &page[fd & (kPageSize - 1)];
  return e->live.load(std::memory_order_acquire) ? e : nullptr;
}

hookFd* track(int fd, bool userNonblock) {
  hookFd* e = slot(fd);
  if (e == nullptr) return nullptr;
  int saved = errno;
  reset(e, fd, userNonblock);
  e->live.store(true, std::memory_order_release);
  errno = saved;
  return e;
}

void trackDup(int nfd, const hookFd* e) {
  hookFd* d = track(nfd, e->userNonblock.load());
  if (d == nullptr) return;
  // O_NONBLOCK belongs to the open file, which the two share.
  d->hiddenNonblock.store(e->hiddenNonblock.load());
  d->rcvtimeo.store(e->rcvtimeo.load());
  d->sndtimeo.store(e->sndtimeo.load());
}

hookFd* adopt(int fd, bool* regular) {
  hookFd* s = slot(fd);
  std::uint8_t kind =
      s != nullptr ? s->kind.load(std::memory_order_relaxed) : 0;
  *regular = kind == kRegularFile;
  if (kind != 0) return nullptr;  // known not to be a socket: no fstat
  int saved = errno;
  struct stat st;
  hookFd* e = nullptr;
  if (fstat(fd, &st) == 0) {
    *regular = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
    if (S_ISSOCK(st.st_mode)) {
      int fl = real().fcntl(fd, F_GETFL);
      if (fl >= 0) e = track(fd, (fl & O_NONBLOCK) != 0);
    } else if (s != nullptr) {
      s->kind.store(*regular ? kRegularFile : kOtherFile,
                    std::memory_order_relaxed);
    }
  }
  errno = saved;
  return e;
}

void forget(int fd) {
  if (fd < 0 || fd >= kMaxFd) return;
  hookFd* page = pages[fd >> kPageBits].load(std::memory_order_acquire);
  if (page != nullptr) {
    page[fd & (kPageSize - 1)].kind.store(0, std::memory_order_relaxed);
  }
}

bool emulatesBlocking(int fd) {
  if (!onGoroutine() && !anyHidden()) return false;
  hookFd* e = lookup(fd);
  return e != nullptr && !e->userNonblock.load() && e->hiddenNonblock.load();
}

int closeFd(hookFd* e) {
  if (!e->mu.increfAndClose()) {
    errno = EBADF;
    return -1;
  }
  bool onG = onGoroutine();
  e->closerIsG = onG;
  runtime::noteclear(&e->cnote);
  evict(e);  // parked calls leave with EBADF
  int err = 0;
  if (e->mu.decref()) {
    err = destroy(e, true);
  } else if (onG) {
    runtime::semacquire(&e->csema);
    err = e->closeErr;
  } else if (waitDestroy(e)) {
    err = e->closeErr;
  } else {
    return 0;  // closed if the unwound call ever leaves: docs/hooks.md
  }
  if (err != 0) {
    errno = err;
    return -1;
  }
  return 0;
}

bool ioBegin(hookFd* e, int mode) {
  if (!e->mu.rwlock(mode == kRead)) {
    errno = EBADF;
    return false;
  }
  hideNonblock(e);
  pollDesc* pd = e->pd.load(std::memory_order_acquire);
  if (pd == nullptr || runtime::pollStale(pd)) return true;
  int saved = errno;
  int res = runtime::pollReset(pd, pollMode(mode));
  errno = saved;
  if (res == runtime::pollErrClosing) {
    unlockIO(e, mode);
    errno = EBADF;
    return false;
  }
  return true;
}

int ioWait(hookFd* e, int mode, bool* armed) {
  pollDesc* pd = openPd(e);
  if (pd == nullptr) {  // not on gort's poller: libc's poll, as a Syscall
    auto wait = [](void* p) -> long {
      auto* a = static_cast<std::pair<hookFd*, int>*>(p);
      return threadWait(a->first, a->second);
    };
    std::pair<hookFd*, int> arg{e, mode};
    return static_cast<int>(blockingCall(wait, &arg));
  }
  std::int64_t timeo = (mode == kRead ? e->rcvtimeo : e->sndtimeo).load();
  if (timeo > 0 && !*armed) {
    runtime::pollSetDeadline(pd, os::nanotime() + timeo, pollMode(mode));
    *armed = true;
  }
  int res = runtime::pollWait(pd, pollMode(mode));
  if (res == runtime::pollErrTimeout) return EAGAIN;  // as SO_RCVTIMEO does
  if (res == runtime::pollErrClosing) return EBADF;
  return 0;
}

void dropPd(hookFd* e) {
  runtime::lock(&e->initLock);
  pollDesc* pd = e->pd.load(std::memory_order_acquire);
  auto idle = [](std::uintptr_t g) { return g == 0 || runtime::pdIsReady(g); };
  if (pd != nullptr && runtime::pollStale(pd)) {
    runtime::pollRelease(pd);
    e->pd.store(nullptr);
  } else if (pd != nullptr && idle(pd->rg.load()) && idle(pd->wg.load())) {
    runtime::pollUnblock(pd);  // nobody parked: wakes nothing
    runtime::pollClose(pd);
    e->pd.store(nullptr);
  }
  runtime::unlock(&e->initLock);
}

void ioEnd(hookFd* e, int mode, bool armed) {
  int saved = errno;
  pollDesc* pd = e->pd.load(std::memory_order_relaxed);
  if (armed && pd != nullptr) runtime::pollSetDeadline(pd, 0, pollMode(mode));
  unlockIO(e, mode);
  errno = saved;
}

long blockingCall(long (*fn)(void*), void* arg) {
  int err = 0;
  long r = Syscall([&] {
    long v = fn(arg);
    err = errno;
    return v;
  });
  errno = err;
  return r;
}

int threadWait(hookFd* e, int mode) {
  std::int64_t timeo = (mode == kRead ? e->rcvtimeo : e->sndtimeo).load();
  int ms = timeo > 0 ? static_cast<int>((timeo + 999'999) / 1'000'000) : -1;
  pollfd p{e->fd, static_cast<short>(mode == kRead ? POLLIN : POLLOUT), 0};
  for (;;) {
    int r = real().poll(&p, 1, ms);
    if (r > 0) return 0;
    if (r == 0) return EAGAIN;
    if (errno != EINTR) return errno;
  }
}

}  // namespace gort::hooks
