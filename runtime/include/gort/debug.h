// gort/debug.h: hooks for tools that study the runtime (gort-usleep-probe).
#ifndef GORT_DEBUG_H_
#define GORT_DEBUG_H_

#include <cstdint>

namespace gort::debug {

// Calls the runtime's usleep on the calling thread (Go's usleep
// (stubs2.go:21)); inside Run a goroutine's thread has the Run's UsleepMode
// applied.
void Usleep(std::uint32_t usec);

}  // namespace gort::debug

#endif  // GORT_DEBUG_H_
