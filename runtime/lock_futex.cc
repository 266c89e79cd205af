// runtime/lock_futex.cc: runtime mutexes and notes on futexes (Go's
// lock_futex.go).
//
// A mutex's key is 0 (unlocked), 1 (locked) or 2 (locked, and a thread may
// sleep on the futex). lock swaps in 1 and, if it was taken, spins with pause
// instructions, then with thread yields, then marks the key 2 and sleeps;
// unlock swaps in 0 and wakes a sleeper only if the key was 2.
//
// Where the OS can fence every thread of the process (os::processFence:
// Linux's membarrier), gort's own variant: unlock is a plain store of 0 and a
// load of the mutex's waiters count, no locked instruction, so a channel
// operation takes one (the lock's exchange) where Go takes two. The two
// halves of that unlock can be reordered by the processor (a store, then a
// load of another word), so a thread about to sleep counts itself in
// waiters and then fences every running thread before it looks at the key
// again: an unlock whose store it does not see after the fence will see the
// count and wake it. The key stays 0 or 1. The fence, a system call with
// inter-processor interrupts, is paid once per contended lock that gives up
// spinning, which is rare: the spinning phases are Go's.
//
// A note's key is 0 until notewakeup stores 1; notesleep waits for that.
#include "lock.h"
#include "os/os.h"
#include "panic.h"
#include "race.h"

namespace gort::runtime {

namespace {
bool initFenceLight() {
#if defined(GORT_TSAN)
  return false;  // ThreadSanitizer cannot see the order the fence gives
#else
  return os::processFenceInit();
#endif
}
}  // namespace

// Before main, while there is one thread: no mutex can have a sleeper when
// it changes (an unlock still handles a key of 2 left from before).
const bool fenceLight = initFenceLight();

namespace {
constexpr std::uint32_t kUnlocked = 0;
constexpr std::uint32_t kLocked = 1;
constexpr std::uint32_t kSleeping = 2;
constexpr int kActiveSpin = 4;
constexpr int kActiveSpinCount = 30;
constexpr int kPassiveSpin = 1;

std::uint32_t* futexAddr(std::atomic<std::uint32_t>* a) {
  return reinterpret_cast<std::uint32_t*>(a);
}
// grabUnlocked: the inner loop of Go's lock2 (lock_futex.go:51) spins: while l
// is unlocked, try to take it, storing wait; true once taken.
bool grabUnlocked(mutex* l, std::uint32_t wait) {
  for (std::uint32_t cur = l->key.load(std::memory_order_relaxed);
       cur == kUnlocked; cur = l->key.load(std::memory_order_relaxed)) {
    if (l->key.compare_exchange_weak(cur, wait, std::memory_order_acquire)) {
      return true;
    }
  }
  return false;
}

// spinFor: the spinning of Go's lock2 (lock_futex.go:51) before it sleeps:
// pause instructions, then thread yields; true once l is taken (storing
// wait).
bool spinFor(mutex* l, std::uint32_t wait) {
  for (int i = 0; i < kActiveSpin; i++) {
    if (grabUnlocked(l, wait)) return true;
    os::procyield(kActiveSpinCount);
  }
  for (int i = 0; i < kPassiveSpin; i++) {
    if (grabUnlocked(l, wait)) return true;
    os::osyield();
  }
  return false;
}

// lockSlowLight: lock's contended path under fenceLight (gort's own): Go's
// spinning, then count this thread in waiters, fence every running thread so
// an unlock either shows its store to the key now or sees the count later,
// and sleep while the key is 1.
void lockSlowLight(mutex* l) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (spinFor(l, kLocked)) return;
  l->waiters.fetch_add(1, std::memory_order_seq_cst);
  os::processFence(os::FenceFor::kLock);
  while (l->key.exchange(kLocked, std::memory_order_acquire) != kUnlocked) {
    os::futexsleep(futexAddr(&l->key), kLocked, -1);
  }
  l->waiters.fetch_sub(1, std::memory_order_relaxed);
}
}  // namespace

// lock mirrors Go's lock2 (lock_futex.go:51).
void lock(mutex* l) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::uint32_t v = l->key.exchange(kLocked, std::memory_order_acquire);
  if (v == kUnlocked) return;
  if (fenceLight && v == kLocked) {
    lockSlowLight(l);
    return;
  }
  // wait is what we store once we get it: if someone slept, keep 2 so the
  // eventual unlock wakes them.
  std::uint32_t wait = v;
  for (;;) {
    if (spinFor(l, wait)) return;
    v = l->key.exchange(kSleeping, std::memory_order_acquire);
    if (v == kUnlocked) return;
    wait = kSleeping;
    os::futexsleep(futexAddr(&l->key), kSleeping, -1);
  }
}

// unlock mirrors Go's unlock2 (lock_futex.go:115); under fenceLight a store
// and a load (lockSlowLight's fence orders them for a sleeper).
void unlock(mutex* l) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (fenceLight && l->key.load(std::memory_order_relaxed) == kLocked) {
    l->key.store(kUnlocked, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // keep the order
    if (l->waiters.load(std::memory_order_relaxed) != 0) {
      os::futexwakeup(futexAddr(&l->key), 1);
    }
    return;
  }
  std::uint32_t v = l->key.exchange(kUnlocked, std::memory_order_release);
  if (v == kUnlocked) throw_("unlock of unlocked lock");
  if (v == kSleeping) os::futexwakeup(futexAddr(&l->key), 1);
}

void noteclear(note* n) { n->key.store(0, std::memory_order_relaxed); }

void notewakeup(note* n) {
  std::uint32_t old = n->key.exchange(1, std::memory_order_release);
  if (old != 0) throw_("notewakeup - double wakeup");
  os::futexwakeup(futexAddr(&n->key), 1);
}

void notesleep(note* n) {
  while (n->key.load(std::memory_order_acquire) == 0) {
    os::futexsleep(futexAddr(&n->key), 0, -1);
  }
}

bool notetsleep(note* n, std::int64_t ns) {
  if (ns < 0) {
    notesleep(n);
    return true;
  }
  if (n->key.load(std::memory_order_acquire) != 0) return true;
  std::int64_t deadline = os::nanotime() + ns;
  for (;;) {
    os::futexsleep(futexAddr(&n->key), 0, ns);
    if (n->key.load(std::memory_order_acquire) != 0) return true;
    std::int64_t now = os::nanotime();
    if (now >= deadline) return false;
    ns = deadline - now;
  }
}

}  // namespace gort::runtime
