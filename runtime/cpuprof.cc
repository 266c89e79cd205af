// runtime/cpuprof.cc: CPU profiling (Go's cpuprof.go, sigprof in proc.go,
// and the lock-free buffer of profbuf.go).
//
// Every M is armed to be sampled every 10 ms of CPU its thread uses, in one of
// the OS layer's two shapes (os/cpuprof_os.h). On Linux a timer on the
// thread's own CPU clock sends it SIGPROF, and the handler, sigprof, samples
// the thread it runs on; it must be async-signal-safe. On Windows the OS
// layer's sampling thread suspends the M's thread, and sigprofSuspended
// reads what the M runs while it stays suspended (Go's profilem
// (os_windows.go:1217)); the stack is walked after it resumes (the OS layer
// copies it first), and sigprofWalked publishes the sample. Either way no
// lock is taken and nothing allocated: a slot of a preallocated ring is
// claimed with one compare-and-swap on its state, filled with the stack
// (bounded by the goroutine's stack when a goroutine was running) and a
// counted reference to the goroutine's labels (proflabel.h), and published
// with a release store. A full ring counts the sample as lost, as Go's
// profBuf (profbuf.go:87) does.
//
// The reader (pkg/pprof's profile writer goroutine, as Go's profileWriter
// (runtime/pprof/pprof.go:794)) drains full slots every few tens of
// milliseconds into a map of stacks and label sets (copying the labels and
// dropping the reference), and arms the Ms started since the last round: gort's
// Ms do not arm themselves (Go's execute (proc.go:2517) compares the M's
// profiling rate on every switch; gort keeps that off the scheduler's path).
#include "cpuprof.h"

#include <atomic>

#include "lock.h"
#include "os/cpuprof_os.h"
#include "proc.h"
#include "proflabel.h"

namespace gort::runtime {

namespace {

constexpr int kMaxStack = 64;           // frames kept per sample
constexpr std::uint32_t kSlots = 1024;  // ~10 s of one thread at 100 Hz
constexpr int kProbe = 8;               // slots a handler tries before losing

enum : std::uint32_t { kEmpty, kWriting, kFull };

// profSlot: one sample in the ring; state says who owns the rest.
struct profSlot {
  std::atomic<std::uint32_t> state{kEmpty};
  int n = 0;
  labelMap* labels = nullptr;
  std::uintptr_t pcs[kMaxStack];
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "the SIGPROF handler uses only lock-free atomics");

profSlot ring[kSlots];
std::atomic<std::uint32_t> ringNext{0};  // where the next handler starts
std::atomic<bool> cpuprofOn{false};
std::atomic<int> sigprofActive{0};  // handlers between entry and exit
std::atomic<std::uint64_t> cpuprofLost{0};

mutex cpuprofLock;
bool cpuprofStarted ABSL_GUARDED_BY(cpuprofLock) = false;
// The Ms armed in this profile, and their timers.
std::vector<std::pair<M*, std::intptr_t>> armed ABSL_GUARDED_BY(cpuprofLock);

// claimSlot: an empty ring slot, now the caller's to fill, or nullptr (the
// sample is lost: the reader is behind).
profSlot* claimSlot() {
  std::uint32_t start = ringNext.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < kProbe; i++) {
    profSlot* c = &ring[(start + i) % kSlots];
    std::uint32_t e = kEmpty;
    if (c->state.compare_exchange_strong(e, kWriting,
                                         std::memory_order_acquire)) {
      return c;
    }
  }
  cpuprofLost.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

// sigprof mirrors Go's sigprof (proc.go:4510): one sample of the thread the
// signal interrupted. Go walks with its own tables; gort's walk is the
// platform unwinder's, and a sample on g0 (scheduler, sysmon) is walked
// unbounded on the thread's stack instead of being named _System.
void sigprof() {
  sigprofActive.fetch_add(1, std::memory_order_seq_cst);
  if (cpuprofOn.load(std::memory_order_seq_cst)) {
    if (profSlot* s = claimSlot()) {
      // The G on this thread cannot run elsewhere, nor drop its labels,
      // while its thread is in this handler.
      G* gp = getcurg();
      const char* lo = nullptr;
      const char* hi = nullptr;
      labelMap* l = nullptr;
      if (gp != nullptr && gp->stack.base != nullptr) {
        lo = static_cast<const char*>(gp->stack.base) + gp->stack.guard;
        hi = static_cast<const char*>(gp->stack.base) + gp->stack.size;
        l = gp->labels.load(std::memory_order_relaxed);
      }
      s->n = os::tracebackSignal(lo, hi, s->pcs, kMaxStack);
      labelRetain(l);
      s->labels = l;
      s->state.store(kFull, std::memory_order_release);
    }
  }
  sigprofActive.fetch_sub(1, std::memory_order_seq_cst);
}

// sigprofSuspended mirrors Go's profilem (os_windows.go:1217) and gFromSP:
// with mp's thread suspended at sp, the sample's goroutine is mp's curg when
// sp is on its stack (else the thread is on g0, or switching: no labels).
// Only mp's thread sets its curg and its G's labels, so both hold still;
// the labels get their sample's reference before the thread resumes.
void* sigprofSuspended(void* arg, std::uintptr_t sp, std::uintptr_t** pcs,
                       int* max) {
  sigprofActive.fetch_add(1, std::memory_order_seq_cst);
  profSlot* s = nullptr;
  if (cpuprofOn.load(std::memory_order_seq_cst)) s = claimSlot();
  if (s == nullptr) {
    sigprofActive.fetch_sub(1, std::memory_order_seq_cst);
    return nullptr;
  }
  M* mp = static_cast<M*>(arg);
  G* gp = mp->curg.load(std::memory_order_relaxed);
  labelMap* l = nullptr;
  if (gp != nullptr && gp->stack.base != nullptr) {
    auto lo = reinterpret_cast<std::uintptr_t>(gp->stack.base);
    if (sp > lo && sp < lo + gp->stack.size) {
      l = gp->labels.load(std::memory_order_relaxed);
    }
  }
  labelRetain(l);
  s->labels = l;
  *pcs = s->pcs;
  *max = kMaxStack;
  return s;
}

// sigprofWalked publishes the sample sigprofSuspended began (sigprof's end).
void sigprofWalked(void* cookie, int n) {
  auto* s = static_cast<profSlot*>(cookie);
  s->n = n;
  s->state.store(kFull, std::memory_order_release);
  sigprofActive.fetch_sub(1, std::memory_order_seq_cst);
}

// armNew arms a timer on each M not armed yet whose thread has started.
void armNew()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(cpuprofLock) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<std::pair<M*, std::int64_t>> fresh;
  lock(&sched.lock);
  for (M* mp = allm; mp != nullptr; mp = mp->alllink) {
    std::int64_t tid = mp->tid.load(std::memory_order_relaxed);
    if (tid == 0 || mp->exited.load(std::memory_order_acquire)) continue;
    bool known = false;
    for (const auto& a : armed) known |= a.first == mp;
    if (!known) fresh.emplace_back(mp, tid);
  }
  unlock(&sched.lock);
  for (const auto& [mp, tid] : fresh) {
    // -1: the thread exited meanwhile; remembered so it is not retried.
    armed.emplace_back(mp, os::threadProfTimerStart(tid, cpuprofPeriod, mp));
  }
}

// disarm deletes every timer of the profile.
void disarm() ABSL_EXCLUSIVE_LOCKS_REQUIRED(cpuprofLock) {
  for (const auto& a : armed) {
    if (a.second != -1) os::threadProfTimerStop(a.second);
  }
  armed.clear();
}

}  // namespace

