// runtime/race.h: telling the sanitizers about goroutine stack switches
// (Go's race.go and race0.go play this part for Go's race detector).
//
// AddressSanitizer must learn each switch (start/finish_switch_fiber) or it
// takes a goroutine stack for a corrupted thread stack; it must also forget
// the redzones a dead goroutine left on a stack before the stack is reused.
// ThreadSanitizer needs one fiber per goroutine and a switch_to_fiber before
// every jump. Without sanitizers every function here is empty.
#ifndef GORT_RUNTIME_RACE_H_
#define GORT_RUNTIME_RACE_H_

#include <atomic>
#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GORT_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define GORT_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GORT_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define GORT_TSAN 1
#endif

#ifdef GORT_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef GORT_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#include "runtime2.h"

namespace gort::runtime {

#ifdef GORT_TSAN
// TSan counts each fiber as a thread (at most 8128 at once). A dead G keeps
// its fiber for reuse only while fewer than kRaceFiberKeep exist, so a burst
// of short goroutines does not exhaust TSan's table.
inline constexpr int kRaceFiberKeep = 1024;
inline std::atomic<int> raceFibers{0};
#endif

// racegostart: gp's stack is about to host a new goroutine.
inline void racegostart(G* gp, void* lo, std::size_t size) {
#ifdef GORT_ASAN
  __asan_unpoison_memory_region(lo, size);
#endif
#ifdef GORT_TSAN
  if (gp->raceFiber == nullptr) {
    gp->raceFiber = __tsan_create_fiber(0);
    raceFibers.fetch_add(1, std::memory_order_relaxed);
  }
#endif
}

// racegoexit: gp's goroutine is over; its stack (and TSan fiber, which is
// costly to make, while few exist) wait for reuse with the G.
inline void racegoexit(G* gp) {
#ifdef GORT_TSAN
  if (gp->raceFiber != nullptr &&
      raceFibers.load(std::memory_order_relaxed) > kRaceFiberKeep) {
    __tsan_destroy_fiber(gp->raceFiber);
    gp->raceFiber = nullptr;
    raceFibers.fetch_sub(1, std::memory_order_relaxed);
  }
#endif
#ifdef GORT_ASAN
  if (gp->stack.base != nullptr) {
    char* lo = static_cast<char*>(gp->stack.base) + gp->stack.guard;
    __asan_poison_memory_region(lo, gp->stack.size - gp->stack.guard);
  }
#endif
}

// racestackfree: a stack slab goes back to the OS; forget its poisoning so
// memory mapped there later is not reported.
inline void racestackfree(void* base, std::size_t size) {
#ifdef GORT_ASAN
  __asan_unpoison_memory_region(base, size);
#endif
}

// racefree: gp itself is being freed.
inline void racefree(G* gp) {
#ifdef GORT_TSAN
  if (gp->raceFiber != nullptr) {
    __tsan_destroy_fiber(gp->raceFiber);
    raceFibers.fetch_sub(1, std::memory_order_relaxed);
  }
  gp->raceFiber = nullptr;
#endif
}

// raceminit: the calling thread is mp's g0.
inline void raceminit(M* mp) {
#ifdef GORT_TSAN
  mp->g0->raceFiber = __tsan_get_current_fiber();
#endif
}

// racetogo: g0 of mp is about to jump into gp.
inline void racetogo(M* mp, G* gp) {
#ifdef GORT_ASAN
  char* lo = static_cast<char*>(gp->stack.base) + gp->stack.guard;
  __sanitizer_start_switch_fiber(&mp->g0->asanFakeStack, lo,
                                 gp->stack.size - gp->stack.guard);
#endif
#ifdef GORT_TSAN
  __tsan_switch_to_fiber(gp->raceFiber, 0);
#endif
}

// racebackong0: g0 of mp is running again after a goroutine switched out.
inline void racebackong0(M* mp) {
#ifdef GORT_ASAN
  __sanitizer_finish_switch_fiber(mp->g0->asanFakeStack, nullptr, nullptr);
#endif
}

// racetog0: gp is about to jump to mp's g0; exiting means gp never returns.
inline void racetog0(G* gp, M* mp, bool exiting) {
#ifdef GORT_ASAN
  __sanitizer_start_switch_fiber(exiting ? nullptr : &gp->asanFakeStack,
                                 mp->g0StackLo, mp->g0StackSize);
#endif
#ifdef GORT_TSAN
  __tsan_switch_to_fiber(mp->g0->raceFiber, 0);
#endif
}

// racebackongo: gp runs again (first == its first run) on mp.
inline void racebackongo(G* gp, M* mp, bool first) {
#ifdef GORT_ASAN
  const void* lo = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(first ? nullptr : gp->asanFakeStack, &lo,
                                  &size);
  mp->g0StackLo = lo;  // the stack we came from is mp's thread stack
  mp->g0StackSize = size;
#endif
}

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_RACE_H_
