// pkg/sync/sync.cc: WaitGroup and Mutex (Go's sync/waitgroup.go and
// sync/mutex.go) on runtime semaphores.
//
// Mutex keeps Go's state (sync/mutex.go:35) word (a locked bit and a waiter
// count) but not its starvation mode: a woken waiter competes with newcomers
// again. Unlock wakes one waiter only when the lock is free and someone waits,
// so every unlock that leaves waiters behind wakes one of them.
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
constexpr std::int32_t kMutexLocked = 1;
constexpr std::int32_t kMutexWaiter = 2;  // one waiter, counted from bit 1
}  // namespace

bool Mutex::TryLock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t old = state_.load(std::memory_order_relaxed);
  if (old & kMutexLocked) return false;
  return state_.compare_exchange_strong(old, old | kMutexLocked,
                                        std::memory_order_acquire);
}

void Mutex::Lock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t unlocked = 0;
  if (state_.compare_exchange_strong(unlocked, kMutexLocked,
                                     std::memory_order_acquire)) {
    return;
  }
  LockSlow();
}

void Mutex::LockSlow() {
  int spins = 0;
  for (;;) {
    std::int32_t old = state_.load(std::memory_order_relaxed);
    if ((old & kMutexLocked) == 0) {
      if (state_.compare_exchange_weak(old, old | kMutexLocked,
                                       std::memory_order_acquire)) {
        return;
      }
      continue;
    }
    // Go's sync_runtime_canSpin (proc.go:6195): a few short spins when other Ps
    // run.
    if (spins < 4 && runtime::gomaxprocs.load() > 1) {
      spins++;
      os::procyield(30);
      continue;
    }
    if (state_.compare_exchange_weak(old, old + kMutexWaiter,
                                     std::memory_order_relaxed)) {
      semacquire(&sema_, runtime::waitReason::syncMutexLock);
      spins = 0;
    }
  }
}

void Mutex::Unlock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t n =
      state_.fetch_sub(kMutexLocked, std::memory_order_release) - kMutexLocked;
  if (((n + kMutexLocked) & kMutexLocked) == 0) {
    runtime::throw_("sync: unlock of unlocked mutex");
  }
  while (n >= kMutexWaiter && (n & kMutexLocked) == 0) {
    if (state_.compare_exchange_weak(n, n - kMutexWaiter,
                                     std::memory_order_relaxed)) {
      semrelease(&sema_);
      return;
    }
  }
}

}  // namespace gort
