// runtime/arch/arch.h: the assembly trampolines of runtime/arch, callable from
// the OS layer only (Go's sys_<goos>_<goarch>.s and asm_<goarch>.s). Each
// architecture's .S file defines the same C-ABI symbols.
#ifndef GORT_RUNTIME_ARCH_ARCH_H_
#define GORT_RUNTIME_ARCH_ARCH_H_

#include <cstdint>

extern "C" {
// Sleeps usec microseconds with nanosleep (Go's usleep).
void gort_usleep(std::uint32_t usec);
// Raw futex(2); returns the kernel's result (negative errno on failure).
std::intptr_t gort_futex(void* addr, int op, std::uint32_t val,
                         const void* timeout, void* addr2, std::uint32_t val3);
// sched_yield(2) (Go's osyield).
void gort_osyield();
// Executes `cycles` pause instructions (Go's procyield).
void gort_procyield(std::uint32_t cycles);
}

#endif  // GORT_RUNTIME_ARCH_ARCH_H_
