// runtime/proc_runq.cc: run queues (Go's proc.go: runqput, runqputslow,
// runqget, runqgrab, runqsteal, globrunqput*, globrunqget).
//
// Each P's local queue is a 256-slot ring. Only the owner writes the tail;
// the owner and thieves take from the head with a CAS, so the fast path
// takes no lock. runnext holds the goroutine just readied by the running
// one (a channel partner, a new goroutine): it runs next and inherits the
// time slice, which keeps ping-pong pairs on one P. When the ring is full
// half of it moves to the global queue, which sched.lock protects.
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "trace.h"

namespace gort::runtime {

namespace {

// runqputslow mirrors Go's runqputslow: move half the full ring plus gp to
// the global queue in one batch.
bool runqputslow(P* pp, G* gp, std::uint32_t h, std::uint32_t t) {
  G* batch[kRunqSize / 2 + 1];
  std::uint32_t n = (t - h) / 2;
  if (n != kRunqSize / 2) throw_("runqputslow: queue is not full");
  for (std::uint32_t i = 0; i < n; i++) {
    batch[i] = pp->runq[(h + i) % kRunqSize].load(std::memory_order_relaxed);
  }
  if (!pp->runqhead.compare_exchange_strong(h, h + n,
                                            std::memory_order_release)) {
    return false;
  }
  batch[n] = gp;
  for (std::uint32_t i = 0; i < n; i++) batch[i]->schedlink = batch[i + 1];
  lock(&sched.lock);
  globrunqputbatch(batch[0], batch[n], static_cast<std::int32_t>(n + 1));
  unlock(&sched.lock);
  return true;
}

// runqgrab mirrors Go's runqgrab: take half of pp's queue into batch.
std::uint32_t runqgrab(P* pp, std::atomic<G*>* batch, std::uint32_t batchHead,
                       bool stealRunNextG) {
  for (;;) {
    std::uint32_t h = pp->runqhead.load(std::memory_order_acquire);
    std::uint32_t t = pp->runqtail.load(std::memory_order_acquire);
    std::uint32_t n = t - h;
    n = n - n / 2;
    if (n == 0) {
      if (stealRunNextG) {
        G* next = pp->runnext.load(std::memory_order_acquire);
        if (next != nullptr) {
          // pp may be about to run next itself (it just readied it and is
          // going to block): give it a moment before taking it (Go sleeps
          // 3 us here, one of usleep's callers).
          if (pp->status.load(std::memory_order_acquire) == _Prunning) {
            tracedUsleep(3);
          }
          if (!pp->runnext.compare_exchange_strong(next, nullptr)) continue;
          batch[batchHead % kRunqSize].store(next, std::memory_order_relaxed);
          return 1;
        }
      }
      return 0;
    }
    if (n > kRunqSize / 2) continue;  // read an inconsistent h and t
    for (std::uint32_t i = 0; i < n; i++) {
      G* g = pp->runq[(h + i) % kRunqSize].load(std::memory_order_relaxed);
      batch[(batchHead + i) % kRunqSize].store(g, std::memory_order_relaxed);
    }
    if (pp->runqhead.compare_exchange_strong(h, h + n,
                                             std::memory_order_release)) {
      return n;
    }
  }
}

}  // namespace

// runqput mirrors Go's runqput.
void runqput(P* pp, G* gp, bool next) {
  if (next) {
    G* old = pp->runnext.exchange(gp, std::memory_order_acq_rel);
    if (old == nullptr) return;
    gp = old;  // kick the old runnext to the tail
  }
  for (;;) {
    std::uint32_t h = pp->runqhead.load(std::memory_order_acquire);
    std::uint32_t t = pp->runqtail.load(std::memory_order_relaxed);
    if (t - h < kRunqSize) {
      pp->runq[t % kRunqSize].store(gp, std::memory_order_relaxed);
      pp->runqtail.store(t + 1, std::memory_order_release);
      return;
    }
    if (runqputslow(pp, gp, h, t)) return;
  }
}

// runqget mirrors Go's runqget.
G* runqget(P* pp, bool* inheritTime) {
  G* next = pp->runnext.load(std::memory_order_relaxed);
  if (next != nullptr &&
      pp->runnext.compare_exchange_strong(next, nullptr,
                                          std::memory_order_acq_rel)) {
    *inheritTime = true;
    return next;
  }
  for (;;) {
    std::uint32_t h = pp->runqhead.load(std::memory_order_acquire);
    std::uint32_t t = pp->runqtail.load(std::memory_order_relaxed);
    if (t == h) return nullptr;
    G* gp = pp->runq[h % kRunqSize].load(std::memory_order_relaxed);
    if (pp->runqhead.compare_exchange_strong(h, h + 1,
                                             std::memory_order_release)) {
      *inheritTime = false;
      return gp;
    }
  }
}

// runqempty mirrors Go's runqempty: a consistent read of head, tail and
// runnext.
bool runqempty(P* pp) {
  for (;;) {
    std::uint32_t head = pp->runqhead.load(std::memory_order_acquire);
    std::uint32_t tail = pp->runqtail.load(std::memory_order_acquire);
    G* next = pp->runnext.load(std::memory_order_acquire);
    if (tail == pp->runqtail.load(std::memory_order_acquire)) {
      return head == tail && next == nullptr;
    }
  }
}

// runqsteal mirrors Go's runqsteal: grab half of p2's queue onto pp's.
G* runqsteal(P* pp, P* p2, bool stealRunNextG) {
  std::uint32_t t = pp->runqtail.load(std::memory_order_relaxed);
  std::uint32_t n = runqgrab(p2, pp->runq, t, stealRunNextG);
  if (n == 0) return nullptr;
  traceSteal(p2, n);
  sched.steals.fetch_add(1, std::memory_order_relaxed);
  sched.stolen.fetch_add(n, std::memory_order_relaxed);
  n--;
  G* gp = pp->runq[(t + n) % kRunqSize].load(std::memory_order_relaxed);
  if (n == 0) return gp;
  std::uint32_t h = pp->runqhead.load(std::memory_order_acquire);
  if (t - h + n >= kRunqSize) throw_("runqsteal: runq overflow");
  pp->runqtail.store(t + n, std::memory_order_release);
  return gp;
}

// globrunqput mirrors Go's globrunqput: a batch of one (Go writes the same
// list append out twice; here the batch form is the one copy).
void globrunqput(G* gp) { globrunqputbatch(gp, gp, 1); }

// globrunqputhead mirrors Go's globrunqputhead.
void globrunqputhead(G* gp) {
  gp->schedlink = sched.runqhead;
  sched.runqhead = gp;
  if (sched.runqtail == nullptr) sched.runqtail = gp;
  sched.runqsize.fetch_add(1, std::memory_order_release);
}

// globrunqputbatch mirrors Go's globrunqputbatch.
void globrunqputbatch(G* head, G* tail, std::int32_t n) {
  tail->schedlink = nullptr;
  if (sched.runqtail != nullptr) {
    sched.runqtail->schedlink = head;
  } else {
    sched.runqhead = head;
  }
  sched.runqtail = tail;
  sched.runqsize.fetch_add(n, std::memory_order_release);
}

// globrunqget mirrors Go's globrunqget: take a fair share of the global
// queue, return one and put the rest on pp's local queue.
G* globrunqget(P* pp, std::int32_t max) {
  std::int32_t size = sched.runqsize.load(std::memory_order_relaxed);
  if (size == 0) return nullptr;
  std::int32_t n = size / gomaxprocs.load() + 1;
  if (n > size) n = size;
  if (max > 0 && n > max) n = max;
  if (n > kRunqSize / 2) n = kRunqSize / 2;
  sched.runqsize.fetch_sub(n, std::memory_order_release);
  auto pop = []() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
    G* gp = sched.runqhead;
    sched.runqhead = gp->schedlink;
    if (sched.runqhead == nullptr) sched.runqtail = nullptr;
    return gp;
  };
  G* gp = pop();
  for (n--; n > 0; n--) runqput(pp, pop(), false);
  return gp;
}

// runqdrain moves pp's local queue and runnext to the global queue (Go's
// procresize does this for a destroyed P).
void runqdrain(P* pp) {
  bool inherit;
  while (G* gp = runqget(pp, &inherit)) globrunqputhead(gp);
}

}  // namespace gort::runtime
