// runtime/sema.h: runtime semaphores that park goroutines (Go's sema.go).
#ifndef GORT_RUNTIME_SEMA_H_
#define GORT_RUNTIME_SEMA_H_

#include <cstdint>

#include "runtime2.h"

namespace gort::runtime {

// semacquire waits until *addr > 0 and decrements it, parking the
// goroutine meanwhile (Go's semacquire1).
void semacquire(std::uint32_t* addr,
                waitReason reason = waitReason::semacquire);
// semrelease increments *addr and readies one goroutine waiting on it (Go's
// semrelease1).
void semrelease(std::uint32_t* addr);

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_SEMA_H_
