// tests/trace_known.cc: gort-trace-known runs trace_known.h's program at
// GOMAXPROCS 1, for the gort-trace summary test (run it with GORT_TRACE).
#include "trace_known.h"

int main() {
  gort::Options o;
  o.maxprocs = 1;
  gort::Run(gort_test::KnownProgram, o);
}
