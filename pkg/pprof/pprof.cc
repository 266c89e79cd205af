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
#include "mprof.h"
#include "os/traceback_os.h"
#include "panic.h"
#include "proc.h"
#include "profile.h"
#include "traceback.h"

namespace gort::pprof {

namespace {

using PCs = std::vector<std::uintptr_t>;
using LabelList = std::vector<std::pair<std::string, std::string>>;
// A stack and the labels its goroutine had: the goroutine profile's key
// (Go's printCountProfile (runtime/pprof/pprof.go:403) key).
using Key = std::pair<PCs, LabelList>;
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

// quote: s as Go's %q writes a plain string (quotes, \\ and \" escaped).
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// labelString mirrors Go's labelMap.String (runtime/pprof/label.go:42):
// {"k":"v", ...}, sorted.
std::string labelString(const LabelList& l) {
  std::string out = "{";
  for (std::size_t i = 0; i < l.size(); i++) {
    if (i > 0) out += ", ";
    out += quote(l[i].first) + ":" + quote(l[i].second);
  }
  return out + "}";
}

// printCountProfile mirrors Go's printCountProfile (runtime/pprof/pprof.go:403)
// at debug 1: "name profile: total N", then per distinct stack and label
// set, most frequent first, "count @ pc ...", "# labels: {...}" when it has
// labels, and a "#\tpc\tfunction\tfile:line" line per frame (gort has no
// function entry, so no +offset).
std::string printCountProfile(const std::string& name,
                              const std::vector<Key>& stacks) {
  std::map<Key, int> counts;
  for (const Key& s : stacks) counts[s]++;
  std::vector<std::pair<Key, int>> order(counts.begin(), counts.end());
  std::stable_sort(
      order.begin(), order.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out =
      name + " profile: total " + std::to_string(stacks.size()) + "\n";
  for (const auto& [key, n] : order) {
    const PCs& stk = key.first;
    out += std::to_string(n);
    out += " @";
    for (std::uintptr_t pc : stk) {
      out += ' ';
      out += hex(pc);
    }
    out += "\n";
    if (!key.second.empty())
      out += "# labels: " + labelString(key.second) + "\n";
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
// (runtime/pprof/pprof.go:707)), each sample with its labels.
std::string countProfile(const std::string& name,
                         const std::vector<Key>& stacks, int debug) {
  if (debug != 0) return printCountProfile(name, stacks);
  profileBuilder b({{name, "count"}}, {name, "count"}, 1);
  std::map<Key, int> counts;
  for (const Key& s : stacks) counts[s]++;
  for (const auto& [key, n] : counts) b.add({n}, key.first, key.second);
  return b.build(wallNanos(), 0);
}

// printBlockProfile mirrors Go's printCountCycleProfile
// (runtime/pprof/pprof.go:376) (runtime/pprof/ pprof.go) at debug 1: "---
// contention:", cycles per second (gort's are nanoseconds), then per bucket
// "cycles count @ pc ..." and its frames.
std::string printBlockProfile(const std::vector<runtime::blockRecord>& recs,
                              std::int64_t mutexRate) {
  std::string out = mutexRate == 0
                        ? "--- contention:\ncycles/second=1000000000\n"
                        : "--- mutex:\ncycles/second=1000000000\n"
                          "sampling period=" +
                              std::to_string(mutexRate) + "\n";
  for (const runtime::blockRecord& r : recs) {
    out += std::to_string(r.cycles);
    out += ' ';
    out += std::to_string(static_cast<std::int64_t>(r.count));
    out += " @";
    for (std::uintptr_t pc : r.stk) {
      out += ' ';
      out += hex(pc);
    }
    out += "\n";
    for (std::uintptr_t pc : r.stk) {
      os::Symbol syms[kMaxInlined];
      int k = os::symbolize(pc, syms, kMaxInlined);
      for (int i = 0; i < k; i++) {
        out += "#\t" + hex(pc) + "\t" + syms[i].function + "\t" + syms[i].file +
               ":" + std::to_string(syms[i].line) + "\n";
      }
    }
  }
  return out;
}

// trimRuntime drops the frames of the runtime's own bookkeeping (the walk
// was made as the goroutine resumed, inside gopark) from the top of stk, as
// Go's blockevent (mprof.go:480) skips its callers; the blocking call
// (chanrecv, semacquire's caller, ...) stays on top.
void trimRuntime(std::vector<std::uintptr_t>* stk) {
  std::size_t i = 0;
  for (; i < stk->size(); i++) {
    os::Symbol syms[kMaxInlined];
    int k = os::symbolize((*stk)[i], syms, kMaxInlined);
    if (k <= 0) break;
    const std::string& f = syms[k - 1].function;  // the real function
    bool own = f.rfind("gort::runtime::", 0) == 0 &&
               f.find("semacquire") == std::string::npos &&
               f.find("netpollblock") == std::string::npos &&
               f.find("pollWait") == std::string::npos;
    if (!own) break;
  }
  stk->erase(stk->begin(), stk->begin() + static_cast<std::ptrdiff_t>(i));
}

// blockProfile: Go's writeBlock (runtime/pprof/pprof.go:844) and
// writeMutex: contentions and delay per stack; mutex: the mutex profile's.
std::string blockProfile(int debug, bool mutex) {
  std::vector<runtime::blockRecord> recs =
      mutex ? runtime::mutexProfile() : runtime::blockProfile();
  std::int64_t rate =
      mutex ? runtime::mutexprofilerate.load(std::memory_order_relaxed) : 0;
  for (runtime::blockRecord& r : recs) trimRuntime(&r.stk);
  std::stable_sort(recs.begin(), recs.end(), [](const auto& a, const auto& b) {
    return a.cycles > b.cycles;
  });
  if (debug != 0) return printBlockProfile(recs, mutex ? rate : 0);
  profileBuilder b({{"contentions", "count"}, {"delay", "nanoseconds"}},
                   {"contentions", "count"}, mutex && rate > 0 ? rate : 1);
  for (const runtime::blockRecord& r : recs) {
    b.add({static_cast<std::int64_t>(r.count), r.cycles}, r.stk);
  }
  return b.build(wallNanos(), 0);
}

}  // namespace

void SetBlockProfileRate(int rate) {
  runtime::blockprofilerate.store(rate > 0 ? rate : 0,
                                  std::memory_order_relaxed);
}

int SetMutexProfileFraction(int rate) {
  std::int64_t old = runtime::mutexprofilerate.load(std::memory_order_relaxed);
  if (rate >= 0) {
    runtime::mutexprofilerate.store(rate, std::memory_order_relaxed);
  }
  return static_cast<int>(old);
}

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
      std::vector<LabelList> labels;
      runtime::goroutineStacks(&stacks, &labels);
      std::vector<Key> keys;
      for (std::size_t i = 0; i < stacks.size(); i++) {
        keys.emplace_back(std::move(stacks[i]), std::move(labels[i]));
      }
      data = countProfile("goroutine", keys, debug);
    }
  } else if (name == "block") {
    data = blockProfile(debug, false);
  } else if (name == "mutex") {
    data = blockProfile(debug, true);
  } else if (name == "threadcreate") {
    std::vector<Key> stacks(runtime::threadCount());
    data = countProfile("threadcreate", stacks, debug);
  } else {
    throw Panic("pprof: unknown profile " + std::string(name));
  }
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

}  // namespace gort::pprof
