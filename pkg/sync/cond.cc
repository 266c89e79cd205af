// pkg/sync/cond.cc: Cond (Go's sync/cond.go) and Once (sync/once.go).
//
// Cond is Go's: a waiter takes a ticket before it unlocks L, so a Signal
// that comes between the unlock and the park is not lost; the runtime's
// notify list (sema.cc) keeps the parked waiters. Go's copy checker has no
// counterpart: a Cond cannot be copied.
#include "gort/runtime.h"
#include "gort/sync.h"
#include "sema.h"

namespace gort {

// Wait mirrors Go's Cond.Wait (sync/cond.go:66).
void Cond::Wait() GORT_NO_THREAD_SAFETY_ANALYSIS {
  std::uint32_t t = runtime::notifyListAdd(&notify_);
  l_->Unlock();
  runtime::notifyListWait(&notify_, t);
  l_->Lock();
}

// Signal mirrors Go's Cond.Signal (sync/cond.go:81).
void Cond::Signal() { runtime::notifyListNotifyOne(&notify_); }

// Broadcast mirrors Go's Cond.Broadcast (sync/cond.go:90).
void Cond::Broadcast() { runtime::notifyListNotifyAll(&notify_); }

// DoSlow mirrors Go's Once.doSlow (sync/once.go:69): under the mutex, so that
// concurrent callers wait for f; done is set even when f throws, as Go's
// deferred store sets it when f panics.
void Once::DoSlow(void (*call)(void*), void* f) GORT_NO_THREAD_SAFETY_ANALYSIS {
  struct Unlocker {
    Once* o;
    bool ran = false;
    ~Unlocker() GORT_NO_THREAD_SAFETY_ANALYSIS {
      if (ran) o->done_.store(1, std::memory_order_release);
      o->m_.Unlock();
    }
  };
  m_.Lock();
  Unlocker u{this};
  if (done_.load(std::memory_order_relaxed) == 0) {
    u.ran = true;
    call(f);
  }
}

}  // namespace gort
