// tools/trace/trace_file.h: a gort execution trace (Chrome trace event JSON,
// as runtime/trace_json.cc writes it) read back, and its text summary.
#ifndef GORT_TOOLS_TRACE_TRACE_FILE_H_
#define GORT_TOOLS_TRACE_TRACE_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json.h"

namespace gort::trace {

inline constexpr int kPidP = 1;  // the process holding one track per P
inline constexpr int kPidM = 2;  // the process holding one track per M

// Event: one trace event (ph X slice, i instant, s/f flow, C counter).
struct Event {
  char ph = 0;
  int pid = 0;
  int tid = 0;
  double ts = 0;   // microseconds from the start of the trace
  double dur = 0;  // microseconds, slices only
  std::string name;
  std::string cat;
  Json args;
  std::int64_t id = 0;  // flows
};

// Trace: the events, and each track's name keyed by (pid, tid).
struct Trace {
  std::vector<Event> events;
  std::map<std::pair<int, int>, std::string> tracks;
  double duration_us = 0;
  std::int64_t dropped = 0;
};

// Parses a trace file's text; false with *error on malformed input.
bool ParseTrace(std::string_view text, Trace* out, std::string* error);
// Reads and parses the file at path.
bool LoadTrace(const std::string& path, Trace* out, std::string* error);

// BlockStat: how often and how long goroutines blocked for one reason.
struct BlockStat {
  std::int64_t count = 0;
  double total_ns = 0;
};

// Summary: the numbers gort-trace summary prints.
struct Summary {
  double duration_ms = 0;
  int ps = 0;
  int ms = 0;
  std::int64_t created = 0;                  // GoCreate
  std::int64_t ended = 0;                    // GoEnd
  std::int64_t goroutines = 0;               // distinct goroutines seen
  std::int64_t runs = 0;                     // goroutine slices on P tracks
  std::int64_t blocks = 0;                   // GoBlock
  std::int64_t unblocks = 0;                 // GoUnblock
  std::map<std::string, BlockStat> blocked;  // by wait reason
  std::int64_t syscalls = 0;
  std::int64_t blocking_syscalls = 0;  // entersyscallblock
  std::int64_t fast_exits = 0;         // exitsyscall kept running
  std::int64_t queued_exits = 0;       // exitsyscall found no P
  double syscall_ns = 0;
  std::int64_t retakes = 0;  // sysmon handoffs
  std::int64_t preempt_requests = 0;
  std::int64_t preempted = 0;
  std::int64_t steals = 0;
  std::int64_t stolen = 0;
  std::int64_t m_parks = 0;
  std::int64_t spins = 0;           // spinning spells (SpinStart .. SpinStop)
  std::int64_t spins_found = 0;     // ... that ended with work found
  double spin_ns = 0;               // their total length
  std::int64_t netpoll_blocks = 0;  // NetpollBlock: an M waits in the poller
  std::int64_t netpoll_wakes = 0;   // NetpollWake: a poll found goroutines
  std::int64_t netpoll_ready = 0;   // goroutines those polls readied
  std::int64_t gomaxprocs_changes = 0;
  std::int64_t usleeps = 0;
  // usleep overshoot (actual - requested) histogram: bucket upper bound in
  // microseconds (last: infinity) -> count.
  std::vector<std::pair<double, std::int64_t>> usleep_hist;
  // requested us -> {calls, mean actual us}.
  std::map<std::int64_t, std::pair<std::int64_t, double>> usleep_by_request;
  std::int64_t dropped = 0;
};

// Computes the summary of a trace.
Summary Summarize(const Trace& t);
// Formats a summary as the text gort-trace summary prints.
std::string FormatSummary(const Summary& s);

// Writes t as a self-contained HTML timeline (no network access needed).
std::string RenderHtml(const Trace& t, const std::string& title);

}  // namespace gort::trace

#endif  // GORT_TOOLS_TRACE_TRACE_FILE_H_
