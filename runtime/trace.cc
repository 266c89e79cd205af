// runtime/trace.cc: the execution tracer's buffers and its start and stop
// (Go's trace.go: StartTrace, StopTrace, traceEvent, traceBuf).
//
// Every M gets a buffer of its own the first time it records an event;
// events go there with no lock, as plain stores of fixed-size records into
// chunks of kChunkEvents. A chunk comes from a pool under traceLock only
// when the current one is full, so steady state allocates nothing per event.
// Threads that are not the runtime's (Run's own, before the first M) share
// one buffer under traceLock; they record a handful of events per Run.
//
// Stopping does not stop the world (Go does): each buffer has a busy flag,
// set by its writer around a record and checked against traceOn in the
// order store-busy / load-on (traceBusy: where the OS can fence other
// threads, the writer's half has no locked instruction and StopTrace
// fences). StopTrace clears traceOn, then waits until no
// buffer is busy; after that no writer touches a buffer until the next
// StartTrace, so the records can be read and the chunks returned to the pool.
// Records are stamped with cputicks, not nanotime (a third of the cost of a
// record on a thread just woken, under kvm-clock), and converted to
// nanotime when the trace stops.
// An event with a stack stores the stack's id in traceStackTab
// (trace_stack.h), interned as the event is written (Go's traceStackID
// (trace.go:784)): a stack seen before costs a hash and a lock-free lookup, no
// lock and no allocation, and a walk the thread's walk cache answered
// carries the id it got last time (traceStackID): not even that. Stopping reads
// the table with the buffers and then empties it. trace_go.cc writes the
// records and stacks in Go 1.19's format (what `go tool trace` reads),
// trace_json.cc the records as Chrome trace event JSON.
#include "trace.h"

#include <cstring>
#include <string>
#include <vector>

#include "gort/trace.h"
#include "os/os.h"
#include "os/traceback_os.h"
#include "proc.h"

