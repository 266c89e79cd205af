// runtime/os/cpuprof_windows.cc: the Windows side of runtime/os/cpuprof_os.h,
// the sampler shape (Go's profileLoop (os_windows.go:1244) and profilem
// (os_windows.go:1217)).
//
// Windows has no SIGPROF. As Go does, a thread of high priority wakes every
// period (a waitable timer, high resolution where the OS has it) and, for
// each armed thread, suspends it, reads its context, lets the runtime look
// at the suspended thread's M (ProfHooks::onSuspended), and resumes it.
// Unlike Go, which samples every thread not parked on a note at each tick
// (wall time), a thread is sampled only when its CPU time (GetThreadTimes)
// has grown by a period since its last sample, so the profile counts CPU as
// Linux's per-thread CPU timers do and idle Ms cost one query per tick.
//
// The walk (amd64): while the thread is suspended nothing is called that
// may take a lock it could hold (the heap's, the loader's): the used part of
// its stack ([rsp, end of the committed region VirtualQuery reports), at most
// kCopyMax) is copied; once it runs again, the copy's pointers into the
// original stack are moved into the copy and the copy is unwound with the
// system unwinder (RtlLookupFunctionEntry, RtlVirtualUnwind) on the .pdata/
// .xdata tables GCC's SEH directives emit. The walk stops where the stack
// pointer leaves the copy.
//
// The walk (386), as Go's 386 profile has whole stacks too: with the thread
// still suspended (it only reads memory, so no lock is at stake, and nothing
// need be copied), the pc, then the frame-pointer chain from ebp, every read
// inside the used stack ([esp, end of its committed region)) and each frame
// above the last; the build keeps frame pointers on 386
// (cmake/toolchains/windows-386.cmake). Elsewhere (arm, arm64) a sample is
// the pc alone.

#include <algorithm>
#include <cstring>
#include <vector>

#include "os/cpuprof_os.h"
#include "os/windows_sdk.h"

