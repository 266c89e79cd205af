// tests/trace_known.cc: gort-trace-known runs trace_known.h's program at
// GOMAXPROCS 1, for the gort-trace summary test (run it with GORT_TRACE);
// with the argument "kinds", the program that blocks in every way Go's trace
// names (for `go tool trace -pprof=...` in scripts/trace-test.sh); with
// "pprof DIR", writes DIR/goroutine.pb.gz and DIR/threadcreate.pb.gz while
// goroutines wait in ParkedForProfile, and DIR/block.pb.gz and
// DIR/mutex.pb.gz of the "kinds" program run with every event sampled, and
// DIR/cpu.pb.gz, the CPU profile of BurnForProfile under the label
// profiled=yes (for `go tool pprof -top` there); with "cpuprof DIR", that
// CPU profile alone (scripts/windows.sh, from a Wine run); with "serve", serves
// /debug/pprof on a loopback port it prints while BurnForProfile runs under
// profiled=yes, for a minute at most (scripts/trace-test.sh fetches a CPU
// profile and a trace there).
#include "trace_known.h"

#if defined(_WIN32)
#include <windows.h>
#endif

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

#include "gort/pprof.h"
#include "runnext.h"

namespace {

[[gnu::noinline]] void ParkedForProfile(gort::Chan<int> release,
                                        gort::WaitGroup* parked) {
  parked->Done();
  release.Recv();
}

volatile unsigned sink;

// cpuClock: the process's CPU time in clock() units (the C runtime's clock()
// counts wall time on Windows: GetProcessTimes there).
std::clock_t cpuClock() {
#if defined(_WIN32)
  FILETIME c, e, k, u;
  GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u);
  auto ticks = [](const FILETIME& f) {  // 100 ns
    return (static_cast<std::uint64_t>(f.dwHighDateTime) << 32) |
           f.dwLowDateTime;
  };
  return static_cast<std::clock_t>((ticks(k) + ticks(u)) /
                                   (10'000'000 / CLOCKS_PER_SEC));
#else
  return std::clock();
#endif
}

// BurnForProfile spins for 200 ms of the process's CPU.
[[gnu::noinline]] void BurnForProfile() {
  std::clock_t end = cpuClock() + CLOCKS_PER_SEC / 5;
  unsigned x = 1;
  while (cpuClock() < end) {
    for (int i = 0; i < 100000; i++) x = x * 1664525u + 1013904223u;
  }
  sink = x;
}

// WriteCPUProfile: BurnForProfile profiled; not inlined, since
// scripts/windows.sh looks for it as BurnForProfile's caller in the stacks.
[[gnu::noinline]] void WriteCPUProfile(const std::string& dir) {
  std::ofstream out(dir + "/cpu.pb.gz", std::ios::binary);
  if (!gort::pprof::StartCPUProfile(out)) std::abort();
  gort::pprof::Do(gort::pprof::Labels("profiled", "yes"), BurnForProfile);
  gort::pprof::StopCPUProfile();
  if (!out) std::abort();
}

void WriteProfiles(const std::string& dir) {
  WriteCPUProfile(dir);
  // First (it waits for every other goroutine to end).
  gort::pprof::SetBlockProfileRate(1);
  gort::pprof::SetMutexProfileFraction(1);
  gort_test::BlockingKinds();
  gort::pprof::SetBlockProfileRate(0);
  auto release = gort::MakeChan<int>();
  gort::WaitGroup parked;
  parked.Add(3);
  for (int i = 0; i < 3; i++) {
    gort::Go([release, &parked] { ParkedForProfile(release, &parked); });
  }
  parked.Wait();
  // GOMAXPROCS 1: the last one parks in Recv before this returns.
  gort_test::LetRunnextRun();
  for (const char* name : {"goroutine", "threadcreate", "block", "mutex"}) {
    std::ofstream out(dir + "/" + name + ".pb.gz", std::ios::binary);
    gort::pprof::WriteProfile(name, out);
    if (!out) std::abort();
  }
  release.Close();
}

void Serve() {
  std::string addr = gort::pprof::ListenAndServe("127.0.0.1:0");
  std::printf("%s\n", addr.c_str());
  std::fflush(stdout);
  gort::pprof::Do(gort::pprof::Labels("profiled", "yes"), [] {
    for (std::int64_t end = gort::Nanotime() + 60'000'000'000;
         gort::Nanotime() < end;) {
      BurnForProfile();
      gort::Gosched();
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  gort::Options o;
  o.maxprocs = 1;
  if (argc > 1 && std::strcmp(argv[1], "serve") == 0) {
    o.maxprocs = 2;
    gort::Run(Serve, o);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[1], "cpuprof") == 0) {
    std::string dir = argv[2];
    gort::Run([dir] { WriteCPUProfile(dir); }, o);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[1], "pprof") == 0) {
    std::string dir = argv[2];
    gort::Run([dir] { WriteProfiles(dir); }, o);
    return 0;
  }
  bool kinds = argc > 1 && std::strcmp(argv[1], "kinds") == 0;
  gort::Run(kinds ? gort_test::BlockingKinds : gort_test::KnownProgram, o);
}
