// runtime/trace_go.cc: an execution trace in Go 1.19's format (runtime/
// trace.go writes it; internal/trace's parser, which `go tool trace` runs,
// reads and validates it).
//
// gort's records come from each M's buffer with the M and P they happened
// on; Go records from each P's buffer and must replay as a consistent story:
// a P runs one goroutine at a time between ProcStart and ProcStop, a
// goroutine is created before it starts, blocked before it is unblocked, in
// a syscall before it exits one, and each cross-P step carries the
// goroutine's sequence number. So the writer reads the records in time order
// and keeps the model the parser in Go has of every P and G; each record
// becomes the Go events that take the model to what the record says, on the
// batch of the P the model has the event on (Go's traceGlobProc (trace.go:96)
// batch for events without one):
//   - GoCreate, GoStart, GoEnd, GoSched, GoPreempt, block (by wait reason:
//     GoBlockSend/Recv/Select/Sync/Cond/Net, GoSleep, GoStop for a block
//     forever), GoUnblock, GoSysCall (with GoSysBlock when the P is handed
//     off at once), GoSysExit and GOMAXPROCS map one to one;
//   - a P's first event on an M starts it (ProcStart, the M's id as the
//     thread); it stops (ProcStop) when its M is seen without it, when
//     another M takes it, or when sysmon retakes it from a syscall
//     (GoSysBlock first, as Go's retake (proc.go:5291) records);
//   - a goroutine that existed before the trace started is created at its
//     first sight (GoCreate, then GoWaiting or GoInSyscall, as Go's
//     StartTrace records them);
//   - where records raced (a wake-up stamped after the start it caused), the
//     missing step is written and the late record dropped, so the trace
//     always validates.
// Timestamps are nanoseconds since the trace start (EvFrequency 1e9), made
// strictly increasing so that the parser's ordering by time agrees with the
// replay. gort's own events (steals, spinning, M parks, usleep, netpoll waits)
// have no Go counterpart: only the JSON has them. Stacks are symbolized here,
// function, file and line per frame (inlined calls as frames of their own),
// so the viewer needs no binary.
#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "os/traceback_os.h"
#include "proc.h"
#include "trace.h"

namespace gort::runtime {

namespace {

// goEv: the event types of Go 1.19 (runtime's traceEv*), those gort writes.
enum goEv : std::uint8_t {
  goEvBatch = 1,
  goEvFrequency = 2,
  goEvStack = 3,
  goEvGomaxprocs = 4,
  goEvProcStart = 5,
  goEvProcStop = 6,
  goEvGoCreate = 13,
  goEvGoStart = 14,
  goEvGoEnd = 15,
  goEvGoStop = 16,
  goEvGoSched = 17,
  goEvGoPreempt = 18,
  goEvGoSleep = 19,
  goEvGoBlock = 20,
  goEvGoUnblock = 21,
  goEvGoBlockSend = 22,
  goEvGoBlockRecv = 23,
  goEvGoBlockSelect = 24,
  goEvGoBlockSync = 25,
  goEvGoBlockCond = 26,
  goEvGoBlockNet = 27,
  goEvGoSysCall = 28,
  goEvGoSysExit = 29,
  goEvGoSysBlock = 30,
  goEvGoWaiting = 31,
  goEvGoInSyscall = 32,
  goEvString = 37,
};

constexpr int kGlobP = -1;           // Go's traceGlobProc (trace.go:96)
constexpr std::int64_t kNoStk = -1;  // the event has no stack argument
constexpr int kMaxInlined = 16;
// The PCs of the frames that stand for a creation stack gort does not have
// (not 0: `go tool trace` takes a goroutine whose start PC is 0 as unnamed
// yet): created before the trace started, or by Run (goroutine 1).
constexpr std::int64_t kUnknownPC = 1;
constexpr std::int64_t kRunPC = 2;

// varint appends v in base 128, low group first (Go's traceBuf.varint
// (trace.go:930)).
void varint(std::string* b, std::uint64_t v) {
  while (v >= 0x80) {
    b->push_back(static_cast<char>(0x80 | (v & 0x7f)));
    v >>= 7;
  }
  b->push_back(static_cast<char>(v));
}

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// blockEv: the Go event for a park with reason w (as the gopark callers in
// Go choose it).
goEv blockEv(waitReason w) {
  switch (w) {
    case waitReason::chanReceive:
      return goEvGoBlockRecv;
    case waitReason::chanSend:
      return goEvGoBlockSend;
    case waitReason::select:
      return goEvGoBlockSelect;
    case waitReason::chanReceiveNilChan:
    case waitReason::chanSendNilChan:
    case waitReason::selectNoCases:
      return goEvGoStop;
    case waitReason::sleep:
      return goEvGoSleep;
    case waitReason::semacquire:
    case waitReason::syncMutexLock:
    case waitReason::syncWaitGroupWait:
    case waitReason::syncRWMutexRLock:
    case waitReason::syncRWMutexLock:
      return goEvGoBlockSync;
    case waitReason::syncCondWait:
      return goEvGoBlockCond;
    case waitReason::ioWait:
      return goEvGoBlockNet;
    case waitReason::zero:
      break;
  }
  return goEvGoBlock;
}

// gSt: a goroutine's state in the parser's model (gDead ...
// gWaiting, with the syscall states apart).
enum class gSt : std::uint8_t {
  unknown,  // not seen yet
  runnable,
  running,     // on P p
  waiting,     // blocked
  syscall,     // in a syscall, still holding P p
  sysblocked,  // in a syscall, its P gone
  dead,
};

struct gModel {
  gSt st = gSt::unknown;
  int p = -1;
  std::uint64_t seq = 0;  // Go's g.traceseq (runtime2.go:474)
};

struct pModel {
  bool running = false;
  std::int64_t g = 0;  // goroutine running (or in a syscall) on it
  int m = -1;
};

struct batch {
  std::string buf;
  std::int64_t first = 0;
  std::int64_t last = 0;
};

class goWriter {
 public:
  goWriter(const traceStacks& stacks, std::int64_t start)
      : stacks_(stacks), start_(start) {}
  void begin(std::int64_t ts, std::int32_t procs);
  void handle(const traceRecord& r);
  std::string finish();