namespace gort::os {

namespace {

// armedThread: one thread in the sampler's list.
struct armedThread {
  std::intptr_t id;
  HANDLE h;
  void* arg;
  std::int64_t credited;  // CPU time (ns) the samples so far account for
};

ProfHooks hooks{};
std::int64_t period = 10'000'000;  // ns; the first arm's
CRITICAL_SECTION mu;  // guards the rest; the sampler holds it for a round
std::vector<armedThread> armed;
std::intptr_t nextID = 1;
HANDLE timer = nullptr;

// threadCPU: thread h's user and kernel time in nanoseconds, or -1.
std::int64_t threadCPU(HANDLE h) {
  FILETIME c, e, k, u;
  if (!GetThreadTimes(h, &c, &e, &k, &u)) return -1;
  auto ticks = [](const FILETIME& f) {
    return static_cast<std::int64_t>(
        (static_cast<std::uint64_t>(f.dwHighDateTime) << 32) | f.dwLowDateTime);
  };
  return (ticks(k) + ticks(u)) * 100;
}

#if defined(__x86_64__)

constexpr std::size_t kCopyMax = 1 << 20;  // bytes of stack copied at most
// Zeroed room after the copy: the unwinder reads a frame's saved registers
// and return address before the walk checks the stack pointer it computed.
constexpr std::size_t kSlack = 64 << 10;
alignas(16) unsigned char stackCopy[kCopyMax + kSlack];  // the sampler's
std::size_t copied = 0;         // bytes of stackCopy the last sample used
std::uintptr_t copiedFrom = 0;  // the original address of stackCopy[0]
CONTEXT ctx;                    // the sampled thread's registers, the sampler's

// copyStack, with the thread suspended: its used stack into stackCopy.
void copyStack() {
  std::size_t old = copied;
  copied = 0;
  MEMORY_BASIC_INFORMATION mbi;
  std::uintptr_t lo = ctx.Rsp & ~std::uintptr_t{15};
  if (VirtualQuery(reinterpret_cast<void*>(lo), &mbi, sizeof mbi) == 0 ||
      mbi.State != MEM_COMMIT ||
      (mbi.Protect & (PAGE_GUARD | PAGE_NOACCESS)) != 0) {
    return;
  }
  std::uintptr_t top =
      reinterpret_cast<std::uintptr_t>(mbi.BaseAddress) + mbi.RegionSize;
  copied = std::min<std::size_t>(top - lo, kCopyMax);
  copiedFrom = lo;
  std::memcpy(stackCopy, reinterpret_cast<const void*>(lo), copied);
  if (old > copied) {
    std::memset(stackCopy + copied, 0, std::min(old - copied, kSlack));
  }
}

// relocate moves every register and stack word that points into the copied
// part of the original stack to the same place in the copy.
void relocate() {
  std::uintptr_t lo = copiedFrom, hi = copiedFrom + copied;
  auto delta = reinterpret_cast<std::uintptr_t>(stackCopy) - lo;
  auto move = [&](DWORD64* w) {
    if (*w >= lo && *w < hi) *w += delta;
  };
  auto* words = reinterpret_cast<DWORD64*>(stackCopy);
  for (std::size_t i = 0; i < copied / 8; i++) move(&words[i]);
  for (DWORD64* r = &ctx.Rax; r <= &ctx.R15; r++) move(r);
}

// frameRegisterOK: whether f's frame register (if it has one and has set it
// up at pc) points into the copy, where RtlVirtualUnwind will read.
bool frameRegisterOK(DWORD64 base, PRUNTIME_FUNCTION f, DWORD64 pc,
                     std::uintptr_t lo, std::uintptr_t hi) {
  const auto* info =
      reinterpret_cast<const unsigned char*>(base + f->UnwindData);
  unsigned reg = info[3] & 0xf;
  if (reg == 0 || pc - base - f->BeginAddress < info[1]) return true;
  DWORD64 v = (&ctx.Rax)[reg];
  return v >= lo && v < hi;
}

// walk: the copy unwound into pcs, as tracebackSignal's contract says.
int walk(std::uintptr_t* pcs, int max) {
  auto lo = reinterpret_cast<std::uintptr_t>(stackCopy);
  std::uintptr_t hi = lo + copied;
  int n = 0;
  while (n < max && ctx.Rip != 0) {
    DWORD64 pc = ctx.Rip;
    pcs[n] = n == 0 ? pc + 1 : pc;
    n++;
    if (ctx.Rsp < lo || ctx.Rsp + 8 > hi) break;
    DWORD64 base = 0;
    PRUNTIME_FUNCTION f = RtlLookupFunctionEntry(pc, &base, nullptr);
    if (f == nullptr) {
      if (n != 1) break;  // only a leaf function may have no unwind data
      ctx.Rip = *reinterpret_cast<DWORD64*>(ctx.Rsp);
      ctx.Rsp += 8;
      continue;
    }
    if (!frameRegisterOK(base, f, pc, lo, hi)) break;
    PVOID handlerData;
    DWORD64 frame;
    RtlVirtualUnwind(UNW_FLAG_NHANDLER, base, pc, f, &ctx, &handlerData, &frame,
                     nullptr);
  }
  return n;
}

// sampleThread: one sample of suspended thread h, armed with arg; resumes it.
void sampleThread(HANDLE h, void* arg) {
  ctx.ContextFlags = CONTEXT_CONTROL | CONTEXT_INTEGER;
  std::uintptr_t* pcs = nullptr;
  int max = 0;
  void* cookie = nullptr;
  if (GetThreadContext(h, &ctx)) {
    cookie = hooks.onSuspended(arg, ctx.Rsp, &pcs, &max);
    if (cookie != nullptr) copyStack();
  }
  ResumeThread(h);
  if (cookie == nullptr) return;
  int n = 0;
  if (copied == 0) {
    if (max > 0) pcs[n++] = ctx.Rip + 1;
  } else {
    relocate();
    n = walk(pcs, max);
  }
  hooks.onWalked(cookie, n);
}

#elif defined(__i386__)

CONTEXT ctx;  // the sampled thread's registers, the sampler's

// stackTop, with the thread suspended: the end of the committed, readable
// region holding sp (the used part of the stack is [sp, stackTop)), or 0.
std::uintptr_t stackTop(std::uintptr_t sp) {
  MEMORY_BASIC_INFORMATION mbi;
  if (VirtualQuery(reinterpret_cast<void*>(sp), &mbi, sizeof mbi) == 0 ||
      mbi.State != MEM_COMMIT ||
      (mbi.Protect & (PAGE_GUARD | PAGE_NOACCESS)) != 0) {
    return 0;
  }
  return reinterpret_cast<std::uintptr_t>(mbi.BaseAddress) + mbi.RegionSize;
}

// walkFrames, with the thread suspended: the pc, then the return addresses
// of the frame-pointer chain (each frame: the caller's ebp at [ebp], the
// return address at [ebp+4]), as tracebackSignal's contract says. It reads
// only words of the used stack, and ebp must grow at each step, so a
// garbage ebp (a function built without frame pointers using it as a
// register) ends the walk, never the process. A function that has not set
// up its frame yet (a leaf, or one before its prologue) hides its caller.
int walkFrames(std::uintptr_t* pcs, int max) {
  if (max <= 0) return 0;
  int n = 0;
  pcs[n++] = ctx.Eip + 1;
  std::uintptr_t lo = ctx.Esp, hi = stackTop(lo);
  std::uintptr_t fp = ctx.Ebp;
  while (n < max && fp >= lo && hi >= 8 && fp <= hi - 8 && fp % 4 == 0) {
    const auto* frame = reinterpret_cast<const std::uintptr_t*>(fp);
    std::uintptr_t ret = frame[1], next = frame[0];
    if (ret < 0x10000) break;  // not code (the first 64 KiB are never mapped)
    pcs[n++] = ret;
    if (next <= fp) break;
    fp = next;
  }
  return n;
}

// sampleThread: one sample of suspended thread h, armed with arg, walked
// before it resumes (the walk takes no lock and only reads); resumes it.
void sampleThread(HANDLE h, void* arg) {
  ctx.ContextFlags = CONTEXT_CONTROL;  // Eip, Esp, Ebp
  std::uintptr_t* pcs = nullptr;
  int max = 0;
  void* cookie = nullptr;
  int n = 0;
  if (GetThreadContext(h, &ctx)) {
    cookie = hooks.onSuspended(arg, ctx.Esp, &pcs, &max);
    if (cookie != nullptr) n = walkFrames(pcs, max);
  }
  ResumeThread(h);
  if (cookie != nullptr) hooks.onWalked(cookie, n);
}

#else  // the pc alone

CONTEXT ctx;

void sampleThread(HANDLE h, void* arg) {
  ctx.ContextFlags = CONTEXT_CONTROL;
  std::uintptr_t* pcs = nullptr;
  int max = 0;
  void* cookie = nullptr;
  if (GetThreadContext(h, &ctx)) {
    cookie = hooks.onSuspended(arg, ctx.Sp, &pcs, &max);
    if (cookie != nullptr && max > 0) pcs[0] = ctx.Pc + 1;
  }
  ResumeThread(h);
  if (cookie != nullptr) hooks.onWalked(cookie, max > 0 ? 1 : 0);
}

#endif

// sampleRound: each armed thread that used a period of CPU since its last
// sample, sampled once (the loop over allm in Go's profileLoop
// (os_windows.go:1244)).
void sampleRound() {
  EnterCriticalSection(&mu);
  for (armedThread& a : armed) {
    std::int64_t cpu = threadCPU(a.h);
    if (cpu < 0 || cpu - a.credited < period) continue;
    // The CPU counter may move in steps of more than a period (a clock
    // tick): the credit catches up, one sample a round, by at most two.
    a.credited = std::max(a.credited + period, cpu - 2 * period);
    if (SuspendThread(a.h) == static_cast<DWORD>(-1)) continue;  // exited
    sampleThread(a.h, a.arg);
  }
  LeaveCriticalSection(&mu);
}

// profileLoop mirrors Go's profileLoop (os_windows.go:1244): a round per
// tick of the timer, at the highest thread priority.
DWORD WINAPI profileLoop(LPVOID) {
  SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_HIGHEST);
  for (;;) {
    WaitForSingleObject(timer, INFINITE);
    sampleRound();
  }
}

}  // namespace

