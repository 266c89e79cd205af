// tests/spawn_chain.h: SpawnChain, shared by the tests that run a chain of
// short-lived goroutines beside other work (proc_test's FairnessTest,
// gomaxprocs_api_test's GomaxprocsTest).
#ifndef GORT_TESTS_SPAWN_CHAIN_H_
#define GORT_TESTS_SPAWN_CHAIN_H_

#include <atomic>
#include <cstdint>

#include "gort/gort.h"

namespace gort_test {

// A goroutine that starts its successor and exits, until told to stop (a
// chain of short-lived goroutines, always one alive). If nobody stops it
// before `deadline` it stops itself and sets *timed_out, so a scheduler
// that lets the chain starve everyone else fails instead of hanging.
struct SpawnChain {
  std::atomic<bool>* stop;
  std::atomic<bool>* timed_out;
  std::atomic<int>* links;
  gort::WaitGroup* done;
  std::int64_t deadline;
  void operator()() const {
    links->fetch_add(1);
    if (!stop->load() && gort::Nanotime() > deadline) timed_out->store(true);
    if (stop->load() || timed_out->load()) {
      done->Done();
      return;
    }
    gort::Go(*this);
  }
};

}  // namespace gort_test

#endif  // GORT_TESTS_SPAWN_CHAIN_H_
