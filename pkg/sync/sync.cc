// pkg/sync/sync.cc: WaitGroup and Mutex (Go's sync/waitgroup.go and
// sync/mutex.go) on runtime semaphores.
//
// Mutex is Go's, two modes included. In normal mode waiters queue FIFO but
// a woken waiter competes with newcomers, which usually win (they are
// running already); one that loses goes back to the head of the queue. A
// waiter that has waited more than starvationThresholdNs switches the
// mutex to starvation mode: Unlock then hands the lock to the first waiter
// directly (a semaphore handoff, and the unlocker yields its P to it), and
// newcomers neither take a free-looking lock nor spin but queue at the
// tail. The mode ends when a waiter that gets the lock is the last one or
// waited less than the threshold.
#include "gort/sync.h"

#include "gort/runtime.h"
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "sema.h"

namespace gort {

using runtime::semacquire;
using runtime::semrelease;

void WaitGroup::Add(int delta) {
  std::uint64_t d = static_cast<std::uint64_t>(static_cast<std::int64_t>(delta))
                    << 32;
  std::uint64_t state = state_.fetch_add(d, std::memory_order_acq_rel) + d;
  std::int32_t v = static_cast<std::int32_t>(state >> 32);
  std::uint32_t w = static_cast<std::uint32_t>(state);
  if (v < 0) throw Panic("sync: negative WaitGroup counter");
  if (w != 0 && delta > 0 && v == delta) {
    throw Panic("sync: WaitGroup misuse: Add called concurrently with Wait");
  }
  if (v > 0 || w == 0) return;
  // The counter reached zero with waiters: nobody may touch the state now
  // but us; reset it and release them all.
  if (state_.load(std::memory_order_acquire) != state) {
    throw Panic("sync: WaitGroup misuse: Add called concurrently with Wait");
  }
  state_.store(0, std::memory_order_release);
  for (; w != 0; w--) semrelease(&sema_);
}

void WaitGroup::Done() { Add(-1); }

void WaitGroup::Wait() {
  std::uint64_t state = state_.load(std::memory_order_acquire);
  for (;;) {
    if ((state >> 32) == 0) return;
    if (state_.compare_exchange_weak(state, state + 1,
                                     std::memory_order_acq_rel)) {
      semacquire(&sema_, runtime::waitReason::syncWaitGroupWait);
      if (state_.load(std::memory_order_acquire) != 0) {
        throw Panic(
            "sync: WaitGroup is reused before previous Wait has returned");
      }
      return;
    }
  }
}

namespace {
using runtime::kMutexLocked;
using runtime::kMutexStarving;
using runtime::kMutexWaiter;
using runtime::kMutexWaiterShift;
using runtime::kMutexWoken;

// canSpin mirrors Go's sync_runtime_canSpin, less its idle-P and run-queue
// checks: a few spins, and only when another P may release the lock.
bool canSpin(int iter) {
  return iter < 4 && runtime::gomaxprocs.load(std::memory_order_relaxed) > 1;
}
}  // namespace

namespace runtime {
std::atomic<std::int64_t> starvationThresholdNs{1'000'000};
}  // namespace runtime

// TryLock mirrors Go's Mutex.TryLock: never takes a lock that starvation
// mode owes to a waiter.
bool Mutex::TryLock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t old = state_.load(std::memory_order_relaxed);
  if (old & (kMutexLocked | kMutexStarving)) return false;
  return state_.compare_exchange_strong(old, old | kMutexLocked,
                                        std::memory_order_acquire);
}

// Lock mirrors Go's Mutex.Lock: one CAS when the mutex is free.
void Mutex::Lock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t unlocked = 0;
  if (state_.compare_exchange_strong(unlocked, kMutexLocked,
                                     std::memory_order_acquire)) {
    return;
  }
  LockSlow();
}

