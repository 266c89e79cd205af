// runtime/trace_json.cc: an execution trace as Chrome trace event JSON (the
// part of Go's trace tooling, cmd/trace, that turns events into a timeline).
//
// Process 1 has one track per P, process 2 one per M. A goroutine's run is
// a slice "G<id>" on its P's track and on its M's track, from GoStart to the
// event that ends it (block, yield, preemption, syscall, end); its args say
// why it ended. The M tracks also hold syscall slices, "parked" slices and
// sysmon's usleep slices (requested and real duration). Unblocks are flows
// from the waker to the woken goroutine's next slice. Every other event is
// an instant with cat = the event's name and its numbers in args, which is
// what gort-trace's summary counts; an unblock carries the time the
// goroutine was blocked and why.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "proc.h"
#include "trace.h"

namespace gort::runtime {

namespace {

constexpr int kPidP = 1;
constexpr int kPidM = 2;
constexpr int kTidOutside = 1000000;  // events from threads outside the runtime

// gState: what the writer knows of one goroutine.
struct gState {
  std::int64_t runTs = -1;  // start of the open run slice
  int p = -1;
  int m = -1;
  std::int64_t blockTs = -1;
  std::uint8_t reason = 0;
  std::int64_t flow = 0;    // pending unblock flow id, 0 none
  std::int64_t sysTs = -1;  // start of the open syscall
  int sysM = -1;
  bool sysBlock = false;
};

class jsonWriter {
 public:
  jsonWriter(std::int64_t start) : start_(start) {}

  void handle(const traceRecord& r);
  std::string finish(std::int64_t end, std::int64_t dropped);

 private:
  std::string us(std::int64_t ns) const;
  void begin(const char* ph, int pid, int tid, const std::string& name,
             const char* cat, std::int64_t ts);
  void slice(int pid, int tid, const std::string& name, const char* cat,
             std::int64_t ts, std::int64_t dur, const std::string& args);
  void instant(const traceRecord& r, const std::string& name, const char* cat,
               const std::string& args);
  void flow(const char* ph, int pid, int tid, std::int64_t ts, std::int64_t id);
  void track(const traceRecord& r, int* pid, int* tid);
  void closeRun(std::int64_t g, gState& s, std::int64_t ts, const char* why);
  void openRun(std::int64_t g, gState& s, const traceRecord& r);
  void metadata();

  std::int64_t start_;
  std::string out_;
  std::unordered_map<std::int64_t, gState> gs_;
  std::map<int, std::int64_t> parkTs_;
  // M -> (start, traceSpinHow) of its open spinning spell.
  std::map<int, std::pair<std::int64_t, std::int64_t>> spinTs_;
  std::set<int> ps_, ms_, sysmonMs_;
  std::int64_t flows_ = 0;
};

std::string q(const std::string& s) { return "\"" + s + "\""; }
std::string num(std::int64_t v) { return std::to_string(v); }

std::string jsonWriter::us(std::int64_t ns) const {
  std::int64_t d = ns - start_;
  if (d < 0) d = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld",
                static_cast<long long>(d / 1000),
                static_cast<long long>(d % 1000));
  return buf;
}

void jsonWriter::begin(const char* ph, int pid, int tid,
                       const std::string& name, const char* cat,
                       std::int64_t ts) {
  out_ += ",\n{\"ph\":\"";
  out_ += ph;
  out_ += "\",\"pid\":" + num(pid) + ",\"tid\":" + num(tid) +
          ",\"ts\":" + us(ts) + ",\"name\":" + q(name) + ",\"cat\":" + q(cat);
  (pid == kPidP ? ps_ : ms_).insert(tid);
}

void jsonWriter::slice(int pid, int tid, const std::string& name,
                       const char* cat, std::int64_t ts, std::int64_t dur,
                       const std::string& args) {
  begin("X", pid, tid, name, cat, ts);
  if (dur < 0) dur = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld",
                static_cast<long long>(dur / 1000),
                static_cast<long long>(dur % 1000));
  out_ += std::string(",\"dur\":") + buf + ",\"args\":{" + args + "}}";
}

void jsonWriter::track(const traceRecord& r, int* pid, int* tid) {
  if (r.p >= 0) {
    *pid = kPidP;
    *tid = r.p;
  } else {
    *pid = kPidM;
    *tid = r.m >= 0 ? r.m : kTidOutside;
  }
}

void jsonWriter::instant(const traceRecord& r, const std::string& name,
                         const char* cat, const std::string& args) {
  int pid, tid;
  track(r, &pid, &tid);
  begin("i", pid, tid, name, cat, r.ts);
  out_ += ",\"s\":\"t\",\"args\":{\"m\":" + num(r.m) + ",\"p\":" + num(r.p);
  if (!args.empty()) out_ += "," + args;
  out_ += "}}";
}

