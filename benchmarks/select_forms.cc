// benchmarks/select_forms.cc: gort-select-forms, Select's handler form
// (OnRecv) against its index form (RecvCase and a switch) on the Select2
// loop, measured interleaved in one process so that machine noise falls on
// both alike: ROUNDS rounds, each timing N ops of one form then the other
// (the order alternating by round), then each form's median ns/op and the
// median of the per-round ratios handlers/index.
//
// Usage: gort-select-forms [ROUNDS [N]]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "benchmarks/sched_loops.h"
#include "gort/gort.h"

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

template <class F>
double NsPerOp(F loop, std::int64_t n) {
  auto t0 = std::chrono::steady_clock::now();
  loop(n);
  std::chrono::duration<double, std::nano> d =
      std::chrono::steady_clock::now() - t0;
  return d.count() / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
  std::int64_t n = argc > 2 ? std::atoll(argv[2]) : 200000;
  if (rounds < 1 || n < 1) {
    std::fprintf(stderr, "usage: gort-select-forms [ROUNDS [N]]\n");
    return 2;
  }
  std::vector<double> index, handlers, ratio;
  gort::Run(
      [&] {
        gort::bench::Select2(n / 10);  // warm up both
        gort::bench::Select2Handlers(n / 10);
        for (int r = 0; r < rounds; r++) {
          double a = 0;
          double b = 0;
          if (r % 2 == 0) {
            a = NsPerOp(gort::bench::Select2, n);
            b = NsPerOp(gort::bench::Select2Handlers, n);
          } else {
            b = NsPerOp(gort::bench::Select2Handlers, n);
            a = NsPerOp(gort::bench::Select2, n);
          }
          index.push_back(a);
          handlers.push_back(b);
          ratio.push_back(b / a);
        }
      },
      gort::Options{.maxprocs = 1});
  std::printf("Select2 (index form)     %8.2f ns/op (median of %d)\n",
              Median(index), rounds);
  std::printf("Select2Handlers (OnRecv) %8.2f ns/op (median of %d)\n",
              Median(handlers), rounds);
  std::printf(
      "handlers/index           %8.3f (median per-round ratio, min "
      "%.3f, max %.3f)\n",
      Median(ratio), *std::min_element(ratio.begin(), ratio.end()),
      *std::max_element(ratio.begin(), ratio.end()));
  return 0;
}
