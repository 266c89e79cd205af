// runtime/proc_runq.cc: run queues (Go's proc.go: runqput, runqputslow,
// runqget, runqgrab, runqsteal, globrunqput*, globrunqget).
//
// Each P's local queue is a 256-slot ring. Only the owner writes the tail;
// the owner and thieves take from the head with a CAS, so the fast path
// takes no lock. runnext holds the goroutine just readied by the running
// one (a channel partner, a new goroutine): it runs next and inherits the
// time slice, which keeps ping-pong pairs on one P. When the ring is full
// half of it moves to the global queue, which sched.lock protects. Go links
// the global queue through the Gs; gort keeps chunks of G pointers
// (gQueueChunk), so a batch is taken without touching the Gs.
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "trace.h"

namespace gort::runtime {

namespace {

// runqputslow mirrors Go's runqputslow (proc.go:5820): move half the full ring
// plus gp to the global queue in one batch (as an array: gort's global queue
// does not link the Gs).
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
  lock(&sched.lock);
  globrunqputarray(batch, static_cast<std::int32_t>(n + 1));
  unlock(&sched.lock);
  return true;
}

// globrunqsizeAdd: sched.runqsize changes only under sched.lock (a plain
// int32 in Go); it is atomic so that it can be read without the lock, and
// written by a load and a store: no locked instruction.
inline void globrunqsizeAdd(std::int32_t d)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
  sched.runqsize.store(sched.runqsize.load(std::memory_order_relaxed) + d,
                       std::memory_order_release);
}

// gQueueChunkGet: a spare chunk, or a new one (the queue's high-water mark
// is kept until Run ends: no allocation in steady state), empty at slot
// `at`, linked before next.
gQueueChunk* gQueueChunkGet(std::int32_t at, gQueueChunk* next)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
  gQueueChunk* c = sched.runqfree;
  if (c != nullptr) {
    sched.runqfree = c->next;
  } else {
    c = new gQueueChunk;
  }
  c->next = next;
  c->head = c->tail = at;
  return c;
}

// globrunqgrow links a chunk at the global queue's tail and returns it. Out
// of line: the append stays a leaf.
__attribute__((noinline)) gQueueChunk* globrunqgrow()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
  gQueueChunk* c = gQueueChunkGet(0, nullptr);
  if (sched.runqtail == nullptr) {
    sched.runqhead = c;
  } else {
    sched.runqtail->next = c;
  }
  sched.runqtail = c;
  return c;
}

// globrunqappend adds gp at the global queue's tail.
inline void globrunqappend(G* gp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
  gQueueChunk* c = sched.runqtail;
  if (c == nullptr || c->tail == kGQueueChunkSize) [[unlikely]] {
    c = globrunqgrow();
  }
  c->g[c->tail++] = gp;
}

// globrunqretire moves the emptied head chunk c, which has a successor, to
// the spares.
__attribute__((noinline)) void globrunqretire(gQueueChunk* c)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
  sched.runqhead = c->next;
  c->next = sched.runqfree;
  sched.runqfree = c;
}

// globrunqpop takes the global queue's head; the queue is not empty. The
// last chunk stays in place when it empties, rewound, so that a queue that
// keeps going from empty to one G and back (Gosched) never changes chunks.
inline G* globrunqpop() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
  gQueueChunk* c = sched.runqhead;
  G* gp = c->g[c->head++];
  if (c->head == c->tail) {
    if (c->next == nullptr) {
      c->head = c->tail = 0;
    } else {
      globrunqretire(c);
    }
  }
  return gp;
}