void jsonWriter::flow(const char* ph, int pid, int tid, std::int64_t ts,
                      std::int64_t id) {
  begin(ph, pid, tid, "unblock", "unblock", ts);
  out_ += ",\"id\":" + num(id);
  if (ph[0] == 'f') out_ += ",\"bp\":\"e\"";
  out_ += "}";
}

void jsonWriter::closeRun(std::int64_t g, gState& s, std::int64_t ts,
                          const char* why) {
  if (s.runTs < 0) return;
  std::string args = "\"g\":" + num(g) + ",\"end\":" + q(why);
  // Appended, not "G" + num(g): GCC 12 warns falsely (-Wrestrict) on a
  // one-character literal plus a temporary string.
  std::string name = std::string("G").append(num(g));
  if (s.p >= 0)
    slice(kPidP, s.p, name, "goroutine", s.runTs, ts - s.runTs, args);
  if (s.m >= 0)
    slice(kPidM, s.m, name, "goroutine", s.runTs, ts - s.runTs, args);
  s.runTs = -1;
}

void jsonWriter::openRun(std::int64_t g, gState& s, const traceRecord& r) {
  closeRun(g, s, r.ts, "restarted");
  s.runTs = r.ts;
  s.p = r.p;
  s.m = r.m;
  if (s.flow != 0 && r.p >= 0) flow("f", kPidP, r.p, r.ts, s.flow);
  s.flow = 0;
}

void jsonWriter::handle(const traceRecord& r) {
  gState& s = gs_[r.g];
  std::string g = num(r.g);
  std::string gArg = "\"g\":" + g;
  switch (r.ev) {
    case traceEv::GoCreate:
      instant(r, "create G" + g, "GoCreate", gArg + ",\"parent\":" + num(r.a0));
      break;
    case traceEv::GoStart:
      openRun(r.g, s, r);
      break;
    case traceEv::GoBlock: {
      const char* why = waitReasonString(static_cast<waitReason>(r.reason));
      closeRun(r.g, s, r.ts, why);
      s.blockTs = r.ts;
      s.reason = r.reason;
      instant(r, std::string("block: ") + why, "GoBlock",
              gArg + ",\"reason\":" + q(why));
      break;
    }
    case traceEv::GoUnblock: {
      std::string args = gArg + ",\"by\":" + num(r.a0);
      if (s.blockTs >= 0) {
        args += ",\"reason\":" +
                q(waitReasonString(static_cast<waitReason>(s.reason))) +
                ",\"blocked_ns\":" + num(r.ts - s.blockTs);
      }
      s.blockTs = -1;
      instant(r, "unblock G" + g, "GoUnblock", args);
      int pid, tid;
      track(r, &pid, &tid);
      s.flow = ++flows_;
      flow("s", pid, tid, r.ts, s.flow);
      break;
    }
    case traceEv::GoSched:
      closeRun(r.g, s, r.ts, "yield");
      break;
    case traceEv::GoPreempt:
      closeRun(r.g, s, r.ts, "preempted");
      instant(r, "preempted G" + g, "GoPreempt", gArg);
      break;
    case traceEv::GoEnd:
      closeRun(r.g, s, r.ts, "end");
      instant(r, "end G" + g, "GoEnd", gArg);
      break;
    case traceEv::GoSysCall:
      closeRun(r.g, s, r.ts, "syscall");
      s.sysTs = r.ts;
      s.sysM = r.m;
      s.sysBlock = r.a0 != 0;
      break;
    case traceEv::GoSysExit:
      if (s.sysTs >= 0) {
        slice(kPidM, s.sysM, "syscall G" + g, "syscall", s.sysTs,
              r.ts - s.sysTs,
              gArg + ",\"blocking\":" + num(s.sysBlock) +
                  ",\"exit\":" + q(r.a0 != 0 ? "fast" : "queued"));
      }
      s.sysTs = -1;
      if (r.a0 != 0) openRun(r.g, s, r);
      break;
    case traceEv::ProcRetake:
      sysmonMs_.insert(r.m);
      instant(r, "retake P" + num(r.a0), "ProcRetake",
              "\"retaken\":" + num(r.a0));
      break;
    case traceEv::PreemptReq:
      sysmonMs_.insert(r.m);
      instant(r, "preempt request P" + num(r.a0), "PreemptReq",
              "\"target_p\":" + num(r.a0));
      break;
    case traceEv::Steal:
      instant(r, "steal " + num(r.a1) + " from P" + num(r.a0), "Steal",
              "\"victim\":" + num(r.a0) + ",\"count\":" + num(r.a1));
      break;
    case traceEv::MPark:
      parkTs_[r.m] = r.ts;
      break;
    case traceEv::MUnpark: {
      auto it = parkTs_.find(r.m);
      if (it != parkTs_.end()) {
        slice(kPidM, r.m, "parked", "MPark", it->second, r.ts - it->second,
              "\"m\":" + num(r.m));
        parkTs_.erase(it);
      }
      break;
    }
    case traceEv::Usleep:
      if (r.p < 0) sysmonMs_.insert(r.m);  // sysmon's usleep: no P
      slice(kPidM, r.m >= 0 ? r.m : kTidOutside, "usleep " + num(r.a0) + "us",
            "usleep", r.ts, r.a1,
            "\"requested_us\":" + num(r.a0) + ",\"actual_ns\":" + num(r.a1));
      break;
    case traceEv::Gomaxprocs:
      instant(r, "GOMAXPROCS " + num(r.a0), "Gomaxprocs",
              "\"procs\":" + num(r.a0) + ",\"old\":" + num(r.a1));
      for (int i = 0; i < r.a0; i++) ps_.insert(i);
      break;
    case traceEv::NetpollBlock:
      instant(r, "netpoll block", "NetpollBlock", "\"delay_ns\":" + num(r.a0));
      break;
    case traceEv::NetpollWake:
      instant(r, "netpoll ready " + num(r.a0), "NetpollWake",
              "\"ready\":" + num(r.a0));
      break;
    case traceEv::SpinStart:
      spinTs_[r.m] = {r.ts, r.a0};
      break;
    case traceEv::SpinStop: {
      auto it = spinTs_.find(r.m);
      if (it != spinTs_.end()) {
        static const char* const kWhy[] = {"found work", "gave up", "gc"};
        slice(kPidM, r.m, "spinning", "spinning", it->second.first,
              r.ts - it->second.first,
              "\"m\":" + num(r.m) + ",\"start\":" +
                  q(it->second.second == kSpinWoken ? "woken" : "self") +
                  ",\"end\":" + q(r.a0 >= 0 && r.a0 <= 2 ? kWhy[r.a0] : "?"));
        spinTs_.erase(it);
      }
      break;
    }
    case traceEv::Count:
      break;
  }
}

