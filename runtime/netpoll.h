// runtime/netpoll.h: the portable network poller (Go's netpoll.go): pollDesc,
// its cache, parking goroutines on descriptors, deadlines, and the
// scheduler's hooks. The OS half is behind os/netpoll_os.h.
#ifndef GORT_RUNTIME_NETPOLL_H_
#define GORT_RUNTIME_NETPOLL_H_

#include <atomic>
#include <cstdint>

#include "lock.h"
#include "runtime2.h"

namespace gort::runtime {

// Error codes of the poller (Go's pollNoError (netpoll.go:42), pollErrClosing,
// ...).
enum : int {
  pollNoError = 0,
  pollErrClosing = 1,
  pollErrTimeout = 2,
  pollErrNotPollable = 3,
};

// pdReady / pdWait: the non-G values of pollDesc.rg and .wg (Go's).
inline constexpr std::uintptr_t pdReady = 1;
inline constexpr std::uintptr_t pdWait = 2;
// pdReadyUnclean: gort's own third value of rg: ready, and an event since the
// reader last took rg's news reported a hang-up or an error, which the next
// read may have to return (a reader that skips its read needs to know).
inline constexpr std::uintptr_t pdReadyUnclean = 3;
// pdIsReady: rg or wg holds news for the next netpollblock.
inline bool pdIsReady(std::uintptr_t v) {
  return v == pdReady || v == pdReadyUnclean;
}

struct deadlineTimer;

// pollDesc mirrors Go's pollDesc (netpoll.go:73): one per registered
// descriptor, from a cache that never frees, so a stale event or timer always
// finds valid memory and tells from fdseq / rseq / wseq that it is stale.
struct pollDesc {
  pollDesc* link = nullptr;  // in pollcache (guarded by the cache's lock)
  std::uint32_t index = 0;   // slot in the key table; fixed for life
  std::uintptr_t fd = 0;
  std::atomic<std::uint32_t> fdseq{0};  // bumped per open: stale-event guard
  std::atomic<std::uint32_t> info{0};   // pollClosing | pollEventErr | ...
  std::atomic<std::uintptr_t> rg{0};    // pdReady, pdWait, a G*, or 0
  std::atomic<std::uintptr_t> wg{0};
  std::uint64_t gen = 0;  // the Run that opened it
  mutex lock;
  bool closing ABSL_GUARDED_BY(lock) = false;
  bool everr ABSL_GUARDED_BY(lock) = false;
  std::uintptr_t rseq ABSL_GUARDED_BY(lock) = 0;      // stale read-timer guard
  std::uintptr_t wseq ABSL_GUARDED_BY(lock) = 0;      // stale write-timer guard
  deadlineTimer* rt ABSL_GUARDED_BY(lock) = nullptr;  // read deadline timer
  deadlineTimer* wt ABSL_GUARDED_BY(lock) = nullptr;
  std::int64_t rd ABSL_GUARDED_BY(lock) = 0;  // read deadline (<0 expired)
  std::int64_t wd ABSL_GUARDED_BY(lock) = 0;
};

// Bits of pollDesc.info (Go's pollClosing (netpoll.go:118), pollEventErr,
// pollExpiredRead...).
inline constexpr std::uint32_t pollClosing = 1;
inline constexpr std::uint32_t pollEventErr = 2;
inline constexpr std::uint32_t pollExpiredRead = 4;
inline constexpr std::uint32_t pollExpiredWrite = 8;

// --- used by poll::FD (Go's internal/poll runtime hooks) ---
// pollOpen mirrors Go's poll_runtime_pollOpen (netpoll.go:216); *errno_ set on
// failure.
pollDesc* pollOpen(std::uintptr_t fd, int* errno_);
// pollClose mirrors Go's poll_runtime_pollClose (netpoll.go:249) (after
// pollUnblock).
void pollClose(pollDesc* pd);
// pollRelease frees pd without the poller, after its Run ended.
void pollRelease(pollDesc* pd);
// pollReset mirrors Go's poll_runtime_pollReset (netpoll.go:277): before a
// read/write.
int pollReset(pollDesc* pd, std::int32_t mode);
// pollWait mirrors Go's poll_runtime_pollWait (netpoll.go:296): park until
// ready.
int pollWait(pollDesc* pd, std::int32_t mode);
// pollWaitRead: pollWait for reading; *clean (gort's own) tells whether the
// news it took came from events that reported data or an end of stream only,
// no hang-up or error (a read that then finds the socket drained may skip
// the next read's first try).
int pollWaitRead(pollDesc* pd, bool* clean);
// pollWaitCanceled mirrors Go's poll_runtime_pollWaitCanceled (netpoll.go:318)
// (Windows): after a deadline or Close interrupted pollWait with an operation
// in flight, park until the operation's (canceled) completion arrives.
void pollWaitCanceled(pollDesc* pd, std::int32_t mode);
// pollKey: the key the OS layer reports pd's events with (completion-model
// operations carry it).
std::uint64_t pollKey(pollDesc* pd);
// pollSetDeadline mirrors Go's poll_runtime_pollSetDeadline (netpoll.go:326); d
// is an absolute nanotime, 0 none, < 0 already passed.
void pollSetDeadline(pollDesc* pd, std::int64_t d, std::int32_t mode);
// pollUnblock mirrors Go's poll_runtime_pollUnblock (netpoll.go:408): Close's
// eviction; also from a thread with no P (the next netpoll readies them).
void pollUnblock(pollDesc* pd);
// pollStale: pd belongs to a Run that has ended.
bool pollStale(pollDesc* pd);

// --- internals, exported for netpoll_test ---
// (*clean, if given: the news taken was pdReady, not pdReadyUnclean)
bool netpollblock(pollDesc* pd, std::int32_t mode, bool waitio,
                  bool* clean = nullptr);
// (lock-free: netpoll calls it without pd->lock, deadlines and Close with)
// (*delta counts the goroutine taken; see netpollAdjustWaiters; unclean: the
// read event reported a hang-up or an error)
G* netpollunblock(pollDesc* pd, std::int32_t mode, bool ioready,
                  std::int32_t* delta, bool unclean = false);
// (unclean: as netpollunblock's, for the read side)
std::int32_t netpollready(G** toRun, pollDesc* pd, std::int32_t mode,
                          bool unclean = false);
void netpollgoready(G* gp);
// netpollAdjustWaiters mirrors Go 1.21's netpollAdjustWaiters: the waiters a
// netpoll or netpollunblock took, subtracted once they are runnable.
void netpollAdjustWaiters(std::int32_t delta);
std::int32_t netpollWaitersCount();
// pollcacheSize: pollDescs ever allocated (cache reuse shows as no growth).
std::int32_t pollcacheSize();
// pollcacheFree: pollDescs in the cache now.
std::int32_t pollcacheFree();
// deadlineTimersAllocated: deadline timers ever allocated.
std::int32_t deadlineTimersAllocated();
// netpollSleepUntil: when the M blocking in netpoll wakes by itself (its
// pollUntil; 0: no timer), or -1 if no M blocks there.
std::int64_t netpollSleepUntil();

// --- scheduler hooks ---
bool netpollinited();
// netpoll mirrors Go's netpoll (netpoll_epoll.go:106): polls (delay ns, < 0
// forever, 0 not at all) and returns the readied goroutines linked by
// schedlink, status _Gwaiting, with *delta for netpollAdjustWaiters once they
// are injected.
G* netpoll(std::int64_t delay, std::int32_t* delta);
// netpollBreak mirrors Go's netpollBreak (netpoll_epoll.go:81).
void netpollBreak();
// injectglist mirrors Go's injectglist (proc.go:3121): make a netpoll list
// runnable.
void injectglist(G* list);
// netpollAnyWaiters: Go's netpollWaiters (netpoll.go:183) > 0 test in
// findRunnable, as a function (as later Go releases have it).
bool netpollAnyWaiters();
// findRunnableNetpoll: findRunnable's non-blocking poll before stealing;
// a goroutine to run, or nullptr (Go does this inline).
G* findRunnableNetpoll();
// What findRunnableBlock did.
enum : int {
  kBlockNoPoller,  // no poller this Run: use the timer sleeper
  kBlockPolled,    // polled and holds *pp (with *gp to run, maybe)
  kBlockStop,      // another M polls, or no P was free: stopm
};
// findRunnableBlock: a P-less, non-spinning M with nothing to do blocks in
// netpoll until pollUntil (0: no timer) if no other M does (Go does this
// inline in findRunnable).
int findRunnableBlock(std::int64_t pollUntil, P** pp, G** gp);
// wakeNetPoller mirrors Go's wakeNetPoller (proc.go:3078); false if no poller
// runs, so the caller wakes its timer sleeper instead.
bool wakeNetPoller(std::int64_t when);
// sysmonNetpoll: sysmon's poll when nobody has polled for 10 ms.
void sysmonNetpoll(std::int64_t now);
// netpollExitBreak: the end of a Run wakes the blocked poller.
void netpollExitBreak();
// netpollRunEnd: after the Run's threads are gone: close the poller.
void netpollRunEnd();

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_NETPOLL_H_
