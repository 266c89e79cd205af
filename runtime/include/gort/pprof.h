// gort/pprof.h: runtime profiles in pprof's format (Go's runtime/pprof).
// "goroutine" (every goroutine's stack), "threadcreate" (the threads the
// runtime made) and "block" (where goroutines waited on channels, select,
// Mutex, RWMutex, WaitGroup, Cond and the network, once SetBlockProfileRate
// turns it on) and "mutex" (contended Mutex and RWMutex releases, once
// SetMutexProfileFraction turns it on) are written as `go tool pprof` reads
// them, symbolized so it needs no binary, or as Go's text forms.
#ifndef GORT_PPROF_H_
#define GORT_PPROF_H_

#include <ostream>
#include <string_view>

namespace gort::pprof {

// Writes profile name to out as Go's Lookup
// (runtime/pprof/pprof.go:226)(name).WriteTo(out, debug) does: debug 0 a
// gzipped profile.proto, 1 text with a count per distinct stack, 2 (goroutine
// only) the dump of every goroutine as a Go panic prints it. Throws gort::Panic
// for an unknown name, or outside a Run.
void WriteProfile(std::string_view name, std::ostream& out, int debug = 0);

// Turns the block profile on (Go's runtime.SetBlockProfileRate (mprof.go:463)):
// on average one blocking event per rate nanoseconds spent blocked is sampled;
// 1 keeps every event, 0 or less turns the profile off. Callable anywhere.
void SetBlockProfileRate(int rate);

// Samples one in rate contended Mutex and RWMutex releases into the mutex
// profile (Go's runtime.SetMutexProfileFraction (mprof.go:533)); 0 turns it
// off, a negative rate only reports. Returns the previous rate.
int SetMutexProfileFraction(int rate);

}  // namespace gort::pprof

#endif  // GORT_PPROF_H_
