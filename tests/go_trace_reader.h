// tests/go_trace_reader.h: a reader of Go 1.19 execution traces (the wire
// format of Go's internal/trace parser: header, per-P batches of varint
// events with time deltas, stacks, strings), for trace_go_test.cc. It checks
// what the parser's readTrace and parseEvents check of the encoding (event
// types, argument counts, lengths, string and stack ids) and replays the
// goroutine and P states as its postProcessTrace does, so a trace it accepts
// is one `go tool trace` accepts, short of event order across Ps (which
// the writer makes follow time).
#ifndef GORT_TESTS_GO_TRACE_READER_H_
#define GORT_TESTS_GO_TRACE_READER_H_

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace gort_test::gotrace {

// Go's event types, the ones gort writes.
enum Ev : int {
  kBatch = 1,
  kFrequency = 2,
  kStack = 3,
  kGomaxprocs = 4,
  kProcStart = 5,
  kProcStop = 6,
  kGoCreate = 13,
  kGoStart = 14,
  kGoEnd = 15,
  kGoStop = 16,
  kGoSched = 17,
  kGoPreempt = 18,
  kGoSleep = 19,
  kGoBlock = 20,
  kGoUnblock = 21,
  kGoBlockSend = 22,
  kGoBlockRecv = 23,
  kGoBlockSelect = 24,
  kGoBlockSync = 25,
  kGoBlockCond = 26,
  kGoBlockNet = 27,
  kGoSysCall = 28,
  kGoSysExit = 29,
  kGoSysBlock = 30,
  kGoWaiting = 31,
  kGoInSyscall = 32,
  kString = 37,
};

// What the reader needs of an event kind: Go's EventDescriptions (the
// argument count, stack included, and whether the last is a stack id), and
// what the event says of the goroutines on its P.
// Blocks: the goroutine parks (sleep, a wait on a channel, a select, a lock,
// a condition, the poller); its waker's GoUnblock makes it runnable.
inline bool Blocks(int ev) {
  return ev == kGoSleep || ev == kGoBlock ||
         (ev >= kGoBlockSend && ev <= kGoBlockNet);
}

struct EvInfo {
  int args = -1;        // arguments after the timestamp; -1: unknown kind
  bool stack = false;   // the last argument is a stack id
  bool stops = false;   // the P's running goroutine stops running
  bool namesG = false;  // about the goroutine in args[0], not the running one
};

inline EvInfo Info(int ev) {
  if (Blocks(ev)) return {1, true, true};
  switch (ev) {
    case kGomaxprocs:
      return {2, true};
    case kProcStart:
      return {1};
    case kProcStop:
      return {0};
    case kGoCreate:
    case kGoUnblock:
      return {3, true};
    case kGoStart:
      return {2};
    case kGoEnd:
    case kGoSysBlock:
      return {0, false, true};
    case kGoStop:
    case kGoSched:
    case kGoPreempt:
      return {1, true, true};
    case kGoSysCall:
      return {1, true};
    case kGoSysExit:
      return {3, false, false, true};
    case kGoWaiting:
    case kGoInSyscall:
      return {1, false, false, true};
  }
  return {};
}

inline bool HasStack(int ev) { return Info(ev).stack; }

struct Frame {
  std::uint64_t pc = 0;
  std::string fn, file;
  std::uint64_t line = 0;
};

struct Event {
  int type = 0;
  int p = 0;
  std::uint64_t g = 0;  // the goroutine running on p (Go's ev.G)
  std::int64_t ts = 0;
  std::vector<std::uint64_t> args;  // after the timestamp, without the stack
  std::uint64_t stk = 0;
};

struct Trace {
  std::vector<Event> events;  // in file order
  std::map<std::uint64_t, std::vector<Frame>> stacks;
  std::uint64_t frequency = 0;
};

class Reader {
 public:
  explicit Reader(std::string data) : d_(std::move(data)) {}

  // Read decodes the whole trace; false with *err on the first problem.
  bool Read(Trace* t, std::string* err) {
    if (d_.size() < 16 ||
        d_.compare(0, 16, std::string("go 1.19 trace\0\0\0", 16)) != 0) {
      return Fail(err, "bad header");
    }
    pos_ = 16;
    std::map<std::uint64_t, std::string> strs;
    std::vector<std::pair<std::uint64_t, std::vector<std::uint64_t>>> rawStk;
    int p = 0;
    std::int64_t last = 0;
    std::map<int, std::uint64_t> lastG;
    while (pos_ < d_.size()) {
      std::size_t off = pos_;
      auto b = static_cast<unsigned char>(d_[pos_++]);
      int type = b & 0x3f;
      int narg = (b >> 6) + 1;
      std::uint64_t v = 0;
      if (type == kString) {
        std::uint64_t id, len;
        if (!Var(&id) || !Var(&len) || id == 0 || len == 0 ||
            pos_ + len > d_.size() || strs.count(id)) {
          return Fail(err, "bad string at " + std::to_string(off));
        }
        strs[id] = d_.substr(pos_, len);
        pos_ += len;
        continue;
      }
      std::vector<std::uint64_t> args;
      if (narg < 4) {
        for (int i = 0; i < narg; i++) {
          if (!Var(&v)) return Fail(err, "truncated");
          args.push_back(v);
        }
      } else {
        std::uint64_t len;
        if (!Var(&len)) return Fail(err, "truncated");
        std::size_t end = pos_ + len;
        while (pos_ < end) {
          if (!Var(&v)) return Fail(err, "truncated");
          args.push_back(v);
        }
        if (pos_ != end)
          return Fail(err, "bad length at " + std::to_string(off));
      }
      if (type == kBatch) {
        if (args.size() != 2) return Fail(err, "bad batch");
        p = static_cast<int>(static_cast<std::int64_t>(args[0]));
        last = static_cast<std::int64_t>(args[1]);
        continue;
      }
      if (type == kFrequency) {
        if (args.size() != 1 || args[0] == 0) return Fail(err, "bad freq");
        t->frequency = args[0];
        continue;
      }
      if (type == kStack) {
        if (args.size() < 2 || args.size() != 2 + 4 * args[1]) {
          return Fail(err, "bad stack at " + std::to_string(off));
        }
        rawStk.push_back({args[0], args});
        continue;
      }
      EvInfo info = Info(type);
      int want = info.args;
      if (want < 0) return Fail(err, "unknown event " + std::to_string(type));
      if (static_cast<int>(args.size()) != want + 1) {
        return Fail(err, "event " + std::to_string(type) +
                             " has wrong argument count at " +
                             std::to_string(off));
      }
      Event e;
      e.type = type;
      e.p = p;
      e.ts = last + static_cast<std::int64_t>(args[0]);
      last = e.ts;
      e.args.assign(args.begin() + 1, args.end());
      if (info.stack) {
        e.stk = e.args.back();
        e.args.pop_back();
      }
      if (type == kGoStart) lastG[p] = e.args[0];
      e.g = info.namesG ? e.args[0] : lastG[p];
      if (info.stops) lastG[p] = 0;
      t->events.push_back(e);
    }
    if (t->frequency == 0) return Fail(err, "no EvFrequency");
    for (auto& [id, a] : rawStk) {
      // Go's parser keeps the last; a writer that names two stacks by one
      // id has given some events the wrong stack.
      if (t->stacks.count(id) != 0) {
        return Fail(err, "stack " + std::to_string(id) + " written twice");
      }
      std::vector<Frame> fr;
      for (std::uint64_t i = 0; i < a[1]; i++) {
        Frame f;
        f.pc = a[2 + 4 * i];
        f.fn = strs[a[3 + 4 * i]];
        f.file = strs[a[4 + 4 * i]];
        f.line = a[5 + 4 * i];
        fr.push_back(f);
      }
      t->stacks[id] = fr;
    }
    for (const Event& e : t->events) {
      if (e.stk != 0 && t->stacks.count(e.stk) == 0) {
        return Fail(err, "event names stack " + std::to_string(e.stk) +
                             " which is not in the trace");
      }
    }
    return true;
  }

 private:
  bool Var(std::uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64 && pos_ < d_.size(); shift += 7) {
      auto b = static_cast<unsigned char>(d_[pos_++]);
      *v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  static bool Fail(std::string* err, const std::string& what) {
    *err = what;
    return false;
  }

  std::string d_;
  std::size_t pos_ = 0;
};

// Replay: the events of all Ps merged by time, replayed through Go's state
// machine (internal/trace's postProcessTrace, the checks gort's writer must
// pass); "" if consistent, else the first violation.
inline std::string Replay(const Trace& t) {
  enum { kDead, kRunnable, kRunning, kWaiting };
  std::vector<const Event*> ev;
  for (const Event& e : t.events) ev.push_back(&e);
  std::stable_sort(ev.begin(), ev.end(), [](const Event* a, const Event* b) {
    return a->ts < b->ts;
  });
  std::map<std::uint64_t, int> gs;
  gs[0] = kRunning;
  std::map<int, std::pair<bool, std::uint64_t>> ps;  // running, g
  auto at = [](const Event* e) {
    return " (type " + std::to_string(e->type) + " at " +
           std::to_string(e->ts) + " on P" + std::to_string(e->p) + ")";
  };
  for (std::size_t i = 1; i < ev.size(); i++) {
    if (ev[i]->ts == ev[i - 1]->ts) return "equal timestamps" + at(ev[i]);
  }
  for (const Event* e : ev) {
    auto& p = ps[e->p];
    int& g = gs[e->g];
    auto running = [&](bool allowG0) -> std::string {
      if (g != kRunning) return "g " + std::to_string(e->g) + " not running";
      if (p.second != e->g) return "p not running g " + std::to_string(e->g);
      if (!allowG0 && e->g == 0) return "g 0 did it";
      return "";
    };
    std::string bad;
    // A block, or a syscall that lost its P: the goroutine waits.
    bool waits = Blocks(e->type) || e->type == kGoSysBlock;
    if (waits) {
      bad = running(false);
      g = kWaiting;
      p.second = 0;
    }
    switch (waits ? -1 : e->type) {
      case kProcStart:
        if (p.first) bad = "p running before start";
        p.first = true;
        break;
      case kProcStop:
        if (!p.first) bad = "p not running before stop";
        if (p.second != 0) bad = "p running a goroutine at stop";
        p.first = false;
        break;
      case kGoCreate:
        bad = running(true);
        if (gs.count(e->args[0])) bad = "g already exists";
        gs[e->args[0]] = kRunnable;
        break;
      case kGoWaiting:
      case kGoInSyscall:
        if (g != kRunnable) bad = "not runnable before GoWaiting";
        g = kWaiting;
        break;
      case kGoStart:
        if (gs[e->args[0]] != kRunnable) bad = "not runnable before start";
        gs[e->args[0]] = kRunning;
        p.second = e->args[0];
        break;
      case kGoEnd:
      case kGoStop:
        bad = running(false);
        g = kDead;
        p.second = 0;
        break;
      case kGoSched:
      case kGoPreempt:
        bad = running(false);
        g = kRunnable;
        p.second = 0;
        break;
      case kGoUnblock:
        if (g != kRunning) bad = "unblocker not running";
        if (gs[e->args[0]] != kWaiting) bad = "g not waiting before unpark";
        gs[e->args[0]] = kRunnable;
        break;
      case kGoSysCall:
        bad = running(false);
        break;
      case kGoSysExit:
        if (g != kWaiting) bad = "not waiting at syscall exit";
        g = kRunnable;
        break;
    }
    if (!bad.empty()) return bad + at(e);
  }
  return "";
}

// Load reads and decodes the trace at path.
inline bool Load(const std::string& path, Trace* t, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = "cannot open " + path;
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return Reader(ss.str()).Read(t, err);
}

}  // namespace gort_test::gotrace

#endif  // GORT_TESTS_GO_TRACE_READER_H_
