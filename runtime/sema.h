// runtime/sema.h: runtime semaphores that park goroutines (Go's sema.go).
#ifndef GORT_RUNTIME_SEMA_H_
#define GORT_RUNTIME_SEMA_H_

#include <atomic>
#include <cstdint>

#include "gort/sync.h"
#include "runtime2.h"

namespace gort::runtime {

// semacquire waits until *addr > 0 and decrements it, parking the
// goroutine meanwhile (Go's semacquire).
void semacquire(std::uint32_t* addr,
                waitReason reason = waitReason::semacquire);
// semacquire1 is semacquire where lifo queues the goroutine ahead of the
// other waiters on addr, as a waiter that waited before does (Go's
// semacquire1).
void semacquire1(std::uint32_t* addr, bool lifo, waitReason reason);
// semrelease increments *addr and readies one goroutine waiting on it (Go's
// semrelease).
void semrelease(std::uint32_t* addr);
// semrelease1 is semrelease where handoff gives the count straight to the
// first waiter and yields the P to it (Go's semrelease1).
void semrelease1(std::uint32_t* addr, bool handoff);

// Go's mutexLocked, mutexWoken, mutexStarving and mutexWaiterShift: a
// Mutex's state word (pkg/sync/sync.cc) is three flags and a waiter count.
inline constexpr std::int32_t kMutexLocked = 1;    // held
inline constexpr std::int32_t kMutexWoken = 2;     // a waiter is awake
inline constexpr std::int32_t kMutexStarving = 4;  // starvation mode
inline constexpr int kMutexWaiterShift = 3;
inline constexpr std::int32_t kMutexWaiter = 1 << kMutexWaiterShift;

// How long a Mutex waiter waits before it switches the Mutex to starvation
// mode (Go's starvationThresholdNs, a constant there; tests change it).
extern std::atomic<std::int64_t> starvationThresholdNs;

// mutexExport reads a Mutex's state word, for tests (as Go's sync package
// tests read m.state).
struct mutexExport {
  // The state word of m.
  static std::int32_t state(const Mutex& m) {
    return m.state_.load(std::memory_order_acquire);
  }
};

// notifyListAdd takes the next ticket of l (Go's notifyListAdd); the caller
// then unlocks its Mutex and calls notifyListWait with the ticket.
std::uint32_t notifyListAdd(internal::notifyList* l);
// notifyListWait parks until ticket t of l is notified (Go's notifyListWait).
void notifyListWait(internal::notifyList* l, std::uint32_t t);
// notifyListNotifyAll wakes every waiter of l (Go's notifyListNotifyAll).
void notifyListNotifyAll(internal::notifyList* l);
// notifyListNotifyOne wakes the waiter holding the oldest unnotified ticket
// (Go's notifyListNotifyOne).
void notifyListNotifyOne(internal::notifyList* l);

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_SEMA_H_