namespace gort::runtime {

std::atomic<bool> traceOn{false};
// Whether events walk their stacks: only Go's format writes them.
std::atomic<bool> traceWalkStacks{false};
std::atomic<traceCapture*> traceCaptureForTest{nullptr};

std::string traceJSON(std::vector<traceRecord>& recs, std::int64_t start,
                      std::int64_t end, std::int64_t dropped);  // trace_json.cc

namespace {
// The stack ids of the trace running (the stackTab of Go's trace
// (trace.go:130)); emptied by
// StopTrace once no writer is busy. Never destroyed: an M may still record
// while the process exits.
traceStackTable& traceStackTab = *new traceStackTable;

constexpr int kChunkEvents = 4096;
constexpr std::int64_t kMaxChunks = 4096;  // 640 MiB of records at most
constexpr std::int64_t kPoolKeep = 16;     // chunks kept between traces
constexpr std::int64_t kPoolStart = 64;    // chunks ready at StartTrace
constexpr std::int64_t kPoolLow = 32;      // sysmon tops the pool up below this
constexpr int kMaxStack = 32;              // return addresses per event
}  // namespace

// traceChunk: a block of records; a buffer is a list of them, every chunk
// full but the tail (traceBuf::n says how far it is written).
struct traceChunk {
  traceChunk* next = nullptr;
  traceRecord ev[kChunkEvents];
};

// traceBuf mirrors Go's traceBuf (trace.go:178): one M's records (M::tracebuf).
// What a record reads and writes besides its slot (busy, tail, n) shares one
// cache line: on a thread just woken, possibly on another CPU, each line
// the record touches is a miss (docs/trace.md, "Cost").
struct traceBuf {
  std::atomic<bool> busy{false};
  int n = 0;  // records in tail
  traceChunk* head = nullptr;
  traceChunk* tail = nullptr;
  bool owned = false;           // held by an M of the current Run
  traceBuf* alllink = nullptr;  // every buffer ever made (never freed)
};

namespace {

mutex traceCtl;   // serializes StartTrace and StopTrace (outer)
mutex traceLock;  // the registry, the pool, the shared buffer (leaf)
traceBuf* allTraceBufs ABSL_GUARDED_BY(traceLock) = nullptr;
traceChunk* chunkPool ABSL_GUARDED_BY(traceLock) = nullptr;
std::int64_t poolChunks ABSL_GUARDED_BY(traceLock) = 0;
// poolChunks, read by sysmon without the lock (traceRefillPool).
std::atomic<std::int64_t> poolReady{0};
std::int64_t chunksInUse ABSL_GUARDED_BY(traceLock) = 0;
traceBuf sharedBuf ABSL_GUARDED_BY(traceLock);
std::atomic<std::int64_t> dropped{0};
std::string tracePath ABSL_GUARDED_BY(traceCtl);
TraceFormat traceFormat ABSL_GUARDED_BY(traceCtl) = TraceFormat::kGo;
std::int32_t traceStartProcs ABSL_GUARDED_BY(traceCtl) = 0;
bool traceFromEnv ABSL_GUARDED_BY(traceCtl) = false;
std::int64_t traceStart ABSL_GUARDED_BY(traceCtl) = 0;
// The clocks read together when the first trace started: records are
// stamped in cputicks, and StopTrace converts them to nanotime by the rate
// since then (the longer the baseline, the closer the rate).
std::int64_t calibNanos ABSL_GUARDED_BY(traceCtl) = 0;
std::int64_t calibTicks ABSL_GUARDED_BY(traceCtl) = 0;
// Counts the traces started; a usleep recorded late (traceUsleepSlow) is
// dropped if it was slept in another trace.
std::atomic<std::uint32_t> traceSeq{0};

// newChunkLocked takes a chunk from the pool (or the heap); nullptr past
// the cap.
traceChunk* newChunkLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(traceLock) {
  if (chunksInUse >= kMaxChunks) return nullptr;
  traceChunk* c = chunkPool;
  if (c != nullptr) {
    chunkPool = c->next;
    poolChunks--;
    poolReady.store(poolChunks, std::memory_order_relaxed);
  } else {
    c = new traceChunk;
  }
  chunksInUse++;
  c->next = nullptr;
  return c;
}

// append stores r at the end of b: b's owner M calls it without traceLock,
// threads outside the runtime with it (locked) for the shared buffer.
void append(traceBuf* b, const traceRecord& r,
            bool locked) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (b->tail == nullptr || b->n == kChunkEvents) {
    if (!locked) lock(&traceLock);
    traceChunk* c = newChunkLocked();
    if (!locked) unlock(&traceLock);
    if (c == nullptr) {
      dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (b->tail == nullptr) {
      b->head = c;
    } else {
      b->tail->next = c;
    }
    b->tail = c;
    b->n = 0;
  }
  b->tail->ev[b->n++] = r;
}

// acquireBuf gives the calling M a buffer no M of this Run holds.
traceBuf* acquireBuf() {
  lock(&traceLock);
  traceBuf* b = nullptr;
  for (traceBuf* x = allTraceBufs; x != nullptr; x = x->alllink) {
    if (!x->owned) {
      b = x;
      break;
    }
  }
  if (b == nullptr) {
    b = new traceBuf;
    b->alllink = allTraceBufs;
    allTraceBufs = b;
  }
  b->owned = true;
  unlock(&traceLock);
  return b;
}

traceRecord makeRecord(M* mp, traceEv ev, std::int64_t g, std::int64_t a0,
                       std::int64_t a1, std::uint8_t reason,
                       const traceStamp* at = nullptr) {
  traceRecord r;
  r.g = g;
  r.a0 = a0;
  r.a1 = a1;
  r.m = mp != nullptr ? static_cast<std::int32_t>(mp->id) : -1;
  if (at != nullptr) {  // stamped where it happened
    r.ts = at->ts;
    r.p = at->p;
  } else {
    r.ts = os::cputicks();  // converted by toNanos when the trace stops
    r.p = mp != nullptr && mp->p != nullptr
              ? static_cast<std::int16_t>(mp->p->id)
              : std::int16_t{-1};
  }
  r.ev = ev;
  r.reason = reason;
  r.stk = 0;
  return r;
}

// poolPush adds a chunk whose pages are touched (a fresh one written over,
// or one drained) to the pool.
void poolPush(traceChunk* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(traceLock) {
  c->next = chunkPool;
  chunkPool = c;
  poolChunks++;
  poolReady.store(poolChunks, std::memory_order_relaxed);
}

// drain moves b's records to out and its chunks to the pool; b must not be
// written meanwhile (traceOn is false and b is not busy).
void drain(traceBuf* b, std::vector<traceRecord>* out)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(traceLock) {
  for (traceChunk* c = b->head; c != nullptr;) {
    traceChunk* next = c->next;
    out->insert(out->end(), c->ev,
                c->ev + (c == b->tail ? b->n : kChunkEvents));
    chunksInUse--;
    if (poolChunks < kPoolKeep) {
      poolPush(c);
    } else {
      delete c;
    }
    c = next;
  }
  b->head = b->tail = nullptr;
  b->n = 0;
}

// newTouchedChunk allocates a chunk and touches every page of it, so the
// records written to it later take no page fault.
traceChunk* newTouchedChunk() {
  traceChunk* c = new traceChunk;
  std::memset(static_cast<void*>(c->ev), 0, sizeof c->ev);
  return c;
}

// prefaultPool fills the pool to kPoolStart chunks (12 MiB), each touched:
// a chunk's first records would otherwise take a page fault every 85 records
// on the traced goroutines' own paths, which cost ChanToSyscallPing +15 %
// traced as JSON in a VM (docs/notes/trace-cost-records.md). Past them, sysmon
// keeps the pool topped up (traceRefillPool).
void prefaultPool() {
  lock(&traceLock);
  while (poolChunks < kPoolStart) poolPush(newTouchedChunk());
  unlock(&traceLock);
}

// clockPair reads nanotime and cputicks together: of three tries, the one
// whose nanotime read took the fewest ticks (a thread preempted between the
// two reads would skew the conversion's rate), stamped at its middle.
void clockPair(std::int64_t* nanos, std::int64_t* ticks) {
  std::int64_t best = -1;
  for (int i = 0; i < 3; i++) {
    std::int64_t t0 = os::cputicks();
    std::int64_t n = os::nanotime();
    std::int64_t t1 = os::cputicks();
    if (best < 0 || t1 - t0 < best) {
      best = t1 - t0;
      *nanos = n;
      *ticks = t0 + (t1 - t0) / 2;
    }
  }
}

// toNanos converts recs' stamps (and a usleep's length) from cputicks to
// nanotime, by the rate of the two clocks from the first trace's start to
// (endNanos, endTicks), read together as this trace stopped; no stamp falls
// before start (another CPU's counter may run a little behind).
void toNanos(std::vector<traceRecord>* recs, std::int64_t start,
             std::int64_t endNanos, std::int64_t endTicks)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(traceCtl) {
  double rate = 1;
  if (endTicks > calibTicks && endNanos > calibNanos) {
    rate = static_cast<double>(endNanos - calibNanos) /
           static_cast<double>(endTicks - calibTicks);
  }
  for (traceRecord& r : *recs) {
    r.ts = endNanos - static_cast<std::int64_t>(
                          static_cast<double>(endTicks - r.ts) * rate);
    if (r.ts < start) r.ts = start;
    if (r.ev == traceEv::Usleep) {
      r.a1 = static_cast<std::int64_t>(static_cast<double>(r.a1) * rate);
    }
  }
}

bool startTrace(const std::string& path, TraceFormat format, bool fromEnv)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(traceCtl) {
  if (traceOn.load()) return false;
  tracePath = path;
  traceFormat = format;
  traceWalkStacks.store(format == TraceFormat::kGo, std::memory_order_relaxed);
  traceStartProcs = gomaxprocs.load();
  traceFromEnv = fromEnv;
  prefaultPool();
  traceStart = os::nanotime();
  if (calibTicks == 0) clockPair(&calibNanos, &calibTicks);
  traceSeq.fetch_add(1);
  dropped.store(0);
  traceOn.store(true);  // seq_cst: pairs with the writers' busy flags
  return true;
}

// stopTrace mirrors Go's StopTrace (trace.go:316): collect every buffer and
// write the file.
bool stopTrace() ABSL_EXCLUSIVE_LOCKS_REQUIRED(traceCtl) {
  if (!traceOn.load()) return false;
  traceOn.store(false);
  // The writers' half of the handshake was a plain store and load: order
  // them for it (traceBusy).
  if (fenceLight) os::processFence(os::FenceFor::kTrace);
  std::int64_t end = 0;
  std::int64_t endTicks = 0;
  clockPair(&end, &endTicks);
  lock(&traceLock);
  std::vector<traceBuf*> bufs;
  for (traceBuf* b = allTraceBufs; b != nullptr; b = b->alllink)
    bufs.push_back(b);
  unlock(&traceLock);
  for (traceBuf* b : bufs) {
    while (b->busy.load()) os::osyield();
  }
  std::vector<traceRecord> recs;
  lock(&traceLock);
  for (traceBuf* b : bufs) drain(b, &recs);
  drain(&sharedBuf, &recs);
  unlock(&traceLock);
  toNanos(&recs, traceStart, end, endTicks);
  traceStacks stacks = traceStackTab.dump();
  traceStackTab.reset();
  if (traceCapture* c = traceCaptureForTest.load()) {
    c->recs = recs;
    c->stacks = stacks;
    c->start = traceStart;
    c->end = end;
    c->procs = traceStartProcs;
  }
  std::string data =
      traceFormat == TraceFormat::kGo
          ? traceGo(recs, stacks, traceStart, end, traceStartProcs)
          : traceJSON(recs, traceStart, end, dropped.load());
  bool ok = os::writeFile(tracePath.c_str(), data.data(), data.size());
  if (!ok) {
    std::string msg = "gort: cannot write trace to " + tracePath + "\n";
    os::writeErr(msg.data(), msg.size());
  }
  return ok;
}

// traceBusy marks b busy and says whether the trace still runs: a Dekker
// handshake with stopTrace, which clears traceOn and then waits for the busy
// flags. Under fenceLight (lock.h) the writer's half is a plain store and
// load, stopTrace fencing every running thread in between its store and its
// loads: no locked instruction a record (eight of them an op of
// ChanToSyscallPing); else both halves are sequentially consistent.
bool traceBusy(traceBuf* b) {
  if (fenceLight) {
    b->busy.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // keep the order
    return traceOn.load(std::memory_order_relaxed);
  }
  b->busy.store(true);  // seq_cst, before the load of traceOn
  return traceOn.load();
}

// appendMine appends the record make() builds to mp's own buffer inside its
// busy window, if the trace still runs, and notes the trace mp's last record
// went to (tracePSeq, which traceOwnSkip reads). Every record an M writes to
// its own buffer goes through here, so none can forget that note.
template <typename Make>
void appendMine(M* mp, Make make) {
  traceBuf* b = mp->tracebuf;
  if (b == nullptr) b = mp->tracebuf = acquireBuf();
  if (traceBusy(b)) {
    append(b, make(), false);
    mp->tracePSeq = traceSeq.load(std::memory_order_relaxed);
  }
  b->busy.store(false, std::memory_order_release);
}

}  // namespace

// traceEvent mirrors Go's traceEvent (trace.go:578): append one record to this
// M's buffer.
void traceEvent(traceEv ev, std::int64_t g, std::int64_t a0, std::int64_t a1,
                std::uint8_t reason) {
  G* gp = getg();
  M* mp = gp != nullptr ? gp->m : nullptr;
  if (mp == nullptr) {
    lock(&traceLock);
    if (traceOn.load())
      append(&sharedBuf, makeRecord(mp, ev, g, a0, a1, reason), true);
    unlock(&traceLock);
    return;
  }
  appendMine(mp, [&] { return makeRecord(mp, ev, g, a0, a1, reason); });
}

// traceOwnSkip: a trace in Go's format runs and the calling M's last record
// went to it with the P the M holds now, so the writer would learn nothing
// from another record of an event Go's format does not have.
bool traceOwnSkip() {
  if (!traceGoFormat()) return false;
  G* gp = getg();
  M* mp = gp != nullptr ? gp->m : nullptr;
  return mp != nullptr &&
         mp->tracePSeq == traceSeq.load(std::memory_order_relaxed);
}

// traceOwnEvent records one of gort's own events unless traceOwnSkip.
void traceOwnEvent(traceEv ev, std::int64_t a0, std::int64_t a1) {
  if (!traceOwnSkip()) {
    traceEvent(ev, 0, a0, a1);
    return;
  }
  traceCapture* c = traceCaptureForTest.load(std::memory_order_relaxed);
  if (c != nullptr && c->shadow) traceEvent(ev, 0, a0, a1, kTraceShadow);
}

namespace {

// traceWalk stores the return addresses how names (gp's switched-out stack, or
// the calling goroutine's own) in pcs; how many. *tag: the walk cache's word
// for this walk (nullptr if none), where traceEventStack keeps its stack id.
int traceWalk(traceStk how, G* gp, std::uintptr_t* pcs, std::uint64_t** tag) {
  *tag = nullptr;
  G* me = getg();
  if (how == traceStk::self) gp = getcurg() == me ? me : nullptr;
  if (how == traceStk::none || gp == nullptr || gp->stack.base == nullptr ||
      !traceWalkStacks.load(std::memory_order_relaxed)) {
    return 0;
  }
  char* lo = static_cast<char*>(gp->stack.base) + gp->stack.guard;
  char* hi = static_cast<char*>(gp->stack.base) + gp->stack.size;
  int n = 0;
  if (how == traceStk::self) {
    n = os::tracebackSelfCached(lo, hi, pcs, kMaxStack, tag);
  } else if (gp->ctx != nullptr) {
    n = os::tracebackParkedCached(gp->ctx, lo, hi, pcs, kMaxStack, tag);
  }
  return n < 0 ? 0 : n;
}

// traceStackID: the id of pcs[0, n) in the running trace's table. A walk the
// cache answered carries the id the trace gave it (with the trace's
// traceSeq, as a trace's ids die with it), so no hash or lookup; else the
// table's, kept in the cache's tag for the next time.
std::uint32_t traceStackID(const std::uintptr_t* pcs, int n,
                           std::uint64_t* tag) {
  std::uint64_t seq = traceSeq.load(std::memory_order_relaxed);
  if (tag != nullptr && *tag >> 32 == seq) {
    return static_cast<std::uint32_t>(*tag);
  }
  std::uint32_t id = traceStackTab.put(pcs, n);
  if (tag != nullptr && id != 0) *tag = seq << 32 | id;
  return id;
}

// eventStack: traceEventStack's record for mp, walked now; stamped now, or
// at *at.
void eventStack(M* mp, traceEv ev, std::int64_t g, traceStk how, G* gp,
                std::int64_t a0, std::int64_t a1, std::uint8_t reason,
                const traceStamp* at) {
  std::uintptr_t pcs[kMaxStack];
  std::uint64_t* tag = nullptr;
  int n = traceWalk(how, gp, pcs, &tag);
  appendMine(mp, [&] {
    traceRecord r = makeRecord(mp, ev, g, a0, a1, reason, at);
    r.stk = traceStackID(pcs, n, tag);
    return r;
  });
}

}  // namespace

// traceEventStack mirrors Go's traceEvent (trace.go:578) with a stack
// (traceStackID (trace.go:784)): the walk is the platform unwinder's, not
// Go's gentraceback (traceback.go:33); the id is interned inside the busy
// window, so StopTrace never empties the table under a put.
void traceEventStack(traceEv ev, std::int64_t g, traceStk how, G* gp,
                     std::int64_t a0, std::int64_t a1, std::uint8_t reason) {
  G* me = getg();
  M* mp = me != nullptr ? me->m : nullptr;
  if (mp == nullptr) {
    traceEvent(ev, g, a0, a1, reason);
    return;
  }
  eventStack(mp, ev, g, how, gp, a0, a1, reason, nullptr);
}

// traceGoSysCallAtSlow: traceGoSysCallAt's record, on a goroutine.
void traceGoSysCallAtSlow(G* gp, const traceStamp& at) {
  eventStack(gp->m, traceEv::GoSysCall, gp->goid, traceStk::self, nullptr, 0, 0,
             0, &at);
}

// tracePrefetchSlow: the lines mp's next record goes to: its buffer's header
// and the record's slot, read inside the busy window (StopTrace may be
// draining the buffer).
void tracePrefetchSlow(M* mp) {
  traceBuf* b = mp->tracebuf;
  if (b == nullptr) return;
  if (traceBusy(b)) {
    traceChunk* c = b->tail;
    if (c != nullptr && b->n < kChunkEvents) {
      __builtin_prefetch(&c->ev[b->n], 1);
    }
  }
  b->busy.store(false, std::memory_order_release);
}

// traceRefillPool: sysmon, once a round while a trace runs, adds a touched
// chunk to the pool when fewer than kPoolLow are left, so a trace longer than
// the chunks StartTrace touched still takes its page faults (48 a chunk) on
// sysmon's thread, not on the traced goroutines' paths, where they widen the
// race docs/notes/trace-cost-records.md describes (a 60000-op ChanToSyscallPing
// traced took 1.15-1.17x untraced without this, 1.07-1.15x with it).
void traceRefillPool() {
  if (poolReady.load(std::memory_order_relaxed) >= kPoolLow) return;
  traceChunk* c = newTouchedChunk();
  lock(&traceLock);
  poolPush(c);
  unlock(&traceLock);
}

// tracePoolChunks: the chunks in the pool now (for tests).
std::int64_t tracePoolChunks() {
  return poolReady.load(std::memory_order_relaxed);
}

// traceCurGoid: the goroutine on this thread, 0 on g0 or outside.
std::int64_t traceCurGoid() {
  G* gp = getcurg();
  return gp != nullptr ? gp->goid.load(std::memory_order_relaxed) : 0;
}

namespace {
// traceSlept: the last usleep of this thread, not recorded yet.
struct traceSlept {
  std::int64_t t0 = 0;  // cputicks before and after
  std::int64_t t1 = 0;
  std::uint32_t usec = 0;
  std::uint32_t seq = 0;  // traceSeq then; 0: none
};
thread_local traceSlept lastSleep;
}  // namespace

// traceUsleepFlush records this thread's last usleep if it is still to be
// recorded in the trace it was slept in.
void traceUsleepFlush() {
  traceSlept last = lastSleep;
  lastSleep.seq = 0;
  G* gp = getg();
  M* mp = gp != nullptr ? gp->m : nullptr;
  if (mp == nullptr || last.seq != traceSeq.load(std::memory_order_relaxed)) {
    return;
  }
  traceRecord r =
      makeRecord(mp, traceEv::Usleep, 0, last.usec, last.t1 - last.t0, 0);
  r.ts = last.t0;
  appendMine(mp, [&] { return r; });
}

// traceUsleepSlow: usleep, recorded with its requested and real duration.
// The record is written before the thread's next usleep (or sysmon's sleep
// on its note, traceSysmonIdle), not right after this one: sysmon wakes to
// retake a P, and a record written first (0.2-0.3 us on a thread just
// woken, its caches cold) would delay the retake and every wake-up that
// follows it (docs/notes/trace-cost-records.md). A usleep in progress when the
// trace stops is not recorded.
void traceUsleepSlow(std::uint32_t usec) {
  traceUsleepFlush();
  if (traceOwnSkip()) {  // Go's format has no usleep event
    os::usleep(usec);
    return;
  }
  std::uint32_t seq = traceSeq.load(std::memory_order_relaxed);
  std::int64_t t0 = os::cputicks();
  os::usleep(usec);
  lastSleep = {t0, os::cputicks(), usec, seq};
}

// traceStartRun starts a trace for $GORT_TRACE at schedinit.
void traceStartRun() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  const char* path = os::getenv("GORT_TRACE");
  if (path == nullptr || *path == '\0') return;
  const char* format = os::getenv("GORT_TRACE_FORMAT");
  bool json = format != nullptr && std::string(format) == "json";
  lock(&traceCtl);
  startTrace(path, json ? TraceFormat::kChromeJSON : TraceFormat::kGo, true);
  unlock(&traceCtl);
}

// traceEndRun writes a $GORT_TRACE trace once every M has exited, and frees
// the buffers for the next Run's Ms.
void traceEndRun() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  lock(&traceCtl);
  if (traceFromEnv) {
    stopTrace();
    traceFromEnv = false;
  }
  unlock(&traceCtl);
  lock(&traceLock);
  for (traceBuf* b = allTraceBufs; b != nullptr; b = b->alllink)
    b->owned = false;
  unlock(&traceLock);
}

}  // namespace gort::runtime

namespace gort {

bool StartTrace(const std::string& path,
                TraceFormat format) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  runtime::lock(&runtime::traceCtl);
  bool ok = runtime::startTrace(path, format, false);
  runtime::unlock(&runtime::traceCtl);
  return ok;
}

bool StopTrace() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  runtime::lock(&runtime::traceCtl);
  bool ok = runtime::stopTrace();
  runtime::traceFromEnv = false;
  runtime::unlock(&runtime::traceCtl);
  return ok;
}

bool TraceEnabled() { return runtime::traceEnabled(); }

}  // namespace gort
