// tests/trace_known.cc: gort-trace-known runs trace_known.h's program at
// GOMAXPROCS 1, for the gort-trace summary test (run it with GORT_TRACE);
// with the argument "kinds", the program that blocks in every way Go's trace
// names (for `go tool trace -pprof=...` in scripts/trace-test.sh).
#include "trace_known.h"

#include <cstring>

int main(int argc, char** argv) {
  gort::Options o;
  o.maxprocs = 1;
  bool kinds = argc > 1 && std::strcmp(argv[1], "kinds") == 0;
  gort::Run(kinds ? gort_test::BlockingKinds : gort_test::KnownProgram, o);
}