// LockSlow mirrors Go's Mutex.lockSlow.
void Mutex::LockSlow() {
  std::int64_t waitStartTime = 0;
  bool starving = false;
  bool awoke = false;  // woken from the semaphore, owning kMutexWoken
  int iter = 0;
  std::int32_t old = state_.load(std::memory_order_relaxed);
  for (;;) {
    // Spin while it is held in normal mode; claim the woken flag meanwhile
    // so that Unlock wakes nobody who would only compete with us.
    if ((old & (kMutexLocked | kMutexStarving)) == kMutexLocked &&
        canSpin(iter)) {
      if (!awoke && (old & kMutexWoken) == 0 &&
          (old >> kMutexWaiterShift) != 0 &&
          state_.compare_exchange_strong(old, old | kMutexWoken,
                                         std::memory_order_relaxed)) {
        awoke = true;
      }
      os::procyield(30);  // Go's sync_runtime_doSpin
      iter++;
      old = state_.load(std::memory_order_relaxed);
      continue;
    }
    std::int32_t next = old;
    // In starvation mode the lock belongs to the queue: do not take it.
    if ((old & kMutexStarving) == 0) next |= kMutexLocked;
    if (old & (kMutexLocked | kMutexStarving)) next += kMutexWaiter;
    // Switch to starvation mode only while it is held: Unlock expects
    // waiters in starvation mode.
    if (starving && (old & kMutexLocked)) next |= kMutexStarving;
    if (awoke) {
      if ((next & kMutexWoken) == 0) {
        runtime::throw_("sync: inconsistent mutex state");
      }
      next &= ~kMutexWoken;
    }
    if (!state_.compare_exchange_weak(old, next, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      continue;  // old reloaded
    }
    if ((old & (kMutexLocked | kMutexStarving)) == 0) return;  // took it
    // A waiter that waited before goes back to the head of the queue.
    bool queueLifo = waitStartTime != 0;
    if (waitStartTime == 0) waitStartTime = os::nanotime();
    runtime::semacquire1(&sema_, queueLifo, runtime::waitReason::syncMutexLock);
    starving = starving || os::nanotime() - waitStartTime >
                               runtime::starvationThresholdNs.load(
                                   std::memory_order_relaxed);
    old = state_.load(std::memory_order_relaxed);
    if (old & kMutexStarving) {
      // Handed off: the lock is ours, unlocked in the word but with our
      // waiter count still in it.
      if ((old & (kMutexLocked | kMutexWoken)) != 0 ||
          (old >> kMutexWaiterShift) == 0) {
        runtime::throw_("sync: inconsistent mutex state");
      }
      std::int32_t delta = kMutexLocked - kMutexWaiter;
      if (!starving || (old >> kMutexWaiterShift) == 1) {
        delta -= kMutexStarving;  // back to normal mode
      }
      state_.fetch_add(delta, std::memory_order_acquire);
      return;
    }
    awoke = true;
    iter = 0;
  }
}

// Unlock mirrors Go's Mutex.Unlock: one atomic add when nobody waits.
void Mutex::Unlock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t n =
      state_.fetch_sub(kMutexLocked, std::memory_order_release) - kMutexLocked;
  if (n != 0) UnlockSlow(n);
}

// UnlockSlow mirrors Go's Mutex.unlockSlow.
void Mutex::UnlockSlow(std::int32_t n) {
  if (((n + kMutexLocked) & kMutexLocked) == 0) {
    runtime::throw_("sync: unlock of unlocked mutex");
  }
  if (n & kMutexStarving) {
    // Hand the lock to the first waiter and let it run now. The locked bit
    // stays clear until it sets it, but the starving bit keeps newcomers
    // out meanwhile.
    runtime::semrelease1(&sema_, true);
    return;
  }
  // Wake a waiter unless there is none, or the lock was taken again, or a
  // waiter is awake already, or starvation mode began meanwhile.
  std::int32_t old = n;
  while ((old >> kMutexWaiterShift) != 0 &&
         (old & (kMutexLocked | kMutexWoken | kMutexStarving)) == 0) {
    if (state_.compare_exchange_weak(old, (old - kMutexWaiter) | kMutexWoken,
                                     std::memory_order_relaxed)) {
      runtime::semrelease1(&sema_, false);
      return;
    }
  }
}

}  // namespace gort
