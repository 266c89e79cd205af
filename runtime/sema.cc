// runtime/sema.cc: runtime semaphores (Go's sema.go), the parking primitive
// under WaitGroup, Mutex and the world-stopping semaphore.
//
// A semaphore is a uint32 counter anywhere in memory. Waiters hash by
// address into one of 251 roots; each root has a lock, a count of waiters
// (checked without the lock, so a release with no waiters costs one atomic
// add) and its waiters. Go keeps a treap of addresses per root with a FIFO
// per address; gort keeps one FIFO list per root and skips other addresses
// when dequeuing, which is simpler and fine for the few addresses a root
// sees at once.
//
// A Cond's notify list (Go's notifyList (sema.go:451), also in sema.go) keeps
// its tickets in the Cond and its parked waiters in the semaphore root of its
// address, under that root's lock: a waiter's sudog names the list in elem and
// its ticket in ticket. A list and a semaphore never share an address, so the
// two kinds of waiter cannot be mistaken for each other.
#include "sema.h"

#include <atomic>

#include "gort/runtime.h"
#include "mprof.h"
#include "panic.h"
#include "park.h"
#include "proc.h"

namespace gort::runtime {

namespace {

constexpr int kSemTabSize = 251;

struct semaRoot {
  mutex lock;
  sudog* head ABSL_GUARDED_BY(lock) = nullptr;
  sudog* tail ABSL_GUARDED_BY(lock) = nullptr;
  std::atomic<std::uint32_t> nwait{0};
};

semaRoot semtable[kSemTabSize];

semaRoot* semroot(std::uint32_t* addr) {
  return &semtable[(reinterpret_cast<std::uintptr_t>(addr) >> 3) % kSemTabSize];
}

// cansemacquire mirrors Go's cansemacquire (sema.go:223).
bool cansemacquire(std::uint32_t* addr) {
  std::atomic_ref<std::uint32_t> a(*addr);
  std::uint32_t v = a.load(std::memory_order_acquire);
  while (v != 0) {
    if (a.compare_exchange_weak(v, v - 1, std::memory_order_acquire)) {
      return true;
    }
  }
  return false;
}

// queue mirrors semaRoot.queue: at the tail, or with lifo at the head, so
// that dequeue, which takes the first waiter on addr, finds s before the
// others on addr.
void queue(semaRoot* root, std::uint32_t* addr, sudog* s, bool lifo = false)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(root->lock) {
  s->g = getg();
  s->elem = addr;
  if (lifo) {
    s->prev = nullptr;
    s->next = root->head;
    if (root->head != nullptr) {
      root->head->prev = s;
    } else {
      root->tail = s;
    }
    root->head = s;
    return;
  }
  s->next = nullptr;
  s->prev = root->tail;
  if (root->tail != nullptr) {
    root->tail->next = s;
  } else {
    root->head = s;
  }
  root->tail = s;
}

// unlinkWaiter takes s out of root's list.
void unlinkWaiter(semaRoot* root, sudog* s)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(root->lock) {
  if (s->prev != nullptr) {
    s->prev->next = s->next;
  } else {
    root->head = s->next;
  }
  if (s->next != nullptr) {
    s->next->prev = s->prev;
  } else {
    root->tail = s->prev;
  }
  s->next = s->prev = nullptr;
}

// dequeue mirrors semaRoot.dequeue: the first waiter on addr.
sudog* dequeue(semaRoot* root, std::uint32_t* addr)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(root->lock) {
  for (sudog* s = root->head; s != nullptr; s = s->next) {
    if (s->elem != addr) continue;
    unlinkWaiter(root, s);
    return s;
  }
  return nullptr;
}

}  // namespace

// semacquire mirrors Go's semacquire (sema.go:100): FIFO among waiters.
void semacquire(std::uint32_t* addr, waitReason reason) {
  semacquire1(addr, false, reason);
}

// semacquire1 mirrors Go's semacquire1 (sema.go:104); the block profile is
// gopark's, the mutex profile's stamp is here (Go's semaMutexProfile
// (sema.go:96)). s->ticket becomes 1 when a handoff release gave the count
// straight to this waiter.
void semacquire1(std::uint32_t* addr, bool lifo, waitReason reason) {
  if (cansemacquire(addr)) return;
  if (getcurg() == nullptr) {
    throw gort::Panic("gort: blocking call outside a goroutine");
  }
  sudog* s = acquireSudog();
  G* gp = getg();
  gp->waiting = s;  // Run's end frees it if gp never runs again
  s->acquiretime = 0;
  if (mutexprofilerate.load(std::memory_order_relaxed) > 0 &&
      mutexProfileWanted(reason)) {
    s->acquiretime = os::nanotime();
  }
  semaRoot* root = semroot(addr);
  for (;;) {
    lock(&root->lock);
    root->nwait.fetch_add(1);
    if (cansemacquire(addr)) {
      root->nwait.fetch_sub(1);
      unlock(&root->lock);
      break;
    }
    s->ticket = 0;
    queue(root, addr, s, lifo);
    goparkunlock(&root->lock, reason);
    if (s->ticket != 0 || cansemacquire(addr)) break;
  }
  gp->waiting = nullptr;
  releaseSudog(s);
}

// semrelease mirrors Go's semrelease (sema.go:161): no handoff.
void semrelease(std::uint32_t* addr) { semrelease1(addr, false); }

// semrelease1 mirrors Go's semrelease1 (sema.go:165), the mutex profile's event
// included. With handoff, the count just added is taken back for the waiter,
// which finds ticket 1 and does not compete for it, and the caller yields so
// that the waiter, in runnext, runs at once on this P with the rest of the time
// slice.
void semrelease1(std::uint32_t* addr, bool handoff) {
  semaRoot* root = semroot(addr);
  std::atomic_ref<std::uint32_t>(*addr).fetch_add(1, std::memory_order_release);
  if (root->nwait.load() == 0) return;
  lock(&root->lock);
  if (root->nwait.load() == 0) {
    unlock(&root->lock);
    return;
  }
  sudog* s = dequeue(root, addr);
  if (s != nullptr) root->nwait.fetch_sub(1);
  unlock(&root->lock);
  if (s == nullptr) return;
  // Go's semaRoot.dequeue (sema.go:323): a profiled waiter's wait, on this
  // releaser's stack.
  if (s->acquiretime != 0) mutexevent(os::nanotime() - s->acquiretime);
  // Once readied, the waiter may run and free s elsewhere: decide first.
  bool handedOff = handoff && cansemacquire(addr);
  if (handedOff) s->ticket = 1;
  goready(s->g);
  // Go also requires m.locks == 0; gort's callers hold no runtime lock.
  if (handedOff && getcurg() != nullptr) goyield();
}

}  // namespace gort::runtime

