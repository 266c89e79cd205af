// tools/trace/trace_file.cc: reading a trace back and summarizing it. The
// summary counts what the runtime's writer recorded (see the comment at the
// top of runtime/trace_json.cc for what each cat means).
#include "trace_file.h"

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace gort::trace {

namespace {

Event ToEvent(const Json& j) {
  Event e;
  std::string ph = j.Str("ph");
  e.ph = ph.empty() ? '?' : ph[0];
  e.pid = static_cast<int>(j.NumOr("pid", 0));
  e.tid = static_cast<int>(j.NumOr("tid", 0));
  e.ts = j.NumOr("ts", 0);
  e.dur = j.NumOr("dur", 0);
  e.name = j.Str("name");
  e.cat = j.Str("cat");
  e.args = j["args"];
  e.id = static_cast<std::int64_t>(j.NumOr("id", 0));
  return e;
}

}  // namespace

bool ParseTrace(std::string_view text, Trace* out, std::string* error) {
  Json root;
  if (!ParseJson(text, &root, error)) return false;
  const Json& evs = root["traceEvents"];
  if (evs.kind != Json::Kind::kArray) {
    *error = "no traceEvents array";
    return false;
  }
  *out = Trace{};
  out->duration_us = root["otherData"].NumOr("duration_ns", 0) / 1000;
  out->dropped =
      static_cast<std::int64_t>(root["otherData"].NumOr("dropped_events", 0));
  for (const Json& j : evs.array) {
    Event e = ToEvent(j);
    if (e.ph == 'M') {
      if (e.name == "thread_name") {
        out->tracks[{e.pid, e.tid}] = e.args.Str("name");
      }
      continue;
    }
    double end = e.ts + e.dur;
    if (end > out->duration_us) out->duration_us = end;
    out->events.push_back(std::move(e));
  }
  return true;
}

bool LoadTrace(const std::string& path, Trace* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open " + path;
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseTrace(ss.str(), out, error);
}

namespace {

constexpr double kUsleepBuckets[] = {5,   10,   20,   50,   100, 200,
                                     500, 1000, 2000, 5000, -1};

void AddUsleep(Summary* s, const Event& e) {
  s->usleeps++;
  auto req = static_cast<std::int64_t>(e.args.NumOr("requested_us", 0));
  double actual_us = e.args.NumOr("actual_ns", 0) / 1000;
  double over = actual_us - static_cast<double>(req);
  for (auto& [bound, count] : s->usleep_hist) {
    if (bound < 0 || over < bound) {
      count++;
      break;
    }
  }
  auto& [n, mean] = s->usleep_by_request[req];
  n++;
  mean += (actual_us - mean) / static_cast<double>(n);
}

void AddEvent(Summary* s, const Event& e, std::set<std::int64_t>* gs) {
  if (e.args.Has("g") && e.args.NumOr("g", 0) > 0) {
    gs->insert(static_cast<std::int64_t>(e.args.NumOr("g", 0)));
  }
  const std::string& c = e.cat;
  if (c == "goroutine" && e.pid == kPidP) s->runs++;
  if (c == "GoCreate") s->created++;
  if (c == "GoEnd") s->ended++;
  if (c == "GoBlock") s->blocks++;
  if (c == "GoUnblock") {
    s->unblocks++;
    if (e.args.Has("blocked_ns")) {
      BlockStat& b = s->blocked[e.args.Str("reason")];
      b.count++;
      b.total_ns += e.args.NumOr("blocked_ns", 0);
    }
  }
  if (c == "syscall") {
    s->syscalls++;
    s->syscall_ns += e.dur * 1000;
    if (e.args.NumOr("blocking", 0) != 0) s->blocking_syscalls++;
    (e.args.Str("exit") == "fast" ? s->fast_exits : s->queued_exits)++;
  }
  if (c == "ProcRetake") s->retakes++;
  if (c == "PreemptReq") s->preempt_requests++;
  if (c == "GoPreempt") s->preempted++;
  if (c == "Steal") {
    s->steals++;
    s->stolen += static_cast<std::int64_t>(e.args.NumOr("count", 0));
  }
  if (c == "MPark") s->m_parks++;
  if (c == "spinning") {
    s->spins++;
    s->spin_ns += e.dur * 1000;
    if (e.args.Str("end") == "found work") s->spins_found++;
  }
  if (c == "NetpollBlock") s->netpoll_blocks++;
  if (c == "NetpollWake") {
    s->netpoll_wakes++;
    s->netpoll_ready += static_cast<std::int64_t>(e.args.NumOr("ready", 0));
  }
  if (c == "Gomaxprocs") s->gomaxprocs_changes++;
  if (c == "usleep") AddUsleep(s, e);
}

}  // namespace

Summary Summarize(const Trace& t) {
  Summary s;
  s.duration_ms = t.duration_us / 1000;
  s.dropped = t.dropped;
  for (double b : kUsleepBuckets) s.usleep_hist.push_back({b, 0});
  std::set<int> ps, ms;
  for (const auto& [key, name] : t.tracks) {
    (key.first == kPidP ? ps : ms).insert(key.second);
  }
  s.ps = static_cast<int>(ps.size());
  s.ms = static_cast<int>(ms.size());
  std::set<std::int64_t> gs;
  for (const Event& e : t.events) AddEvent(&s, e, &gs);
  s.goroutines = static_cast<std::int64_t>(gs.size());
  return s;
}

namespace {

std::string Fmt(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

std::string I(std::int64_t v) { return std::to_string(v); }

}  // namespace

std::string FormatSummary(const Summary& s) {
  std::string o;
  o += Fmt("trace: %.3f ms, ", s.duration_ms) + I(s.ps) + " Ps, " + I(s.ms) +
       " Ms, GOMAXPROCS changes: " + I(s.gomaxprocs_changes) + "\n";
  if (s.dropped > 0) o += "dropped events: " + I(s.dropped) + "\n";
  o += "goroutines: " + I(s.goroutines) + " seen, " + I(s.created) +
       " created, " + I(s.ended) + " ended, " + I(s.runs) + " runs\n";
  o += "blocked: " + I(s.blocks) + " blocks, " + I(s.unblocks) + " unblocks\n";
  for (const auto& [reason, b] : s.blocked) {
    o += "  " + reason;
    o += std::string(reason.size() < 24 ? 24 - reason.size() : 1, ' ');
    o += Fmt("%10.0f times  %12.3f ms total  %10.3f us mean\n",
             static_cast<double>(b.count), b.total_ns / 1e6,
             b.count > 0 ? b.total_ns / 1e3 / static_cast<double>(b.count) : 0);
  }
  o += "syscalls: " + I(s.syscalls) + " (" + I(s.blocking_syscalls) +
       " blocking), " + Fmt("%.3f ms in syscalls; ", s.syscall_ns / 1e6) +
       "exits: " + I(s.fast_exits) + " fast, " + I(s.queued_exits) +
       " queued\n";
  o += "sysmon: " + I(s.retakes) + " syscall handoffs (P retaken), " +
       I(s.preempt_requests) + " preemption requests, " + I(s.preempted) +
       " goroutines preempted\n";
  o += "steals: " + I(s.steals) + " (" + I(s.stolen) + " goroutines moved)\n";
  o += "spinning: " + I(s.spins) + " spells (" + I(s.spins_found) +
       " found work, " + I(s.spins - s.spins_found) + " did not), " +
       Fmt("%.3f ms spinning\n", s.spin_ns / 1e6);
  o += "M parks: " + I(s.m_parks) + "\n";
  if (s.netpoll_blocks + s.netpoll_wakes > 0) {
    o += "netpoll: " + I(s.netpoll_blocks) + " blocking polls, " +
         I(s.netpoll_wakes) + " wake-ups, " + I(s.netpoll_ready) +
         " goroutines readied\n";
  }
  o += "usleep: " + I(s.usleeps) + " calls\n";
  for (const auto& [req, v] : s.usleep_by_request) {
    o += "  usleep(" + I(req) + ") " + I(v.first) + " calls, " +
         Fmt("mean %.1f us\n", v.second);
  }
  if (s.usleeps > 0) o += "  overshoot (actual - requested):\n";
  double lo = 0;
  for (const auto& [bound, count] : s.usleep_hist) {
    if (s.usleeps == 0) break;
    std::string range =
        bound < 0 ? Fmt(">= %.0f us", lo) : Fmt("%.0f-%.0f us", lo, bound);
    int bar = static_cast<int>(40 * count / s.usleeps);
    o += "    " + range +
         std::string(range.size() < 14 ? 14 - range.size() : 1, ' ') +
         Fmt("%8.0f ", static_cast<double>(count)) + std::string(bar, '#') +
         "\n";
    lo = bound;
  }
  return o;
}

}  // namespace gort::trace
