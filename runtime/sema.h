// runtime/sema.h: runtime semaphores that park goroutines (Go's sema.go).
#ifndef GORT_RUNTIME_SEMA_H_
#define GORT_RUNTIME_SEMA_H_

#include <cstdint>

#include "gort/sync.h"
#include "runtime2.h"

namespace gort::runtime {

// semacquire waits until *addr > 0 and decrements it, parking the
// goroutine meanwhile (Go's semacquire1 (sema.go:104)).
void semacquire(std::uint32_t* addr,
                waitReason reason = waitReason::semacquire);
// semrelease increments *addr and readies one goroutine waiting on it (Go's
// semrelease1).
void semrelease(std::uint32_t* addr);

// notifyListAdd takes the next ticket of l (Go's notifyListAdd (sema.go:482));
// the caller then unlocks its Mutex and calls notifyListWait with the ticket.
std::uint32_t notifyListAdd(internal::notifyList* l);
// notifyListWait parks until ticket t of l is notified (Go's notifyListWait
// (sema.go:492)).
void notifyListWait(internal::notifyList* l, std::uint32_t t);
// notifyListNotifyAll wakes every waiter of l (Go's notifyListNotifyAll
// (sema.go:527)).
void notifyListNotifyAll(internal::notifyList* l);
// notifyListNotifyOne wakes the waiter holding the oldest unnotified ticket
// (Go's notifyListNotifyOne (sema.go:560)).
void notifyListNotifyOne(internal::notifyList* l);

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_SEMA_H_
