// runtime/lock.h: the runtime's own mutex and one-shot notes (Go's
// runtime2.go mutex/note and lock_futex.go). These block the thread, not
// the goroutine: they are for the scheduler's short critical sections and
// for parking Ms. Goroutine-level blocking is sema.cc and chan.cc.
#ifndef GORT_RUNTIME_LOCK_H_
#define GORT_RUNTIME_LOCK_H_

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"

namespace gort::runtime {

// mutex: Go's runtime mutex: 0 unlocked, 1 locked, 2 locked with sleepers;
// where the OS can fence other threads (fenceLight) 0 or 1, the sleepers
// counted in waiters instead (lock_futex.cc).
class ABSL_LOCKABLE mutex {
 public:
  std::atomic<std::uint32_t> key{0};
  std::atomic<std::uint32_t> waiters{0};  // threads that may sleep (fenceLight)
};

// fenceLight: whether the hot side of the runtime's three lopsided
// handshakes is a plain store and a load, the rare side paying
// os::processFence instead: a mutex's unlock against a thread about to sleep
// on it, execute against a goroutine dump (traceback.h), and a trace
// record's busy flag against StopTrace (trace.cc). Fixed before main.
extern const bool fenceLight;

// lock acquires l, spinning briefly, then sleeping on a futex (Go's lock2
// (lock_futex.go:51)).
void lock(mutex* l) ABSL_EXCLUSIVE_LOCK_FUNCTION(l);
// unlock releases l and wakes one sleeper if any (Go's unlock2
// (lock_futex.go:115)).
void unlock(mutex* l) ABSL_UNLOCK_FUNCTION(l);

// note: a one-shot wakeup event for one sleeper (Go's note (runtime2.go:190)).
struct note {
  std::atomic<std::uint32_t> key{0};
};

// noteclear resets n before reuse (Go's noteclear (lock_futex.go:135)).
void noteclear(note* n);
// notewakeup wakes the sleeper, or the next one to sleep (Go's notewakeup
// (lock_futex.go:139)).
void notewakeup(note* n);
// notesleep blocks the thread until notewakeup (Go's notesleep
// (lock_futex.go:148)).
void notesleep(note* n);
// notetsleep is notesleep for at most ns; reports whether it was woken (Go's
// notetsleep).
bool notetsleep(note* n, std::int64_t ns);

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_LOCK_H_
