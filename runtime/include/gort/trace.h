// gort/trace.h: the execution trace (Go's runtime/trace: Start and Stop).
// A trace records goroutine, syscall, sysmon, steal, M and usleep events and
// is written in the execution-trace format of Go 1.19 (`go tool trace` opens
// it) or as Chrome trace event JSON (Perfetto and chrome://tracing open it;
// tools/gort-trace makes an HTML timeline and a summary of it). Setting
// GORT_TRACE=path traces each Run from start to end instead, in Go's format,
// or in JSON with GORT_TRACE_FORMAT=json.
#ifndef GORT_TRACE_H_
#define GORT_TRACE_H_

#include <string>

namespace gort {

// How a trace is written.
enum class TraceFormat {
  kGo,          // the execution trace of Go 1.19, for `go tool trace`
  kChromeJSON,  // Chrome trace event JSON, for Perfetto and gort-trace
};

// Starts recording a trace to be written to path in format; false if one is
// running.
[[nodiscard]] bool StartTrace(const std::string& path,
                              TraceFormat format = TraceFormat::kGo);

// Stops the trace and writes it; false if none ran or the file failed.
[[nodiscard]] bool StopTrace();

// Reports whether a trace is being recorded.
[[nodiscard]] bool TraceEnabled();

}  // namespace gort

#endif  // GORT_TRACE_H_
