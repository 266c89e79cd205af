// gort/pprof.h: runtime profiles in pprof's format (Go's runtime/pprof).
// "goroutine" (every goroutine's stack), "threadcreate" (the threads the
// runtime made) and "block" (where goroutines waited on channels, select,
// Mutex, RWMutex, WaitGroup, Cond and the network, once SetBlockProfileRate
// turns it on) and "mutex" (contended Mutex and RWMutex releases, once
// SetMutexProfileFraction turns it on) are written as `go tool pprof` reads
// them, symbolized so it needs no binary, or as Go's text forms.
// StartCPUProfile and StopCPUProfile sample where the program's threads
// spend CPU (SIGPROF, 100 Hz per thread; Linux), each sample tagged with the
// labels its goroutine runs under (Do).
#ifndef GORT_PPROF_H_
#define GORT_PPROF_H_

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gort::pprof {

// A set of profiler labels (Go's pprof.LabelSet (runtime/pprof/label.go:20)):
// key-value pairs, sorted by key, each key once.
class LabelSet {
 public:
  // The empty set.
  LabelSet() = default;
  // The pairs, sorted by key.
  const std::vector<std::pair<std::string, std::string>>& list() const {
    return list_;
  }
  // Adds key = value, replacing an earlier value of key.
  void Set(std::string key, std::string value);

 private:
  std::vector<std::pair<std::string, std::string>> list_;
};

// Returns the set of the key-value pairs kv (Go's pprof.Labels
// (runtime/pprof/label.go:80)); a later value of a key replaces an earlier one.
template <class... S>
LabelSet Labels(const S&... kv) {
  static_assert(sizeof...(S) % 2 == 0,
                "pprof::Labels: uneven number of arguments");
  LabelSet set;
  std::vector<std::string> args{std::string(kv)...};
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    set.Set(std::move(args[i]), std::move(args[i + 1]));
  }
  return set;
}

namespace internal {
// Sets the calling goroutine's labels to its own merged with a set for the
// scope's life (Go's Do (runtime/pprof/runtime.go:36) calls SetGoroutineLabels
// both ways).
class LabelScope {
 public:
  // Adds labels to the goroutine's; throws gort::Panic outside a goroutine.
  explicit LabelScope(const LabelSet& labels);
  // Restores the goroutine's labels from before.
  ~LabelScope();
  LabelScope(const LabelScope&) = delete;
  LabelScope& operator=(const LabelScope&) = delete;

 private:
  void* saved_;
};
}  // namespace internal

// Calls f with the calling goroutine's labels extended by labels (a key
// already set takes the new value), then restores them, also when f throws
// (Go's pprof.Do (runtime/pprof/runtime.go:36), with the goroutine in place of
// the context). Goroutines created inside f inherit the extended labels, and
// CPU samples and the goroutine profile (debug 1) carry them.
template <class F>
void Do(const LabelSet& labels, F&& f) {
  internal::LabelScope scope(labels);
  std::forward<F>(f)();
}

// Returns the value of label key on the calling goroutine, if set (Go's
// pprof.Label, read from the goroutine instead of a context).
std::optional<std::string> Label(std::string_view key);

// Starts the CPU profile (Go's pprof.StartCPUProfile
// (runtime/pprof/pprof.go:760)): StopCPUProfile writes it to out as a gzipped
// profile.proto. Returns false if a CPU profile is already running ("cpu
// profiling already in use") or the OS has no profiler, with the reason in *why
// when given. Throws gort::Panic outside a goroutine of a Run; out must outlive
// StopCPUProfile.
bool StartCPUProfile(std::ostream& out, std::string* why = nullptr);

// Stops the CPU profile, if one runs, and writes it (Go's
// pprof.StopCPUProfile): samples/count and cpu/nanoseconds per stack and
// label set, period 10 ms of CPU. A Run that ends stops the sampling; a
// StopCPUProfile after it still writes what was sampled.
void StopCPUProfile();

// Serves Go's /debug/pprof endpoints (net/http/pprof) over HTTP on address
// ("host:port"; port 0 picks one) from a goroutine, until Run ends: the
// index at /debug/pprof/, goroutine, block, mutex and threadcreate (?debug=N),
// profile?seconds=N (CPU) and trace?seconds=N (execution trace), so that
// `go tool pprof http://ADDR/debug/pprof/profile` works. Returns the bound
// address. The endpoints reveal the program's internals (stacks, function
// names, timings): bind them to loopback, or protect them. Throws
// gort::net::Error if it cannot listen.
std::string ListenAndServe(std::string_view address);

// Writes profile name to out as Go's Lookup
// (runtime/pprof/pprof.go:226)(name).WriteTo(out, debug) does: debug 0 a
// gzipped profile.proto, 1 text with a count per distinct stack, 2 (goroutine
// only) the dump of every goroutine as a Go panic prints it. Throws gort::Panic
// for an unknown name, or outside a Run.
void WriteProfile(std::string_view name, std::ostream& out, int debug = 0);

// Turns the block profile on (Go's runtime.SetBlockProfileRate (mprof.go:463)):
// on average one blocking event per rate nanoseconds spent blocked is sampled;
// 1 keeps every event, 0 or less turns the profile off. Callable anywhere.
void SetBlockProfileRate(int rate);

// Samples one in rate contended Mutex and RWMutex releases into the mutex
// profile (Go's runtime.SetMutexProfileFraction (mprof.go:533)); 0 turns it
// off, a negative rate only reports. Returns the previous rate.
int SetMutexProfileFraction(int rate);

}  // namespace gort::pprof

#endif  // GORT_PPROF_H_
