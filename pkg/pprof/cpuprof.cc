// pkg/pprof/cpuprof.cc: StartCPUProfile and StopCPUProfile (Go's
// runtime/pprof pprof.go: StartCPUProfile, profileWriter, StopCPUProfile).
//
// The runtime samples (runtime/cpuprof.cc); a reader goroutine here, as Go's
// profileWriter, drains its ring every kReadPeriod into counts per stack and
// label set, and arms the Ms started meanwhile. StopCPUProfile stops the
// reader, stops the sampling, drains the rest and writes profile.proto
// (profile.cc), symbolized there.
#include "cpuprof.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "gort/chan.h"
#include "gort/gort.h"
#include "gort/pprof.h"
#include "gort/runtime.h"
#include "panic.h"
#include "proc.h"
#include "profile.h"

namespace gort::pprof {

namespace {

constexpr auto kReadPeriod = std::chrono::milliseconds(20);

// cpuProfile: the running profile.
struct cpuProfile {
  std::ostream* out = nullptr;
  std::int64_t startWall = 0;  // Unix nanoseconds
  std::int64_t startMono = 0;
  runtime::cpuprofCounts counts;  // the reader's until done is closed
  std::atomic<bool> stop{false};
  std::atomic<bool> exited{false};   // the reader is done with counts
  Chan<int> done = MakeChan<int>();  // closed when the reader has ended
  bool stopping = false;             // under cpuMu
};

std::mutex cpuMu;  // Go's cpu (runtime/pprof/pprof.go:743) lock; held only
                   // briefly, never across a park
cpuProfile* cpu = nullptr;

std::int64_t wallNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// profileWriter mirrors Go's profileWriter (runtime/pprof/pprof.go:799):
// reads samples until told to stop (the last read is StopCPUProfile's).
void profileWriter(cpuProfile* p) {
  while (!p->stop.load(std::memory_order_acquire)) {
    Sleep(kReadPeriod);
    runtime::cpuprofArm();
    runtime::cpuprofDrain(&p->counts);
  }
  p->exited.store(true, std::memory_order_release);
  p->done.Close();
}

// writeCPU: p's samples as profile.proto (Go's profileBuilder.build
// (runtime/pprof/proto.go:348) for the CPU profile: samples/count and
// cpu/nanoseconds, period 10 ms of CPU).
void writeCPU(cpuProfile* p) {
  profileBuilder b({{"samples", "count"}, {"cpu", "nanoseconds"}},
                   {"cpu", "nanoseconds"}, runtime::cpuprofPeriod);
  for (const auto& [key, n] : p->counts) {
    b.add({n, n * runtime::cpuprofPeriod}, key.first, key.second);
  }
  std::string data = b.build(p->startWall, Nanotime() - p->startMono);
  p->out->write(data.data(), static_cast<std::streamsize>(data.size()));
  p->out->flush();
}

}  // namespace

bool StartCPUProfile(std::ostream& out, std::string* why) {
  if (!runtime::running.load() || runtime::getcurg() == nullptr) {
    throw Panic("gort: pprof.StartCPUProfile called outside a goroutine");
  }
  std::lock_guard<std::mutex> g(cpuMu);
  const char* reason = "cpu profiling already in use";
  if (cpu == nullptr) {
    // Samples a profile left when its Run ended before StopCPUProfile.
    runtime::cpuprofCounts stale;
    runtime::cpuprofDrain(&stale);
  }
  if (cpu != nullptr || !runtime::cpuprofStart(&reason)) {
    if (why != nullptr) *why = reason;
    return false;
  }
  cpu = new cpuProfile;
  cpu->out = &out;
  cpu->startWall = wallNanos();
  cpu->startMono = Nanotime();
  cpuProfile* p = cpu;
  Go([p] { profileWriter(p); });
  return true;
}

void StopCPUProfile() {
  cpuProfile* p;
  {
    std::lock_guard<std::mutex> g(cpuMu);
    if (cpu == nullptr || cpu->stopping) return;
    p = cpu;
    p->stopping = true;
  }
  p->stop.store(true, std::memory_order_release);
  // After Run's end the reader is gone (and the sampling stopped); a
  // thread that is not a goroutine cannot park: it waits for the flag.
  if (runtime::running.load() && runtime::getcurg() != nullptr) {
    p->done.Recv();
  } else {
    while (runtime::running.load() &&
           !p->exited.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(kReadPeriod / 4);
    }
  }
  runtime::cpuprofStop();
  runtime::cpuprofDrain(&p->counts);
  // Symbolizing reads debug information from files: the P may go meanwhile.
  if (runtime::running.load() && runtime::getcurg() != nullptr) {
    Syscall([p] { writeCPU(p); });
  } else {
    writeCPU(p);
  }
  std::lock_guard<std::mutex> g(cpuMu);
  cpu = nullptr;
  delete p;
}

}  // namespace gort::pprof
