// gort/sync.h: WaitGroup and Mutex for goroutines (Go's sync package), built
// on runtime semaphores: a goroutine that must wait parks; its thread runs
// other goroutines meanwhile.
#ifndef GORT_SYNC_H_
#define GORT_SYNC_H_

#include <atomic>
#include <cstdint>

namespace gort {

// Waits for a collection of goroutines to finish (sync.WaitGroup).
class WaitGroup {
 public:
  // Adds delta to the counter; a negative result panics.
  void Add(int delta);
  // Decrements the counter by one.
  void Done();
  // Parks the calling goroutine until the counter is zero.
  void Wait();

 private:
  std::atomic<std::uint64_t> state_{0};  // counter << 32 | waiters.
  std::uint32_t sema_ = 0;               // Runtime semaphore for waiters.
};

// A mutual exclusion lock for goroutines (sync.Mutex); any goroutine may
// unlock it.
class Mutex {
 public:
  // Locks, parking the goroutine while another holds the lock.
  void Lock();
  // Unlocks; unlocking an unlocked Mutex is a fatal error.
  void Unlock();
  // Locks if free and reports whether it did.
  bool TryLock();

 private:
  void LockSlow();
  std::atomic<std::int32_t> state_{0};  // locked bit | waiters << 1.
  std::uint32_t sema_ = 0;              // Runtime semaphore for waiters.
};

}  // namespace gort

#endif  // GORT_SYNC_H_
