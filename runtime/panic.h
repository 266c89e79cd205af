// runtime/panic.h: fatal errors and goroutine panics (Go's panic.go, the
// parts that end the process).
#ifndef GORT_RUNTIME_PANIC_H_
#define GORT_RUNTIME_PANIC_H_

#include <cstdint>
#include <string>

namespace gort::runtime {

// Every fatal error is printed one way: any context lines first ("runtime:
// ..." with printErr, as Go prints before it throws), then printFatal's
// "fatal error: msg" line, then dieFatal, which prints the goroutines as
// the kind of error asks. throw_ and fatal do the common cases.

// throwType mirrors Go's throwType (panic.go:16): what ends the process,
// which decides what its traceback shows.
enum class throwType {
  none,     // an unrecovered panic: the panicking goroutine (all with
            // GOTRACEBACK=all)
  user,     // a fatal error in the program (deadlock): every goroutine
  runtime,  // a runtime bug: every goroutine, runtime frames included
};

// startpanic mirrors Go's startpanic_m (panic.go:1192): from now on the
// process is reporting its death, and printWarning stays silent so that no
// warning lands inside the report (Go's printlock (print.go:66) keeps prints
// whole; the only print that races a report in gort is sysmon's block warning).
void startpanic();
// printWarning writes msg to standard error unless a report has begun;
// startpanic waits for a warning being written to end.
void printWarning(const std::string& msg);
// printFatal writes Go's "fatal error: msg" line to standard error.
void printFatal(const char* msg);
// throw_ prints "fatal error: msg", every goroutine with runtime frames, and
// exits with status 2 (Go's throw (panic.go:1040)); with GOTRACEBACK=crash it
// aborts instead (SIGABRT), as Go does.
[[noreturn]] void throw_(const char* msg);
// fatal prints "fatal error: msg" and every goroutine, then exits as throw_
// does (Go's fatal (panic.go:1059): an error of the program, not the
// runtime, so runtime frames stay hidden).
[[noreturn]] void fatal(const char* msg);
// throwErrno prints "runtime: msg: errno err", then throws msg (Go's
// println of the error code before throw).
[[noreturn]] void throwErrno(const char* msg, int err);
// fatalpanic prints "panic: msg", "goroutine N [running]:" and the frames
// from the throw, and exits with status 2 (Go's fatalpanic (panic.go:1143)
// for an unrecovered panic); GOTRACEBACK=crash aborts instead.
[[noreturn]] void fatalpanic(const char* msg, std::int64_t goid);
// dieFatal ends the process after a fatal error or an unrecovered panic:
// the traceback t asks for (tracebackFatal), then exitFatal.
[[noreturn]] void dieFatal(throwType t);
// exitFatal: exit status 2, or with GOTRACEBACK=crash an abort (SIGABRT), as
// Go's crash (signal_unix.go:951) does, so a debugger, a core dump or a
// fuzzer's crash handler sees it.
[[noreturn]] void exitFatal();
// initTerminateHandler makes std::terminate report an exception that ended
// a goroutine as Go reports an unrecovered panic (see gbody in gogo.cc);
// other terminations go to the handler the program had. Once per process.
void initTerminateHandler();
// sigstackoverflow is the fault hook: a fault in the running goroutine's
// guard page, or while its unguarded stack's canary is broken or its stack
// pointer sp is below the stack, is a stack overflow (stackoverflow).
void sigstackoverflow(void* addr, void* sp);
// minitSignalStack / unminitSignalStack: the M's alternate signal stack
// (not under sanitizers, which handle faults themselves).
void minitSignalStack();
void unminitSignalStack();
// initFaultHandler installs sigstackoverflow once per process.
void initFaultHandler();
// printErr writes a string to standard error without allocating.
void printErr(const char* s);
// printErrInt writes a decimal integer to standard error without allocating.
void printErrInt(std::int64_t v);

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_PANIC_H_
