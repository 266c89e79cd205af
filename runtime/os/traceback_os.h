// runtime/os/traceback_os.h: what the goroutine dump (runtime/traceback.cc)
// needs from the OS and the architecture: walking a stack into return
// addresses, naming those addresses, and the quit signal (Go's
// traceback.go relies on its own symbol table and signal_unix.go; gort uses
// the platform's unwinder and debug information). No system header here.
#ifndef GORT_RUNTIME_OS_TRACEBACK_OS_H_
#define GORT_RUNTIME_OS_TRACEBACK_OS_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace gort::os {

// tracebackParked: the return addresses of a goroutine switched out with
// saved context ctx on the stack [lo, hi), innermost first, at most max;
// returns how many, or -1 when this target cannot walk a parked stack.
int tracebackParked(void* ctx, const void* lo, const void* hi,
                    std::uintptr_t* pcs, int max);
// tracebackSelf: the return addresses of the calling thread's own stack,
// innermost first; hi (may be nullptr) is the top of the goroutine stack it
// runs on, where the walk stops. Returns how many, or -1 as above.
int tracebackSelf(const void* lo, const void* hi, std::uintptr_t* pcs, int max);
// tracebackParkedCached and tracebackSelfCached: the same walks, answered
// from this thread's cache of recent walks when every return address the
// cached walk read is still in place (for the tracer, which walks the same
// stacks over and over); bounded walks (hi != nullptr) of at most 32 frames.
// If tag is not null, *tag is set to the cache entry's word for the caller
// (0 in a walk just stored, nullptr if the walk is not cached), which the
// caller may read and write until this thread's next walk: the tracer keeps
// the walk's stack id there, so a cached walk needs no lookup.
int tracebackParkedCached(void* ctx, const void* lo, const void* hi,
                          std::uintptr_t* pcs, int max,
                          std::uint64_t** tag = nullptr);
int tracebackSelfCached(const void* lo, const void* hi, std::uintptr_t* pcs,
                        int max, std::uint64_t** tag = nullptr);
// tracebackCacheHits: how many walks this thread answered from its cache.
std::int64_t tracebackCacheHits();

// One frame at a return address: function (demangled), source file and
// line, and, for the real (outermost) function only, its module and the
// return address's offset in it. Inlined calls make several frames.
struct Symbol {
  std::string function;
  std::string file;  // empty if no line information
  int line = 0;
  std::string module;
  std::uintptr_t offset = 0;
};
// symbolize: the frames of the call that returns to pc, innermost first (the
// functions inlined there, then the real one), at most max; 0 if nothing is
// known. Not async-signal-safe (reads debug information, allocates).
int symbolize(std::uintptr_t pc, Symbol* out, int max);

// installQuitHandler: on SIGQUIT (Windows: Ctrl-Break in a console), calls
// onQuit from the signal handler; onQuit must be async-signal-safe.
// Returns false where the OS has no such signal.
bool installQuitHandler(void (*onQuit)());

}  // namespace gort::os

#endif  // GORT_RUNTIME_OS_TRACEBACK_OS_H_
