// gort/trace.h: the execution trace (Go's runtime/trace: Start and Stop).
// A trace records goroutine, syscall, sysmon, steal, M and usleep events and
// is written as Chrome trace event JSON (Perfetto and chrome://tracing open
// it; tools/gort-trace makes an HTML timeline and a summary of it). Setting
// GORT_TRACE=path traces each Run from start to end instead.
#ifndef GORT_TRACE_H_
#define GORT_TRACE_H_

#include <string>

namespace gort {

// Starts recording a trace to be written to path; false if one is running.
[[nodiscard]] bool StartTrace(const std::string& path);

// Stops the trace and writes it; false if none ran or the file failed.
[[nodiscard]] bool StopTrace();

// Reports whether a trace is being recorded.
[[nodiscard]] bool TraceEnabled();

}  // namespace gort

#endif  // GORT_TRACE_H_
