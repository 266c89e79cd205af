// examples/hello.cc: hello, goroutines.
//
// gort::Run starts the runtime and runs its argument as goroutine 1 (Go's
// main.main); gort::Go starts more goroutines, and an unbuffered channel
// hands each greeting to main, which prints them in the order of the ids.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gort/gort.h"

int main() {
  gort::Run([] {
    constexpr int kN = 5;
    // make(chan std::pair<int, std::string>)
    auto greetings = gort::MakeChan<std::pair<int, std::string>>();
    for (int i = 0; i < kN; i++) {
      // go func() { greetings <- ... }()
      gort::Go([=] {
        greetings.Send({i, "hello from goroutine " + std::to_string(i)});
      });
    }
    // Goroutines finish in any order; sort by id for a stable printout.
    std::vector<std::string> lines(kN);
    for (int i = 0; i < kN; i++) {
      auto [id, text] = greetings.Recv();
      lines[id] = text;
    }
    for (const auto& line : lines) std::printf("%s\n", line.c_str());
    std::printf("GOMAXPROCS=%d, goroutines now: %d\n", gort::GOMAXPROCS(0),
                gort::NumGoroutine());
  });
  return 0;
}
