// runtime/arch/arch.h: the assembly trampolines of runtime/arch, callable from
// the OS layer only (Go's sys_<goos>_<goarch>.s and asm_<goarch>.s). Each
// architecture's .S file defines the same C-ABI symbols.
#ifndef GORT_RUNTIME_ARCH_ARCH_H_
#define GORT_RUNTIME_ARCH_ARCH_H_

#include <cstdint>

extern "C" {
#if defined(_WIN32)
// Windows (runtime/arch/sys_windows_<goarch>.S; contract and calling
// conventions in runtime/arch/windows_trampolines.md).
// Sleeps usec microseconds: NtWaitForSingleObject on the process handle
// with a relative timeout (Go's usleep2 (os_windows.go:1153)).
void gort_usleep2(std::uint32_t usec);
// Sleeps usec microseconds on the M's high-resolution waitable timer (Go's
// usleep2HighRes). Returns 1 once it has waited, or 0 at once, without
// waiting, when SetWaitableTimer failed (every architecture).
int gort_usleep2HighRes(std::uint32_t usec, void* timer);
// SwitchToThread (Go's switchtothread (os_windows.go:1155)).
void gort_switchtothread();
// Entry points the trampolines call through, filled by os_windows.cc.
extern void* gort_SetWaitableTimer;
extern void* gort_NtWaitForSingleObject;
extern void* gort_SwitchToThread;
#else
// Sleeps usec microseconds with nanosleep (Go's usleep (stubs2.go:21)).
void gort_usleep(std::uint32_t usec);
// Raw futex(2); returns the kernel's result (negative errno on failure).
std::intptr_t gort_futex(void* addr, int op, std::uint32_t val,
                         const void* timeout, void* addr2, std::uint32_t val3);
// sched_yield(2) (Go's osyield (sys_linux_amd64.s:655)).
void gort_osyield();
// Executes `cycles` pause instructions (Go's procyield (stubs.go:285)).
void gort_procyield(std::uint32_t cycles);
#endif
#if defined(GORT_ARCH_GOGO)
// The goroutine switch (runtime/arch/gogo_<goos>_<goarch>.S; the context
// layout is described there). Saves the running context in *save and
// resumes `to` (Go's gogo (stubs.go:233), with mcall's save).
void gort_gogo(void** save, void* to);
// A context on the stack below top that starts entry (which must not
// return) with the ABI's stack alignment, under a frame that ends unwinding.
void* gort_newcontext(void* top, void (*entry)());
#endif
}

#endif  // GORT_RUNTIME_ARCH_ARCH_H_