bool installProfHandler(const ProfHooks& h, const char** why) {
  static bool installed = false;  // callers serialize (cpuprof.cc's lock)
  if (installed) return true;
  hooks = h;
  InitializeCriticalSection(&mu);
  timer = CreateWaitableTimerExW(nullptr, nullptr,
                                 CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
                                 TIMER_ALL_ACCESS);
  if (timer == nullptr) timer = CreateWaitableTimerW(nullptr, FALSE, nullptr);
  HANDLE t = timer == nullptr ? nullptr
                              : CreateThread(nullptr, 64 << 10, profileLoop,
                                             nullptr, 0, nullptr);
  if (t == nullptr) {
    *why = "cannot start the CPU profiler's sampling thread";
    return false;
  }
  CloseHandle(t);  // it runs as long as the process
  installed = true;
  return true;
}

std::intptr_t threadProfTimerStart(std::int64_t tid, std::int64_t periodNs,
                                   void* arg) {
  HANDLE h = OpenThread(
      THREAD_SUSPEND_RESUME | THREAD_GET_CONTEXT | THREAD_QUERY_INFORMATION,
      FALSE, static_cast<DWORD>(tid));
  if (h == nullptr) return -1;
  std::int64_t cpu = threadCPU(h);
  if (cpu < 0) {
    CloseHandle(h);
    return -1;
  }
  EnterCriticalSection(&mu);
  if (armed.empty()) {
    period = periodNs;
    LARGE_INTEGER due;
    due.QuadPart = -periodNs / 100;  // relative, in 100 ns
    SetWaitableTimer(
        timer, &due,
        static_cast<LONG>(std::max<std::int64_t>(1, periodNs / 1'000'000)),
        nullptr, nullptr, FALSE);
  }
  std::intptr_t id = nextID++;
  armed.push_back({id, h, arg, cpu});
  LeaveCriticalSection(&mu);
  return id;
}

void threadProfTimerStop(std::intptr_t id) {
  EnterCriticalSection(&mu);
  for (auto it = armed.begin(); it != armed.end(); ++it) {
    if (it->id != id) continue;
    CloseHandle(it->h);
    armed.erase(it);
    break;
  }
  if (armed.empty()) CancelWaitableTimer(timer);
  LeaveCriticalSection(&mu);
}

// tracebackSignal: no signal here (the sampler walks instead).
int tracebackSignal(const void*, const void*, std::uintptr_t*, int) {
  return 0;
}

}  // namespace gort::os
