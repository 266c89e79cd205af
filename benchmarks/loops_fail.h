// benchmarks/loops_fail.h: how the benchmark loops (ping_loops.h,
// sched_loops.h, net_loops.h) stop on a broken protocol or a failed call: a
// message naming the loop file, then abort(), so that a test running a loop
// as a correctness check fails loudly.
#ifndef GORT_BENCHMARKS_LOOPS_FAIL_H_
#define GORT_BENCHMARKS_LOOPS_FAIL_H_

#include <cstdio>
#include <cstdlib>

namespace gort::bench {

// LoopsFail prints "<loops>: <what>" (or "<loops>: <what>: <detail>") and
// aborts.
[[noreturn]] inline void LoopsFail(const char* loops, const char* what,
                                   const char* detail = nullptr) {
  if (detail != nullptr) {
    std::fprintf(stderr, "%s: %s: %s\n", loops, what, detail);
  } else {
    std::fprintf(stderr, "%s: %s\n", loops, what);
  }
  std::fflush(stderr);
  std::abort();
}

}  // namespace gort::bench

#endif  // GORT_BENCHMARKS_LOOPS_FAIL_H_