 private:
  void emit(int p, goEv ev, std::initializer_list<std::uint64_t> args,
            std::int64_t stk = kNoStk);
  void acquireP(int q, int m);
  void stopP(int q);
  void displace(int q);
  void known(std::int64_t g, gSt as);
  bool run(std::int64_t g, int q, int m);
  bool runAt(const traceRecord& r);
  void leave(std::int64_t g, goEv ev, gSt st, std::int64_t stk);
  void create(const traceRecord& r);
  void block(const traceRecord& r);
  void unblock(const traceRecord& r);
  void yield(const traceRecord& r, goEv ev);
  void syscall(const traceRecord& r);
  void sysexit(const traceRecord& r);
  void retake(int q);
  std::uint64_t newStack(std::int64_t gopc);
  std::uint64_t str(const std::string& s);
  void writeStack(std::string* out, std::uint64_t id,
                  const std::vector<std::uintptr_t>& pcs);
  const std::vector<std::pair<std::uintptr_t, os::Symbol>>& frames(
      std::uintptr_t pc);

  const traceStacks& stacks_;
  std::int64_t start_;
  std::int64_t cur_ = 0;   // the record's time
  std::int64_t last_ = 0;  // the last event's time
  std::map<int, batch> batches_;
  std::unordered_map<std::int64_t, gModel> gs_;
  std::map<int, pModel> ps_;
  std::unordered_map<int, int> mp_;  // M -> the P it runs
  std::map<std::int64_t, std::uint64_t> gopcStacks_;
  std::vector<std::vector<std::uintptr_t>> extraStacks_;
  std::map<std::string, std::uint64_t> strings_;
  std::unordered_map<std::uintptr_t,
                     std::vector<std::pair<std::uintptr_t, os::Symbol>>>
      symbols_;
};

// emit appends one event to P p's batch: type and argument count, then the
// time since the batch's previous event, the arguments and the stack id
// (Go's traceEventLocked (trace.go:622); four or more values go behind a
// length).
void goWriter::emit(int p, goEv ev, std::initializer_list<std::uint64_t> args,
                    std::int64_t stk) {
  std::int64_t t = std::max(last_ + 1, cur_);
  last_ = t;
  auto [it, fresh] = batches_.try_emplace(p);
  batch& b = it->second;
  if (fresh) b.first = b.last = t;
  std::string body;
  varint(&body, u(t - b.last));
  for (std::uint64_t a : args) varint(&body, a);
  if (stk != kNoStk) varint(&body, u(stk));
  b.last = t;
  std::size_t narg = args.size() + (stk != kNoStk ? 1 : 0);
  if (narg < 3) {
    b.buf.push_back(static_cast<char>(ev | narg << 6));
  } else {
    b.buf.push_back(static_cast<char>(ev | 3 << 6));
    varint(&b.buf, body.size());
  }
  b.buf += body;
}

// stopP: P q stops (ProcStop), its goroutine leaving it first.
void goWriter::stopP(int q) {
  pModel& p = ps_[q];
  if (!p.running) return;
  displace(q);
  emit(q, goEvProcStop, {});
  p.running = false;
  auto it = mp_.find(p.m);
  if (it != mp_.end() && it->second == q) mp_.erase(it);
  p.m = -1;
}

// displace: the goroutine on P q leaves it: blocked in its syscall, or (a
// record was lost to a race) preempted.
void goWriter::displace(int q) {
  pModel& p = ps_[q];
  if (p.g == 0) return;
  gModel& s = gs_[p.g];
  if (s.st == gSt::syscall) {
    emit(q, goEvGoSysBlock, {});
    s.st = gSt::sysblocked;
  } else {
    emit(q, goEvGoPreempt, {}, 0);
    s.st = gSt::runnable;
  }
  s.p = -1;
  p.g = 0;
}

// acquireP: M m runs P q from now on (ProcStart unless it already did).
void goWriter::acquireP(int q, int m) {
  pModel& p = ps_[q];
  if (p.running && p.m == m) return;
  if (p.running) stopP(q);
  auto it = mp_.find(m);
  if (it != mp_.end() && it->second != q) stopP(it->second);
  emit(q, goEvProcStart, {u(m < 0 ? 0 : m)});
  p.running = true;
  p.m = m;
  mp_[m] = q;
}

// known: a goroutine first seen now existed before the trace: created, and
// waiting or in a syscall if as says so (Go's StartTrace (trace.go:203)).
void goWriter::known(std::int64_t g, gSt as) {
  gModel& s = gs_[g];
  if (s.st != gSt::unknown) return;
  emit(kGlobP, goEvGoCreate, {u(g), newStack(kUnknownPC)}, 0);
  s.st = gSt::runnable;
  s.seq = 1;
  if (as == gSt::waiting || as == gSt::sysblocked) {
    emit(kGlobP, as == gSt::waiting ? goEvGoWaiting : goEvGoInSyscall, {u(g)});
    s.st = as;
    s.seq = 2;
  }
}

// run: g runs on P q (M m), started there if it was not; false if it ended.
bool goWriter::run(std::int64_t g, int q, int m) {
  acquireP(q, m);
  gModel& s = gs_[g];
  if (s.st == gSt::running && s.p == q) return true;
  if (s.st == gSt::dead) return false;
  known(g, gSt::runnable);
  if ((s.st == gSt::running || s.st == gSt::syscall) && s.p != q) {
    displace(s.p);
  }
  if (s.st == gSt::syscall) {  // on q, yet q's M changed: it lost q
    displace(q);
  }
  if (s.st == gSt::waiting) {
    emit(kGlobP, goEvGoUnblock, {u(g), s.seq}, 0);
    s.seq++;
    s.st = gSt::runnable;
  }
  if (s.st == gSt::sysblocked) {
    emit(kGlobP, goEvGoSysExit, {u(g), s.seq, 0});
    s.seq++;
    s.st = gSt::runnable;
  }
  displace(q);
  emit(q, goEvGoStart, {u(g), s.seq});
  s.seq++;
  s.st = gSt::running;
  s.p = q;
  ps_[q].g = g;
  return true;
}

// runAt: the record's goroutine runs on the record's P.
bool goWriter::runAt(const traceRecord& r) {
  if (r.p < 0) {
    auto it = gs_.find(r.g);
    return it != gs_.end() && it->second.st == gSt::running;
  }
  return run(r.g, r.p, r.m);
}

// leave: running g stops running its P with ev, to state st.
void goWriter::leave(std::int64_t g, goEv ev, gSt st, std::int64_t stk) {
  gModel& s = gs_[g];
  int q = s.p;
  emit(q, ev, {}, stk);
  s.st = st;
  s.p = -1;
  ps_[q].g = 0;
}

// newStack: the creation stack of a goroutine, its go statement's return
// address (Go records the new goroutine's entry PC; gort's G keeps only the
// creator's); kUnknownPC and kRunPC get a frame that says which, as `go
// tool trace` needs one.
std::uint64_t goWriter::newStack(std::int64_t gopc) {
  if (gopc == 0) gopc = kRunPC;
  auto [it, fresh] = gopcStacks_.emplace(gopc, 0);
  if (fresh) {
    extraStacks_.push_back({static_cast<std::uintptr_t>(gopc)});
    it->second = stacks_.size() + extraStacks_.size();
  }
  return it->second;
}

void goWriter::create(const traceRecord& r) {
  auto it = gs_.find(r.g);
  if (it != gs_.end() && it->second.st != gSt::unknown) return;
  std::int64_t creator = r.a0;
  int q = kGlobP;
  if (r.p >= 0) {
    if (creator != 0) {
      if (run(creator, r.p, r.m)) q = r.p;
    } else if (ps_[r.p].g == 0) {
      q = r.p;
    }
  }
  emit(q, goEvGoCreate, {u(r.g), newStack(r.a1)}, r.stk);
  gModel& s = gs_[r.g];
  s.st = gSt::runnable;
  s.seq = 1;
}

void goWriter::block(const traceRecord& r) {
  if (!runAt(r)) return;
  goEv ev = blockEv(static_cast<waitReason>(r.reason));
  leave(r.g, ev, ev == goEvGoStop ? gSt::dead : gSt::waiting, r.stk);
}

void goWriter::unblock(const traceRecord& r) {
  known(r.g, gSt::waiting);
  gModel& s = gs_[r.g];
  if (s.st != gSt::waiting) return;  // its start came first: already woken
  int q = kGlobP;
  if (r.p >= 0 && ps_[r.p].g == r.a0) q = r.p;
  emit(q, goEvGoUnblock, {u(r.g), s.seq}, r.stk);
  s.seq++;
  s.st = gSt::runnable;
}

void goWriter::yield(const traceRecord& r, goEv ev) {
  auto it = gs_.find(r.g);
  if (it != gs_.end() && it->second.st != gSt::running) return;
  if (!runAt(r)) return;
  leave(r.g, ev, gSt::runnable, r.stk);
}

void goWriter::syscall(const traceRecord& r) {
  if (!runAt(r)) return;
  gModel& s = gs_[r.g];
  emit(s.p, goEvGoSysCall, {}, r.stk);
  s.st = gSt::syscall;
  if (r.a0 != 0) leave(r.g, goEvGoSysBlock, gSt::sysblocked, kNoStk);
}

void goWriter::sysexit(const traceRecord& r) {
  known(r.g, gSt::sysblocked);
  gModel& s = gs_[r.g];
  bool fast = r.a0 != 0;
  if (s.st == gSt::syscall) {
    if (fast && r.p == s.p) return;  // kept its P: Go records nothing
    displace(s.p);
  }
  if (s.st != gSt::sysblocked) return;
  emit(kGlobP, goEvGoSysExit, {u(r.g), s.seq, 0});
  s.seq++;
  s.st = gSt::runnable;
  if (fast && r.p >= 0) run(r.g, r.p, r.m);
}

// retake: sysmon took P q from a syscall (Go's retake (proc.go:5291):
// GoSysBlock and ProcStop on q).
void goWriter::retake(int q) {
  auto it = ps_.find(q);
  if (it == ps_.end() || !it->second.running || it->second.g == 0) return;
  if (gs_[it->second.g].st != gSt::syscall) return;
  stopP(q);
}

void goWriter::begin(std::int64_t ts, std::int32_t procs) {
  cur_ = ts - start_;
  if (procs > 0) emit(kGlobP, goEvGomaxprocs, {u(procs)}, 0);
}

void goWriter::handle(const traceRecord& r) {
  cur_ = r.ts - start_;
  if (r.m >= 0 && r.p < 0) {
    auto it = mp_.find(r.m);
    if (it != mp_.end()) stopP(it->second);  // the M let its P go
  }
  if (r.m >= 0 && r.p >= 0) acquireP(r.p, r.m);
  switch (r.ev) {
    case traceEv::GoCreate:
      create(r);
      break;
    case traceEv::GoStart:
      if (r.p >= 0) run(r.g, r.p, r.m);
      break;
    case traceEv::GoBlock:
      block(r);
      break;
    case traceEv::GoUnblock:
      unblock(r);
      break;
    case traceEv::GoSched:
      yield(r, goEvGoSched);
      break;
    case traceEv::GoPreempt:
      yield(r, goEvGoPreempt);
      break;
    case traceEv::GoEnd:
      if (runAt(r)) leave(r.g, goEvGoEnd, gSt::dead, kNoStk);
      break;
    case traceEv::GoSysCall:
      syscall(r);
      break;
    case traceEv::GoSysExit:
      sysexit(r);
      break;
    case traceEv::ProcRetake:
      retake(static_cast<int>(r.a0));
      break;
    case traceEv::Gomaxprocs:
      emit(kGlobP, goEvGomaxprocs, {u(r.a0)}, 0);
      break;
    default:
      break;  // gort's own events: the JSON has them
  }
}

std::uint64_t goWriter::str(const std::string& s) {
  if (s.empty()) return 0;
  auto [it, fresh] = strings_.emplace(s, strings_.size() + 1);
  return it->second;
}

// isTracerFrame: the tracer's own frames, on the stacks a goroutine walks of
// itself.
// (libdw names functions of an anonymous namespace without any).
bool isTracerFrame(const std::string& f) {
  return f.rfind("gort::runtime::trace", 0) == 0 ||
         f.rfind("gort::runtime::(anonymous namespace)::trace", 0) == 0 ||
         f.rfind("traceWalk", 0) == 0;
}

const std::vector<std::pair<std::uintptr_t, os::Symbol>>& goWriter::frames(
    std::uintptr_t pc) {
  auto [it, fresh] = symbols_.try_emplace(pc);
  if (fresh) {
    os::Symbol syms[kMaxInlined];
    int n = 0;
    if (pc == kUnknownPC) {
      syms[n++].function.assign("gort.unknown (created before the trace)");
    } else if (pc == kRunPC) {
      syms[n++].function.assign("gort::Run (goroutine 1)");
    } else {
      n = os::symbolize(pc, syms, kMaxInlined);
    }
    if (n <= 0) {
      syms[0].function.assign(1, '?');  // not = "?": GCC 12 -Wrestrict
      n = 1;
    }
    for (int i = 0; i < n; i++) {
      if (!isTracerFrame(syms[i].function)) it->second.push_back({pc, syms[i]});
    }
  }
  return it->second;
}

// writeStack appends EvStack: id, frame count, then pc, function, file and
// line of each frame (Go's traceStackTable.dump (trace.go:1045)).
void goWriter::writeStack(std::string* out, std::uint64_t id,
                          const std::vector<std::uintptr_t>& pcs) {
  std::string body;
  std::vector<const std::pair<std::uintptr_t, os::Symbol>*> fr;
  for (std::uintptr_t pc : pcs) {
    for (const auto& f : frames(pc)) fr.push_back(&f);
  }
  if (fr.size() > 1000) fr.resize(1000);  // the parser's limit
  varint(&body, id);
  varint(&body, fr.size());
  for (const auto* f : fr) {
    varint(&body, f->first);
    varint(&body, str(f->second.function));
    varint(&body, str(f->second.file));
    varint(&body, u(f->second.line));
  }
  out->push_back(static_cast<char>(goEvStack | 3 << 6));
  varint(out, body.size());
  *out += body;
}

// finish: header, frequency, each P's batch, stacks, then the string table.
std::string goWriter::finish() {
  std::string out("go 1.19 trace\0\0\0", 16);
  out.push_back(static_cast<char>(goEvFrequency));
  varint(&out, 1'000'000'000);  // ticks are nanoseconds
  for (auto& [p, b] : batches_) {
    out.push_back(static_cast<char>(goEvBatch | 1 << 6));
    varint(&out, u(p));  // -1 as Go writes uint64(int32(-1))
    varint(&out, u(b.first));
    out += b.buf;
  }
  std::string stk;
  for (std::size_t i = 0; i < stacks_.size(); i++)
    writeStack(&stk, i + 1, stacks_[i]);
  for (std::size_t i = 0; i < extraStacks_.size(); i++)
    writeStack(&stk, stacks_.size() + i + 1, extraStacks_[i]);
  out += stk;
  for (const auto& [s, id] : strings_) {
    out.push_back(static_cast<char>(goEvString));
    varint(&out, id);
    varint(&out, s.size());
    out += s;
  }
  return out;
}

}  // namespace

// traceGo writes recs (from every buffer, in any order) in Go 1.19's
// execution-trace format; procs is GOMAXPROCS when the trace started.
std::string traceGo(std::vector<traceRecord>& recs, const traceStacks& stacks,
                    std::int64_t start, std::int64_t end, std::int32_t procs) {
  (void)end;
  std::stable_sort(
      recs.begin(), recs.end(),
      [](const traceRecord& a, const traceRecord& b) { return a.ts < b.ts; });
  goWriter w(stacks, start);
  w.begin(start, procs);
  for (const traceRecord& r : recs) w.handle(r);
  return w.finish();
}

}  // namespace gort::runtime