bool cpuprofStart(const char** why) {
  lock(&cpuprofLock);
  bool ok = false;
  if (cpuprofStarted) {
    *why = "cpu profiling already in use";
  } else if (os::installProfHandler({sigprof, sigprofSuspended, sigprofWalked},
                                    why)) {
    cpuprofStarted = true;
    cpuprofLost.store(0, std::memory_order_relaxed);
    cpuprofOn.store(true, std::memory_order_seq_cst);
    armNew();
    ok = true;
  }
  unlock(&cpuprofLock);
  return ok;
}

void cpuprofArm() {
  lock(&cpuprofLock);
  if (cpuprofStarted) armNew();
  unlock(&cpuprofLock);
}

int cpuprofDrain(cpuprofCounts* counts) {
  int n = 0;
  for (profSlot& s : ring) {
    if (s.state.load(std::memory_order_acquire) != kFull) continue;
    cpuprofKey key;
    key.first.assign(s.pcs, s.pcs + s.n);
    if (s.labels != nullptr) key.second = s.labels->list;
    labelRelease(s.labels);
    s.labels = nullptr;
    s.state.store(kEmpty, std::memory_order_release);
    (*counts)[std::move(key)]++;
    n++;
  }
  return n;
}

std::uint64_t cpuprofStop() {
  lock(&cpuprofLock);
  if (cpuprofStarted) {
    cpuprofOn.store(false, std::memory_order_seq_cst);
    disarm();
    // A handler that saw the profile on finishes its slot; later signals
    // (already pending) see it off. (The sampler shape's disarm waited for
    // a sample in progress.)
    while (sigprofActive.load(std::memory_order_seq_cst) != 0) os::osyield();
    cpuprofStarted = false;
  }
  unlock(&cpuprofLock);
  return cpuprofLost.load(std::memory_order_relaxed);
}

void cpuprofRunEnd() { cpuprofStop(); }

}  // namespace gort::runtime
