// runtime/panic.h: fatal errors and goroutine panics (Go's panic.go, the
// parts that end the process).
#ifndef GORT_RUNTIME_PANIC_H_
#define GORT_RUNTIME_PANIC_H_

#include <cstdint>

namespace gort::runtime {

// Every fatal error is printed one way: any context lines first ("runtime:
// ..." with printErr, as Go prints before it throws), then printFatal's
// "fatal error: msg" line, then anything Go prints after it (a goroutine
// header, checkdead's list), then dieFatal. throw_ does the common case.

// printFatal writes Go's "fatal error: msg" line to standard error.
void printFatal(const char* msg);
// throw_ prints "fatal error: msg" and exits with status 2 (Go's throw
// (panic.go:1040)); with GOTRACEBACK=crash it aborts instead (SIGABRT), as Go
// does.
[[noreturn]] void throw_(const char* msg);
// throwErrno prints "runtime: msg: errno err", then throws msg (Go's
// println of the error code before throw).
[[noreturn]] void throwErrno(const char* msg, int err);
// fatalpanic prints "panic: msg" and "goroutine N [running]:" and exits with
// status 2 (Go's fatalpanic (panic.go:1143) for an unrecovered panic);
// GOTRACEBACK=crash aborts instead.
[[noreturn]] void fatalpanic(const char* msg, std::int64_t goid);
// dieFatal ends the process after a fatal error or an unrecovered panic:
// exit status 2, or with GOTRACEBACK=crash an abort (SIGABRT), as Go's
// crash does, so a debugger, a core dump or a fuzzer's crash handler sees it.
[[noreturn]] void dieFatal();
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
