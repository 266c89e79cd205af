// examples/errgroup.cc: golang.org/x/sync/errgroup's shape in gort. Five
// "checks" run at most three at a time (SetLimit); one fails, which cancels
// the group's Context, so the slow ones stop early; Wait rethrows the first
// failure. Each check's bookkeeping is a gort::Defer (Go's defer).
//
//   g, ctx := errgroup.WithContext(context.Background())
//   g.SetLimit(3)
//   for _, c := range checks { c := c; g.Go(func() error { ... }) }
//   if err := g.Wait(); err != nil { ... }
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "gort/gort.h"

using namespace std::chrono_literals;

struct Check {
  const char* name;
  std::chrono::milliseconds takes;
  bool fails;
};

int main() {
  gort::Run([] {
    const Check checks[] = {{"disk", 10ms, false},
                            {"dns", 30ms, true},
                            {"db", 500ms, false},
                            {"cache", 60ms, false},
                            {"queue", 800ms, false}};
    auto [g, ctx] = gort::ErrGroup::WithContext(gort::Background());
    g->SetLimit(3);
    gort::Mutex mu;
    int done = 0;
    for (const Check& c : checks) {
      g->Go([&, c, ctx = ctx] {
        std::printf("%-5s started\n", c.name);
        gort::Defer count([&] {  // defer func() { mu.Lock(); done++; ... }()
          mu.Lock();
          done++;
          mu.Unlock();
        });
        // select { case <-time.After(c.takes): case <-ctx.Done(): ... }
        bool canceled = false;
        gort::Select(gort::OnRecv(gort::After(c.takes), [] {}),
                     gort::OnRecv(ctx.Done(), [&] { canceled = true; }));
        if (canceled) {
          std::printf("%-5s stopped: %s\n", c.name,
                      gort::ContextErrorString(ctx.Err()));
          return;
        }
        if (c.fails) throw std::runtime_error(std::string(c.name) + " is down");
        std::printf("%-5s ok\n", c.name);
      });
    }
    try {
      g->Wait();
      std::printf("all checks passed\n");
    } catch (const std::exception& e) {
      std::printf("first failure: %s (%d of 5 checks ended)\n", e.what(), done);
    }
  });
  return 0;
}
