// runtime/mprof.cc: the block profile's buckets (Go's mprof.go: blockevent,
// blocksampled, saveblockevent, BlockProfile); see mprof.h.
//
// Buckets are keyed by the woken goroutine's stack (walked on it as it
// resumes, so the frames are the call that blocked) in one map under
// mprofLock; Go hashes into its own bucket table. Sampling is Go's: a wait
// at least the rate long is always kept, a shorter one with probability
// wait/rate, and then counted rate/wait times with rate nanoseconds, to
// remove the bias (Go 1.19's saveblockevent (mprof.go:500)).
#include "mprof.h"

#include <map>

#include "lock.h"
#include "os/traceback_os.h"
#include "proc.h"

namespace gort::runtime {

std::atomic<std::int64_t> blockprofilerate{0};
std::atomic<std::int64_t> mutexprofilerate{0};

namespace {

constexpr int kMaxStack = 32;

mutex mprofLock;
using bucketMap = std::map<std::vector<std::uintptr_t>, blockRecord>;
bucketMap* blockBuckets ABSL_GUARDED_BY(mprofLock) = nullptr;
bucketMap* mutexBuckets ABSL_GUARDED_BY(mprofLock) = nullptr;

// blocksampled mirrors Go's blocksampled (mprof.go:493).
bool blocksampled(std::int64_t cycles, std::int64_t rate) {
  if (rate <= 0) return false;
  return rate <= cycles ||
         static_cast<std::int64_t>(fastrand()) % rate <= cycles;
}

// saveblockevent mirrors Go's saveblockevent (mprof.go:500).
void saveblockevent(G* gp, std::int64_t cycles, std::int64_t rate,
                    bool mutexProfile) {
  std::uintptr_t pcs[kMaxStack];
  char* lo = static_cast<char*>(gp->stack.base) + gp->stack.guard;
  char* hi = static_cast<char*>(gp->stack.base) + gp->stack.size;
  int n =
      gp->stack.base != nullptr ? os::tracebackSelf(lo, hi, pcs, kMaxStack) : 0;
  std::vector<std::uintptr_t> stk(pcs, pcs + (n > 0 ? n : 0));
  lock(&mprofLock);
  bucketMap*& m = mutexProfile ? mutexBuckets : blockBuckets;
  if (m == nullptr) m = new bucketMap;
  blockRecord& b = (*m)[stk];
  if (b.stk.empty()) b.stk = stk;
  if (!mutexProfile && cycles < rate) {
    b.count += static_cast<double>(rate) / static_cast<double>(cycles);
    b.cycles += rate;
  } else {
    b.count += 1;
    b.cycles += cycles;
  }
  unlock(&mprofLock);
}

}  // namespace

// blockeventSlow mirrors Go's blockevent (mprof.go:480) for gp's last park.
void blockeventSlow(G* gp) {
  std::int64_t end = gp->releasetime != 0 ? gp->releasetime : os::nanotime();
  std::int64_t cycles = end - gp->blocktime;
  gp->blocktime = 0;
  gp->releasetime = 0;
  if (cycles <= 0) cycles = 1;
  std::int64_t rate = blockprofilerate.load(std::memory_order_relaxed);
  if (blocksampled(cycles, rate)) saveblockevent(gp, cycles, rate, false);
}

void mutexevent(std::int64_t cycles) {
  if (cycles < 0) cycles = 0;
  std::int64_t rate = mutexprofilerate.load(std::memory_order_relaxed);
  G* gp = getcurg();
  if (rate > 0 && gp != nullptr &&
      static_cast<std::int64_t>(fastrand()) % rate == 0) {
    saveblockevent(gp, cycles, rate, true);
  }
}

std::vector<blockRecord> mutexProfile() {
  std::vector<blockRecord> out;
  lock(&mprofLock);
  if (mutexBuckets != nullptr) {
    for (const auto& [stk, b] : *mutexBuckets) out.push_back(b);
  }
  unlock(&mprofLock);
  return out;
}

std::vector<blockRecord> blockProfile() {
  std::vector<blockRecord> out;
  lock(&mprofLock);
  if (blockBuckets != nullptr) {
    for (const auto& [stk, b] : *blockBuckets) out.push_back(b);
  }
  unlock(&mprofLock);
  return out;
}

}  // namespace gort::runtime