namespace gort::runtime {

// clearSemaphores forgets every waiter when Run ends (their goroutines are
// being abandoned; abandonWaiters frees their sudogs, on their G's waiting
// list like those of goroutines woken but never run).
void clearSemaphores() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (semaRoot& root : semtable) {
    root.head = root.tail = nullptr;
    root.nwait.store(0);
  }
}

}  // namespace gort::runtime

namespace gort::runtime {

namespace {

// lessTicket mirrors Go's less (sema.go:473): a < b for tickets that wrap
// around.
bool lessTicket(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(a - b) < 0;
}

}  // namespace

std::uint32_t notifyListAdd(internal::notifyList* l) {
  return l->wait.fetch_add(1, std::memory_order_acq_rel);
}

void notifyListWait(internal::notifyList* l, std::uint32_t t) {
  if (getcurg() == nullptr) {
    throw gort::Panic("gort: blocking call outside a goroutine");
  }
  void* addr = l;
  semaRoot* root = semroot(reinterpret_cast<std::uint32_t*>(addr));
  lock(&root->lock);
  if (lessTicket(t, l->notify.load(std::memory_order_relaxed))) {
    unlock(&root->lock);  // already notified
    return;
  }
  sudog* s = acquireSudog();
  s->ticket = t;
  queue(root, reinterpret_cast<std::uint32_t*>(addr), s);
  G* gp = getg();
  gp->waiting = s;  // freed by Run's end if gp never runs again
  goparkunlock(&root->lock, waitReason::syncCondWait);
  gp->waiting = nullptr;
  releaseSudog(s);
}

void notifyListNotifyAll(internal::notifyList* l) {
  if (l->wait.load(std::memory_order_acquire) ==
      l->notify.load(std::memory_order_acquire)) {
    return;  // nobody waits since the last notification
  }
  void* addr = l;
  semaRoot* root = semroot(reinterpret_cast<std::uint32_t*>(addr));
  sudog* woken = nullptr;
  lock(&root->lock);
  l->notify.store(l->wait.load(std::memory_order_acquire),
                  std::memory_order_release);
  for (sudog* s = root->head; s != nullptr;) {
    sudog* next = s->next;
    if (s->elem == addr) {
      unlinkWaiter(root, s);
      s->next = woken;
      woken = s;
    }
    s = next;
  }
  unlock(&root->lock);
  while (woken != nullptr) {
    sudog* next = woken->next;  // woken may be released once readied
    goready(woken->g);
    woken = next;
  }
}

void notifyListNotifyOne(internal::notifyList* l) {
  if (l->wait.load(std::memory_order_acquire) ==
      l->notify.load(std::memory_order_acquire)) {
    return;
  }
  void* addr = l;
  semaRoot* root = semroot(reinterpret_cast<std::uint32_t*>(addr));
  lock(&root->lock);
  std::uint32_t t = l->notify.load(std::memory_order_relaxed);
  if (t == l->wait.load(std::memory_order_acquire)) {
    unlock(&root->lock);
    return;
  }
  l->notify.store(t + 1, std::memory_order_release);
  // The holder of ticket t may not have parked yet; then notifyListWait
  // sees the ticket notified and returns at once.
  for (sudog* s = root->head; s != nullptr; s = s->next) {
    if (s->elem == addr && s->ticket == t) {
      unlinkWaiter(root, s);
      unlock(&root->lock);
      goready(s->g);
      return;
    }
  }
  unlock(&root->lock);
}

}  // namespace gort::runtime
