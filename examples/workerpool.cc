// examples/workerpool.cc: a pool of worker goroutines fed by a buffered
// channel, with a WaitGroup to know when they are all done and a Mutex
// around the shared tally (Go's sync.WaitGroup and sync.Mutex).
//
// Usage: workerpool [total-ms]
//   Each job "works" by sleeping; total-ms (default 200) is roughly how long
//   the whole run takes. Run it longer to watch the scheduler, e.g.
//     GODEBUG=schedtrace=1000 ./workerpool 2500
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "gort/gort.h"

namespace {
constexpr int kWorkers = 4;
constexpr int kJobs = 20;
}  // namespace

int main(int argc, char** argv) {
  long total_ms = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 200;
  if (total_ms < 0) total_ms = 0;
  // kJobs / kWorkers rounds of jobs, each round ~job_time long.
  auto job_time = std::chrono::milliseconds(total_ms * kWorkers / kJobs);

  gort::Run([=] {
    auto jobs = gort::MakeChan<int>(kJobs);  // buffered: all jobs fit
    gort::WaitGroup wg;
    gort::Mutex mu;
    long sum = 0;             // guarded by mu
    int done[kWorkers] = {};  // jobs per worker, guarded by mu

    for (int w = 0; w < kWorkers; w++) {
      wg.Go([&, w] {  // wg.Add(1); go func() { defer wg.Done(); ... }()
        for (int job : jobs) {    // for job := range jobs
          gort::Sleep(job_time);  // the "work": parks, the thread runs others
          mu.Lock();
          sum += static_cast<long>(job) * job;
          done[w]++;
          mu.Unlock();
        }
      });
    }
    for (int j = 1; j <= kJobs; j++) jobs.Send(j);
    jobs.Close();  // workers leave their loops once the queue drains
    wg.Wait();     // main parks until every worker called Done

    int total = 0;
    for (int w = 0; w < kWorkers; w++) total += done[w];
    std::printf("%d workers finished %d jobs; sum of squares = %ld\n", kWorkers,
                total, sum);
  });
  return 0;
}