// runqgrab mirrors Go's runqgrab (proc.go:5963): take half of pp's queue into
// batch.
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
          // going to block): give it a moment before taking it. Go sleeps
          // 3 us here on Linux and yields on Windows, OpenBSD and NetBSD;
          // gort yields everywhere: in a VM a 3 us nanosleep costs the thief
          // microseconds of CPU (see "Differences from Go").
          if (pp->status.load(std::memory_order_acquire) == _Prunning) {
            os::osyield();
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

// runqput mirrors Go's runqput (proc.go:5785).
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

// runqget mirrors Go's runqget (proc.go:5897).
G* runqget(P* pp, bool* inheritTime) {
  G* next = pp->runnext.load(std::memory_order_relaxed);
  if (next != nullptr && pp->runnext.compare_exchange_strong(
                             next, nullptr, std::memory_order_acq_rel)) {
    *inheritTime = true;
    return next;
  }
  *inheritTime = false;
  return runqgethead(pp);
}

// runqgethead: the second half of Go's runqget (proc.go:5897), the head of
// pp's queue, passing over runnext.
G* runqgethead(P* pp) {
  for (;;) {
    std::uint32_t h = pp->runqhead.load(std::memory_order_acquire);
    std::uint32_t t = pp->runqtail.load(std::memory_order_relaxed);
    if (t == h) return nullptr;
    G* gp = pp->runq[h % kRunqSize].load(std::memory_order_relaxed);
    if (pp->runqhead.compare_exchange_strong(h, h + 1,
                                             std::memory_order_release)) {
      return gp;
    }
  }
}

// runqempty mirrors Go's runqempty (proc.go:5754): a consistent read of head,
// tail and runnext.
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

// runqsteal mirrors Go's runqsteal (proc.go:6018): grab half of p2's queue onto
// pp's.
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

// globrunqput mirrors Go's globrunqput (proc.go:5568).
void globrunqput(G* gp) {
  globrunqappend(gp);
  globrunqsizeAdd(1);
}

// globrunqputhead mirrors Go's globrunqputhead (proc.go:5580).
void globrunqputhead(G* gp) {
  gQueueChunk* c = sched.runqhead;
  if (c == nullptr || c->head == 0) {
    c = gQueueChunkGet(kGQueueChunkSize, c);  // filled from the end
    sched.runqhead = c;
    if (sched.runqtail == nullptr) sched.runqtail = c;
  }
  c->g[--c->head] = gp;
  globrunqsizeAdd(1);
}

// globrunqputbatch mirrors Go's globrunqputbatch (proc.go:5593): the n Gs
// linked from head to tail through schedlink go to the tail.
void globrunqputbatch(G* head, G* tail, std::int32_t n) {
  tail->schedlink = nullptr;
  for (G* gp = head; gp != nullptr;) {
    G* next = gp->schedlink;
    gp->schedlink = nullptr;
    globrunqappend(gp);
    gp = next;
  }
  globrunqsizeAdd(n);
}

// globrunqputarray: globrunqputbatch for Gs in an array (runqputslow's).
void globrunqputarray(G* const* gs, std::int32_t n) {
  for (std::int32_t i = 0; i < n; i++) globrunqappend(gs[i]);
  globrunqsizeAdd(n);
}

// globrunqget mirrors Go's globrunqget (proc.go:5603): take a fair share of the
// global queue, return one and put the rest on pp's local queue. Unlike Go it
// reads no G while it holds sched.lock, and it prefetches each G it takes:
// the queue can hold hundreds of thousands of cold Gs (Skynet), and in Go
// the walk through g.schedlink is a cache miss per G under the lock.
G* globrunqget(P* pp, std::int32_t max) {
  std::int32_t size = sched.runqsize.load(std::memory_order_relaxed);
  if (size == 0) return nullptr;
  std::int32_t n = size / gomaxprocs.load() + 1;
  if (n > size) n = size;
  if (max > 0 && n > max) n = max;
  if (n > kRunqSize / 2) n = kRunqSize / 2;
  globrunqsizeAdd(-n);
  G* gp = globrunqpop();
  __builtin_prefetch(gp, 1);
  for (n--; n > 0; n--) {
    G* next = globrunqpop();
    __builtin_prefetch(next, 1);
    runqput(pp, next, false);
  }
  return gp;
}

// globrunqfree releases the global queue's chunks, queued and spare, when
// Run ends (freeAll).
void globrunqfree() {
  for (gQueueChunk** list : {&sched.runqhead, &sched.runqfree}) {
    while (gQueueChunk* c = *list) {
      *list = c->next;
      delete c;
    }
  }
  sched.runqtail = nullptr;
  sched.runqsize.store(0, std::memory_order_relaxed);
}

// runqdrain moves pp's local queue and runnext to the global queue (Go's
// procresize does this for a destroyed P).
void runqdrain(P* pp) {
  bool inherit;
  while (G* gp = runqget(pp, &inherit)) globrunqputhead(gp);
}

}  // namespace gort::runtime
