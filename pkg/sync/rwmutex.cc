// pkg/sync/rwmutex.cc: RWMutex (Go's sync/rwmutex.go) on runtime semaphores.
//
// The design is Go's: reader_count_ counts readers, and a writer announces
// itself by subtracting kMaxReaders, so that every later RLock sees a
// negative count and parks on reader_sem_ (writer preference). The writer
// then waits on writer_sem_ for the readers that were already inside, whose
// number it adds to reader_wait_; the last of them to leave wakes it.
// Writers exclude each other with an ordinary Mutex.
#include "gort/runtime.h"
#include "gort/sync.h"
#include "panic.h"
#include "sema.h"

namespace gort {

namespace {
// Go's rwmutexMaxReaders (sync/rwmutex.go:44).
constexpr std::int32_t kMaxReaders = 1 << 30;
}  // namespace

using runtime::semacquire;
using runtime::semrelease;

// RLock mirrors Go's RWMutex.RLock (sync/rwmutex.go:64).
void RWMutex::RLock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  if (reader_count_.fetch_add(1, std::memory_order_acq_rel) + 1 < 0) {
    // A writer holds or waits for the lock: wait for it.
    semacquire(&reader_sem_, runtime::waitReason::syncRWMutexRLock);
  }
}

// TryRLock mirrors Go's RWMutex.TryRLock (sync/rwmutex.go:84).
bool RWMutex::TryRLock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t c = reader_count_.load(std::memory_order_relaxed);
  while (c >= 0) {
    if (reader_count_.compare_exchange_weak(c, c + 1,
                                            std::memory_order_acquire)) {
      return true;
    }
  }
  return false;
}

// RUnlock mirrors Go's RWMutex.RUnlock (sync/rwmutex.go:111).
void RWMutex::RUnlock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t r = reader_count_.fetch_sub(1, std::memory_order_acq_rel) - 1;
  if (r < 0) RUnlockSlow(r);
}

// RUnlockSlow mirrors Go's rUnlockSlow (sync/rwmutex.go:126): a writer waits;
// the last reader it waits for wakes it.
void RWMutex::RUnlockSlow(std::int32_t r) {
  if (r + 1 == 0 || r + 1 == -kMaxReaders) {
    runtime::throw_("sync: RUnlock of unlocked RWMutex");
  }
  if (reader_wait_.fetch_sub(1, std::memory_order_acq_rel) - 1 == 0) {
    semrelease(&writer_sem_);
  }
}

// Lock mirrors Go's RWMutex.Lock (sync/rwmutex.go:141).
void RWMutex::Lock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  w_.Lock();
  // Announce the writer; r readers were already inside.
  std::int32_t r =
      reader_count_.fetch_sub(kMaxReaders, std::memory_order_acq_rel);
  if (r != 0 && reader_wait_.fetch_add(r, std::memory_order_acq_rel) + r != 0) {
    semacquire(&writer_sem_, runtime::waitReason::syncRWMutexLock);
  }
}

// TryLock mirrors Go's RWMutex.TryLock (sync/rwmutex.go:166).
bool RWMutex::TryLock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  if (!w_.TryLock()) return false;
  std::int32_t zero = 0;
  if (!reader_count_.compare_exchange_strong(zero, -kMaxReaders,
                                             std::memory_order_acquire)) {
    w_.Unlock();
    return false;
  }
  return true;
}

// Unlock mirrors Go's RWMutex.Unlock (sync/rwmutex.go:198): let in the readers
// that queued up behind the writer, then other writers.
void RWMutex::Unlock() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t r =
      reader_count_.fetch_add(kMaxReaders, std::memory_order_acq_rel) +
      kMaxReaders;
  if (r >= kMaxReaders) runtime::throw_("sync: Unlock of unlocked RWMutex");
  for (std::int32_t i = 0; i < r; i++) semrelease(&reader_sem_);
  w_.Unlock();
}

}  // namespace gort
