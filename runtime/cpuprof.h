// runtime/cpuprof.h: the CPU profiler's runtime half (Go's cpuprof.go, the
// sigprof half of proc.go, and profbuf.go's role); see cpuprof.cc.
// pkg/pprof's StartCPUProfile and StopCPUProfile drive it.
#ifndef GORT_RUNTIME_CPUPROF_H_
#define GORT_RUNTIME_CPUPROF_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gort::runtime {

// cpuprofPeriod: nanoseconds of CPU between samples (Go's 100 Hz).
constexpr std::int64_t cpuprofPeriod = 10'000'000;

// cpuprofKey: one sample's stack, innermost first (the sampled instruction,
// then return addresses), and its goroutine's labels (sorted by key).
using cpuprofKey = std::pair<std::vector<std::uintptr_t>,
                             std::vector<std::pair<std::string, std::string>>>;
// cpuprofCounts: how many samples each stack and label set got.
using cpuprofCounts = std::map<cpuprofKey, std::int64_t>;

// cpuprofStart mirrors Go's SetCPUProfileRate (cpuprof.go:69)
// turning the profiler on: installs the handler and arms a timer on every M;
// false, with why set, if a profile is already running or the OS has no
// profiler.
bool cpuprofStart(const char** why);
// cpuprofArm arms the Ms started since (the reader calls it as it drains;
// in Go each M arms itself when they next run a goroutine).
void cpuprofArm();
// cpuprofDrain mirrors Go's readProfile (runtime/pprof/pprof.go:792)
// (cpuprof.go): moves the samples the handler left in the ring into counts;
// returns how many it moved.
int cpuprofDrain(cpuprofCounts* counts);
// cpuprofStop disarms every timer and waits until no handler is running;
// the ring may still hold samples for a last cpuprofDrain. Returns how many
// samples were lost to a full ring.
std::uint64_t cpuprofStop();
// cpuprofRunEnd stops a profile still running when Run ends (its Ms go).
void cpuprofRunEnd();

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_CPUPROF_H_
