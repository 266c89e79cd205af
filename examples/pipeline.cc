// examples/pipeline.cc: a pipeline of goroutines joined by channels, read
// with select and a timeout (Go's `select { case v := <-ch: ...; case
// <-time.After(d): ... }`).
//
//   generate 1..N  ->  square  ->  main (select with a timeout per value)
//
// Then a stage that is too slow: main gives up waiting after 50 ms.
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "gort/gort.h"

using namespace std::chrono_literals;

// generate sends 1..n on a new channel, then closes it.
gort::Chan<int> generate(int n) {
  auto out = gort::MakeChan<int>();
  gort::Go([=] {
    for (int i = 1; i <= n; i++) out.Send(i);
    out.Close();
  });
  return out;
}

// square sends v*v for every v received from in, and closes its output when
// in is closed (Go's `for v := range in`).
gort::Chan<int> square(gort::Chan<int> in) {
  auto out = gort::MakeChan<int>(2);  // a small buffer between stages
  gort::Go([=] {
    for (int v : in) out.Send(v * v);
    out.Close();
  });
  return out;
}

int main() {
  gort::Run([] {
    auto squares = square(generate(6));
    int sum = 0;
    for (;;) {
      int v = 0;
      bool ok = false;
      // select {
      // case v, ok := <-squares:
      // case <-time.After(time.Second):
      // }
      int chosen = gort::Select(gort::RecvCase(squares, &v, &ok),
                                gort::RecvCase(gort::After(1s)));
      if (chosen == 1) {
        std::printf("timed out waiting for the pipeline\n");
        return;
      }
      if (!ok) break;  // squares was closed: the pipeline is done
      std::printf("square: %d\n", v);
      sum += v;
    }
    std::printf("sum of squares: %d\n", sum);

    // A stage that takes 200 ms to answer, and a caller that waits 50 ms.
    auto slow = gort::MakeChan<int>(1);  // buffered: the sender never blocks
    gort::Go([=] {
      gort::Sleep(200ms);
      slow.Send(42);
    });
    std::int64_t start = gort::Nanotime();
    int answer = 0;
    if (gort::Select(gort::RecvCase(slow, &answer),
                     gort::RecvCase(gort::After(50ms))) == 0) {
      std::printf("slow stage answered %d\n", answer);
    } else {
      std::printf("slow stage timed out after ~%lld ms\n",
                  static_cast<long long>((gort::Nanotime() - start) / 1000000));
    }
    // A non-blocking poll: Select with a DefaultCase never parks.
    if (gort::Select(gort::RecvCase(slow, &answer), gort::DefaultCase()) == 1) {
      std::printf("poll: nothing yet\n");
    }
    // The same select with handlers, each case's code beside it:
    // select { case v := <-slow: ...; default: ... }
    gort::Select(
        gort::OnRecv(slow, [](int v) { std::printf("poll: got %d\n", v); }),
        gort::OnDefault([] { std::printf("poll again: nothing yet\n"); }));
  });
  return 0;
}
