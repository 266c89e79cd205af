// gort/pprof.h: runtime profiles in pprof's format (Go's runtime/pprof).
// "goroutine" (every goroutine's stack) and "threadcreate" (the threads the
// runtime made) are written as `go tool pprof` reads them, symbolized so it
// needs no binary, or as Go's text forms.
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

}  // namespace gort::pprof

#endif  // GORT_PPROF_H_
