// runtime/proc_maxprocs.cc: the default GOMAXPROCS and its updates (Go
// 1.25's proc.go: defaultGOMAXPROCS, adjustCgroupGOMAXPROCS,
// sysmonUpdateGOMAXPROCS and updateMaxProcsG).
//
// Unless Options.maxprocs, $GOMAXPROCS or a call of GOMAXPROCS(n) chose a
// value ("custom"), GOMAXPROCS is the smallest of the CPUs the process may
// run on (its affinity) and its cgroup CPU limit, rounded up and at least
// 2. sysmon re-reads both about once a second; when the result differs it
// starts a goroutine that resizes (a resize stops the world, which only a
// goroutine may do), as Go readies updateMaxProcsG. Unlike Go's, that
// goroutine is counted by NumGoroutine while it lives.
#include <cmath>
#include <string>

#include "os/os.h"
#include "proc.h"

namespace gort::runtime {

namespace {

constexpr std::int64_t kUpdatePeriodNS = 1'000'000'000;
constexpr std::size_t kPathMax = 4096;

int cgroupVersion = 0;        // of cgroupDir; 0: no CPU cgroup
char cgroupDir[kPathMax];     // found by maxprocsinit, read by sysmon
std::int64_t lastUpdate = 0;  // sysmon only
std::atomic<bool> updatePending{false};

// updateMaxProcs mirrors Go's updateMaxProcsG: the resize sysmon asked for,
// unless a custom value was set meanwhile.
void updateMaxProcs(std::int32_t procs) {
  stopTheWorld();
  std::int32_t n = customGOMAXPROCS.load() ? gomaxprocs.load() : procs;
  startTheWorld(n);
  updatePending.store(false);
}

}  // namespace

std::atomic<bool> customGOMAXPROCS{false};
std::string cgroupRoot;

std::int32_t adjustCgroupGOMAXPROCS(std::int32_t procs, double limit) {
  if (limit <= 0) return procs;  // no limit, or none readable
  double l = std::ceil(limit);
  if (l < 2) l = 2;
  return l < procs ? static_cast<std::int32_t>(l) : procs;
}

std::int32_t defaultGOMAXPROCS(bool cached) {
  std::int32_t procs = os::getproccount();
  if (procs > kMaxGomaxprocs) procs = kMaxGomaxprocs;
  if (procs < 1) procs = 1;
  if (cached) {
    if (cgroupVersion == 0) return procs;
    return adjustCgroupGOMAXPROCS(
        procs, os::cgroupReadCPULimit(cgroupDir, cgroupVersion));
  }
  char dir[kPathMax];
  int version = os::cgroupFindCPU(cgroupRoot.c_str(), dir, sizeof dir);
  if (version == 0) return procs;
  return adjustCgroupGOMAXPROCS(procs, os::cgroupReadCPULimit(dir, version));
}

void maxprocsinit(bool custom) {
  customGOMAXPROCS.store(custom);
  cgroupVersion =
      os::cgroupFindCPU(cgroupRoot.c_str(), cgroupDir, sizeof cgroupDir);
  lastUpdate = os::nanotime();
  updatePending.store(false);
}

void sysmonUpdateGOMAXPROCS(std::int64_t now) {
  if (customGOMAXPROCS.load(std::memory_order_relaxed) ||
      now - lastUpdate < kUpdatePeriodNS) {
    return;
  }
  lastUpdate = now;
  if (updatePending.load()) return;
  std::int32_t procs = defaultGOMAXPROCS(true);
  if (procs == gomaxprocs.load()) return;
  updatePending.store(true);
  G* newg =
      newproc1(internal::Func([procs] { updateMaxProcs(procs); }), nullptr);
  lock(&sched.lock);
  globrunqput(newg);
  unlock(&sched.lock);
  wakep();
}

}  // namespace gort::runtime
