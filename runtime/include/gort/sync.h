// gort/sync.h: WaitGroup, Mutex, RWMutex, Cond and Once for goroutines (Go's
// sync package), built on runtime semaphores: a goroutine that must wait
// parks; its thread runs other goroutines meanwhile.
#ifndef GORT_SYNC_H_
#define GORT_SYNC_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "gort/defer.h"
#include "gort/internal/thread_annotations.h"
#include "gort/runtime.h"

namespace gort {

namespace runtime {
struct mutexExport;
}  // namespace runtime

// Waits for a collection of goroutines to finish (sync.WaitGroup).
class WaitGroup {
 public:
  // Adds delta to the counter; a negative result panics.
  void Add(int delta);
  // Decrements the counter by one.
  void Done();
  // Parks the calling goroutine until the counter is zero.
  void Wait();
  // Adds one and runs fn in a new goroutine that calls Done when fn returns
  // or throws (Go 1.25's WaitGroup.Go).
  template <class F>
  [[gnu::noinline]] void Go(F&& fn) {
    Add(1);
    internal::NewProc(
        internal::Func(
            [this, f = std::decay_t<F>(std::forward<F>(fn))]() mutable {
              Defer done([this] { Done(); });
              f();
            }),
        __builtin_return_address(0));
  }

 private:
  std::atomic<std::uint64_t> state_{0};  // counter << 32 | waiters.
  std::uint32_t sema_ = 0;               // Runtime semaphore for waiters.
};

// A mutual exclusion lock for goroutines (sync.Mutex); any goroutine may
// unlock it. Meets the standard Lockable requirements (std::lock_guard,
// std::unique_lock, std::scoped_lock) and is a clang thread-safety
// capability.
class GORT_CAPABILITY("mutex") Mutex {
 public:
  // Locks, parking the goroutine while another holds the lock.
  void Lock() GORT_ACQUIRE();
  // Unlocks; unlocking an unlocked Mutex is a fatal error.
  void Unlock() GORT_RELEASE();
  // Locks if free and reports whether it did.
  [[nodiscard]] bool TryLock() GORT_TRY_ACQUIRE(true);

  // Lock, for std::lock_guard and std::unique_lock.
  void lock() GORT_ACQUIRE() { Lock(); }
  // Unlock, for std::lock_guard and std::unique_lock.
  void unlock() GORT_RELEASE() { Unlock(); }
  // TryLock, for std::unique_lock and std::try_lock.
  [[nodiscard]] bool try_lock() GORT_TRY_ACQUIRE(true) { return TryLock(); }

 private:
  friend struct runtime::mutexExport;  // tests read state_ (sema.h)
  void LockSlow();
  void UnlockSlow(std::int32_t n);
  std::atomic<std::int32_t> state_{0};  // 3 flag bits | waiters << 3.
  std::uint32_t sema_ = 0;              // Runtime semaphore for waiters.
};

// A reader/writer mutual exclusion lock for goroutines (sync.RWMutex): any
// number of readers or one writer. A goroutine blocked in Lock keeps new
// readers out, so writers are not starved. Meets the standard SharedMutex
// requirements (std::unique_lock, std::shared_lock) and is a clang
// thread-safety capability.
class GORT_CAPABILITY("mutex") RWMutex {
 public:
  // Locks for writing, parking while readers or a writer hold it.
  void Lock() GORT_ACQUIRE();
  // Unlocks for writing; unlocking an unlocked RWMutex is a fatal error.
  void Unlock() GORT_RELEASE();
  // Locks for reading; parks while a writer holds or waits for the lock.
  void RLock() GORT_ACQUIRE_SHARED();
  // Undoes one RLock; a fatal error if the RWMutex is not read-locked.
  void RUnlock() GORT_RELEASE_SHARED();
  // Locks for writing if free and reports whether it did.
  [[nodiscard]] bool TryLock() GORT_TRY_ACQUIRE(true);
  // Locks for reading unless a writer holds or waits; reports whether it did.
  [[nodiscard]] bool TryRLock() GORT_TRY_ACQUIRE_SHARED(true);

  // Lock, for std::unique_lock and std::lock_guard.
  void lock() GORT_ACQUIRE() { Lock(); }
  // Unlock, for std::unique_lock and std::lock_guard.
  void unlock() GORT_RELEASE() { Unlock(); }
  // TryLock, for std::unique_lock.
  [[nodiscard]] bool try_lock() GORT_TRY_ACQUIRE(true) { return TryLock(); }
  // RLock, for std::shared_lock.
  void lock_shared() GORT_ACQUIRE_SHARED() { RLock(); }
  // RUnlock, for std::shared_lock.
  void unlock_shared() GORT_RELEASE_SHARED() { RUnlock(); }
  // TryRLock, for std::shared_lock.
  [[nodiscard]] bool try_lock_shared() GORT_TRY_ACQUIRE_SHARED(true) {
    return TryRLock();
  }

 private:
  void RUnlockSlow(std::int32_t r);
  Mutex w_;                       // Held by a writer, waiting or not.
  std::uint32_t writer_sem_ = 0;  // A writer waits here for readers.
  std::uint32_t reader_sem_ = 0;  // Readers wait here for a writer.
  std::atomic<std::int32_t> reader_count_{0};  // Readers; negative: writer.
  std::atomic<std::int32_t> reader_wait_{0};   // Readers a writer waits for.
};

namespace internal {
// The waiters of a Cond (Go's notifyList (sema.go:451)): tickets handed out and
// tickets notified; the waiting goroutines themselves are kept by the runtime.
struct notifyList {
  std::atomic<std::uint32_t> wait{0};    // Next ticket to hand out.
  std::atomic<std::uint32_t> notify{0};  // Next ticket to notify.
};
}  // namespace internal

// A condition variable for goroutines (sync.Cond), tied to a Mutex that the
// caller holds around Wait and while changing the condition.
class Cond {
 public:
  // A Cond whose Wait unlocks and relocks *l.
  explicit Cond(Mutex* l) : l_(l) {}
  // Not copyable: waiters refer to its address.
  Cond(const Cond&) = delete;
  // Not assignable.
  Cond& operator=(const Cond&) = delete;
  // Unlocks L(), parks until Signal or Broadcast wakes this goroutine, and
  // locks L() again before returning.
  void Wait();
  // Wakes one goroutine waiting on this Cond, if any.
  void Signal();
  // Wakes every goroutine waiting on this Cond.
  void Broadcast();
  // The Mutex given to the constructor (Go's c.L (sync/cond.go:40)).
  Mutex* L() const { return l_; }

 private:
  Mutex* l_;
  internal::notifyList notify_;
};

// Runs a function exactly once (sync.Once).
class Once {
 public:
  // Calls f unless Do has been called before on this Once; a concurrent
  // caller waits until the first call of f has returned. If f throws, the
  // Once still counts as done and the exception reaches Do's caller.
  template <class F>
  void Do(F&& f) {
    if (done_.load(std::memory_order_acquire) != 0) return;
    DoSlow(&Call<F>, const_cast<void*>(static_cast<const volatile void*>(&f)));
  }

 private:
  template <class F>
  static void Call(void* f) {
    auto* fn = static_cast<std::remove_reference_t<F>*>(f);
    std::invoke(std::forward<F>(*fn));
  }
  void DoSlow(void (*call)(void*), void* f);
  std::atomic<std::uint32_t> done_{0};
  Mutex m_;
};

}  // namespace gort

#endif  // GORT_SYNC_H_