void jsonWriter::metadata() {
  auto meta = [&](const char* what, int pid, int tid, const std::string& v) {
    out_ += ",\n{\"ph\":\"M\",\"pid\":" + num(pid) + ",\"tid\":" + num(tid) +
            ",\"name\":" + q(what) + ",\"args\":{" + v + "}}";
  };
  meta("process_name", kPidP, 0, "\"name\":\"Ps\"");
  meta("process_sort_index", kPidP, 0, "\"sort_index\":1");
  meta("process_name", kPidM, 0, "\"name\":\"Ms\"");
  meta("process_sort_index", kPidM, 0, "\"sort_index\":2");
  for (int p : ps_) {
    meta("thread_name", kPidP, p, "\"name\":\"P" + num(p) + "\"");
    meta("thread_sort_index", kPidP, p, "\"sort_index\":" + num(p));
  }
  for (int m : ms_) {
    std::string name = m == kTidOutside ? std::string("outside the runtime")
                                        : std::string("M").append(num(m));
    if (sysmonMs_.count(m) != 0) name += " (sysmon)";
    meta("thread_name", kPidM, m, "\"name\":" + q(name));
    meta("thread_sort_index", kPidM, m, "\"sort_index\":" + num(m));
  }
}

std::string jsonWriter::finish(std::int64_t end, std::int64_t dropped) {
  for (auto& [g, s] : gs_) closeRun(g, s, end, "running at trace end");
  for (auto& [m, ts] : parkTs_) {
    slice(kPidM, m, "parked", "MPark", ts, end - ts, "\"m\":" + num(m));
  }
  metadata();
  std::string head =
      "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gort\","
      "\"duration_ns\":" +
      num(end - start_) + ",\"dropped_events\":" + num(dropped) +
      ",\"gomaxprocs\":" + num(gomaxprocs.load()) + "},\n\"traceEvents\":[\n";
  return head + out_.substr(2) + "\n]}\n";  // every event began with ",\n"
}

}  // namespace

// traceJSON writes recs (from every buffer, in any order) as Chrome trace
// event JSON, times relative to start.
std::string traceJSON(std::vector<traceRecord>& recs, std::int64_t start,
                      std::int64_t end, std::int64_t dropped) {
  std::stable_sort(
      recs.begin(), recs.end(),
      [](const traceRecord& a, const traceRecord& b) { return a.ts < b.ts; });
  // A writer that saw the trace on just before StopTrace may stamp its
  // record after `end`.
  if (!recs.empty() && recs.back().ts > end) end = recs.back().ts;
  jsonWriter w(start);
  for (const traceRecord& r : recs) w.handle(r);
  return w.finish(end, dropped);
}

}  // namespace gort::runtime
