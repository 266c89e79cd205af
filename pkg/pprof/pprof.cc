// pkg/pprof/pprof.cc: WriteProfile (Go's runtime/pprof: Lookup(name).WriteTo
// for the goroutine and threadcreate profiles, writeGoroutine,
// writeThreadCreate, printCountProfile).
//
// The goroutine profile is a snapshot of every goroutine's stack taken as
// the dump takes it (traceback.cc: walked while no goroutine may start
// running; one already running on another thread has no stack, where Go
// stops the world). Stacks are grouped by their return addresses; debug 1
// prints a count per group, innermost frame first, as Go's text form; debug
// 0 is the same as profile.proto (profile.cc). The threadcreate profile
// counts the runtime's Ms; gort records no creation stacks, so it has one
// sample with none.
#include "gort/pprof.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gort/runtime.h"
#include "os/traceback_os.h"
#include "panic.h"
#include "proc.h"
#include "profile.h"
#include "traceback.h"

namespace gort::pprof {

namespace {

using PCs = std::vector<std::uintptr_t>;
constexpr int kMaxInlined = 16;

std::int64_t wallNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string hex(std::uintptr_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

// printCountProfile mirrors Go's printCountProfile (runtime/pprof/pprof.go:403)
// (runtime/pprof/pprof.go: 431) at debug 1: "name profile: total N", then per
// distinct stack, most frequent first, "count @ pc ..." and a
// "#\tpc\tfunction\tfile:line" line per frame (gort has no function entry, so
// no +offset).
std::string printCountProfile(const std::string& name,
                              const std::vector<PCs>& stacks) {
  std::map<PCs, int> counts;
  for (const PCs& s : stacks) counts[s]++;
  std::vector<std::pair<PCs, int>> order(counts.begin(), counts.end());
  std::stable_sort(
      order.begin(), order.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out =
      name + " profile: total " + std::to_string(stacks.size()) + "\n";
  for (const auto& [stk, n] : order) {
    out += std::to_string(n) + " @";
    for (std::uintptr_t pc : stk) out += " " + hex(pc);
    out += "\n";
    for (std::uintptr_t pc : stk) {
      os::Symbol syms[kMaxInlined];
      int k = os::symbolize(pc, syms, kMaxInlined);
      for (int i = 0; i < k; i++) {
        out += "#\t" + hex(pc) + "\t" + syms[i].function + "\t" + syms[i].file +
               ":" + std::to_string(syms[i].line) + "\n";
      }
    }
    out += "\n";
  }
  return out;
}

// countProfile: stacks as debug asks (Go's writeRuntimeProfile
// (runtime/pprof/pprof.go:707)).
std::string countProfile(const std::string& name,
                         const std::vector<PCs>& stacks, int debug) {
  if (debug != 0) return printCountProfile(name, stacks);
  profileBuilder b({{name, "count"}}, {name, "count"}, 1);
  std::map<PCs, int> counts;
  for (const PCs& s : stacks) counts[s]++;
  for (const auto& [stk, n] : counts) b.add({n}, stk);
  return b.build(wallNanos(), 0);
}

}  // namespace

void WriteProfile(std::string_view name, std::ostream& out, int debug) {
  if (!runtime::running.load()) {
    throw Panic("gort: pprof.WriteProfile called outside gort::Run");
  }
  std::string data;
  if (name == "goroutine") {
    if (debug >= 2) {
      data = gort::Stack(
          true);  // Go's writeGoroutineStacks (runtime/pprof/pprof.go:686)
    } else {
      std::vector<PCs> stacks;
      runtime::goroutineStacks(&stacks);
      data = countProfile("goroutine", stacks, debug);
    }
  } else if (name == "threadcreate") {
    std::vector<PCs> stacks(runtime::threadCount());
    data = countProfile("threadcreate", stacks, debug);
  } else {
    throw Panic("pprof: unknown profile " + std::string(name));
  }
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

}  // namespace gort::pprof
