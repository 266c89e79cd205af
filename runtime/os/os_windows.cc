// runtime/os/os_windows.cc: the Windows side of runtime/os/os.h (Go's
// os_windows.go, mem_windows.go and the usleep half of sys_windows_*.s).
//
// usleep is what this file is about. osinit probes for a high-resolution
// waitable timer (CreateWaitableTimerExW with
// CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, Windows 10 1803 and later). With
// it, every M creates its own timer when it starts (setThreadTimerMode, Go's
// minit) and closes it when it ends (mdestroy), and usleep sleeps on it
// through the gort_usleep2HighRes trampoline; the process never calls
// timeBeginPeriod. Without it, or when a Run asks for UsleepMode::kLowRes,
// usleep uses gort_usleep2 (a relative NtWaitForSingleObject timeout) with
// the system timer period lowered to 1 ms by timeBeginPeriod(1), Go 1.15's
// way.
//
// Where gort differs from Go, it keeps running instead of throwing or
// hanging, and never silently sleeps at the default 15.6 ms tick:
//   - an M whose own timer cannot be created (the probe succeeded, e.g. the
//     process is out of handles) becomes a low-resolution M;
//   - an M whose SetWaitableTimer fails (the trampoline reports it) sleeps
//     that time with gort_usleep2 and becomes a low-resolution M too.
// Both are counted (timerFallbacks, Stats.usleep_fallbacks; the runtime
// prints them under GODEBUG=usleepdebug=1). The 1 ms period is a process
// resource taken while any low-resolution M lives and released when none
// does, when sysmon relaxes (osRelax: every P idle, Go's osRelax
// (os_windows.go:426)) and at the end of each Run, so an idle or finished
// program does not keep the machine's timer interrupt at 1 kHz.
//
// System DLLs (winmm.dll for timeBeginPeriod, and the others resolved here)
// are loaded from System32 only (loadSystemLib, Go's windowsLoadSystemLib
// (os_windows.go:228)), never from the application's directory. The entry
// points the trampolines call are resolved with GetProcAddress into gort_*
// globals, as Go's runtime resolves its own. The calls the fault paths depend
// on go through windows_testing::hooks so tests can force each one to fail
// (tests/os_windows_test.cc).
//
// Goroutine stacks are Windows fibres (runtime/os/gogo_fiber.cc). Notes
// and futexes use WaitOnAddress, whose timeout is in whole milliseconds. So
// that every timed M wait is as precise as usleep (the idle M waiting for the
// next timer, sysmon's deep sleep, stopTheWorld's wait: notetsleep), a timed
// futexsleep on a high-resolution M waits on the M's timer and on its own
// wake event instead, and futexwakeup sets the event of each such sleeper on
// the address (futexsleepOnTimer, below). Go's Windows runtime has no futex:
// its notes sleep on a per-M event with a millisecond timeout (semasleep,
// lock_sema.go), and its idle M waits for timers in netpoll, where newer Go
// (after 1.19) associates a high-resolution timer with the completion port
// (netpoll_windows.go); gort's notes stay futex-based, and its idle M waits
// on its note when no descriptor is registered.
#include <malloc.h>  // _heapmin
#include <stdlib.h>

#include <atomic>
#include <memory>

#include "arch/arch.h"
#include "os/os.h"
#include "os/os_windows_testing.h"
#include "os/windows_sdk.h"

// The trampolines' entry points (runtime/arch/windows_trampolines.md).
extern "C" {
void* gort_SetWaitableTimer = nullptr;
void* gort_NtWaitForSingleObject = nullptr;
void* gort_SwitchToThread = nullptr;
}

namespace gort::os {

namespace {
HMODULE loadSystemLib(const wchar_t* name);
bool realHaveSearchSystem32();
}  // namespace

namespace windows_testing {

namespace {
void* realCreateTimer(std::uint32_t flags, std::uint32_t access) {
  return CreateWaitableTimerExW(nullptr, nullptr, flags, access);
}
void* realLoadWinmm() { return loadSystemLib(L"winmm.dll"); }
void* realCreateEvent() { return CreateEventW(nullptr, FALSE, FALSE, nullptr); }
}  // namespace

Hooks hooks = {realCreateTimer, realLoadWinmm, realHaveSearchSystem32,
               realCreateEvent};
Counters counters;

}  // namespace windows_testing

namespace {

namespace wt = windows_testing;

constexpr DWORD kTimerAccess =
    SYNCHRONIZE | TIMER_QUERY_STATE | TIMER_MODIFY_STATE;

using WaitOnAddressFn = BOOL(WINAPI*)(volatile VOID*, PVOID, SIZE_T, DWORD);
using WakeByAddressFn = VOID(WINAPI*)(PVOID);
using TimePeriodFn = UINT(WINAPI*)(UINT);

// Process-wide state set by osinit before any M runs.
bool haveHighRes = false;  // Go's haveHighResTimer (os_windows.go:443)
WaitOnAddressFn waitOnAddress = nullptr;  // kernelbase!WaitOnAddress
WakeByAddressFn wakeOne = nullptr;        // kernelbase!WakeByAddressSingle
WakeByAddressFn wakeAll = nullptr;        // kernelbase!WakeByAddressAll
void* realSetWaitableTimer = nullptr;
void* realNtWaitForSingleObject = nullptr;
void* realSwitchToThread = nullptr;
std::atomic<std::int64_t> fallbacks{0};  // timerFallbacks()

// The 1 ms timer period, guarded by periodLock: held while lowResMs > 0
// and not relaxed.
SRWLOCK periodLock = SRWLOCK_INIT;
int lowResMs = 0;         // live Ms that sleep with gort_usleep2
bool relaxed = false;     // osRelax(true) in effect
bool periodHeld = false;  // timeBeginPeriod(1) in effect
bool winmmTried = false;  // winmm.dll looked up (once per reinit)
TimePeriodFn timeBeginPeriod1 = nullptr;  // winmm!timeBeginPeriod
TimePeriodFn timeEndPeriod1 = nullptr;    // winmm!timeEndPeriod
std::atomic<bool> winmmLoaded{false};

// Per-M state (Go keeps it in m.highResTimer and the g0 stack bounds).
thread_local HANDLE mTimer = nullptr;       // this M's high-resolution timer
thread_local HANDLE mWakeEvent = nullptr;   // wakes its timed futexsleeps
thread_local bool mHighRes = false;         // usleep sleeps on mTimer
thread_local bool mLowRes = false;          // counted in lowResMs
thread_local ULONG_PTR g0Lo = 0, g0Hi = 0;  // the M's own stack (g0)

// realHaveSearchSystem32: whether LoadLibraryExW understands
// LOAD_LIBRARY_SEARCH_SYSTEM32 (Windows 8, or 7 with KB2533623); Go tests
// for AddDllDirectory, which arrived with it.
bool realHaveSearchSystem32() {
  HMODULE k32 = GetModuleHandleW(L"kernel32.dll");
  return k32 != nullptr && GetProcAddress(k32, "AddDllDirectory") != nullptr;
}

// loadSystemLib mirrors Go's windowsLoadSystemLib (os_windows.go:228): a DLL
// from System32 only, never from the application's directory or the current one
// (DLL planting). Without LOAD_LIBRARY_SEARCH_SYSTEM32, or if LoadLibraryExW
// rejects the flag, the DLL is loaded by its full path in the system
// directory.
HMODULE loadSystemLib(const wchar_t* name) {
  if (wt::hooks.haveSearchSystem32()) {
    HMODULE h = LoadLibraryExW(name, nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (h != nullptr || GetLastError() != ERROR_INVALID_PARAMETER) return h;
  }
  wchar_t path[MAX_PATH + 32];
  UINT n = GetSystemDirectoryW(path, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) return nullptr;
  std::size_t len = wcslen(name);
  if (n + 1 + len >= sizeof(path) / sizeof(path[0])) return nullptr;
  path[n] = L'\\';
  wmemcpy(path + n + 1, name, len + 1);
  return LoadLibraryW(path);
}

void* proc(const wchar_t* dll, const char* name) {
  HMODULE h = loadSystemLib(dll);
  return h == nullptr ? nullptr
                      : reinterpret_cast<void*>(GetProcAddress(h, name));
}

// osinit mirrors the Windows half of Go's osinit (os_windows.go:546)
// (loadOptionalSyscalls and initHighResTimer): resolve the entry points, probe
// the timer.
void osinit() {
  realNtWaitForSingleObject = proc(L"ntdll.dll", "NtWaitForSingleObject");
  gort_NtWaitForSingleObject = realNtWaitForSingleObject;
  realSetWaitableTimer = proc(L"kernel32.dll", "SetWaitableTimer");
  gort_SetWaitableTimer = realSetWaitableTimer;
  realSwitchToThread = proc(L"kernel32.dll", "SwitchToThread");
  gort_SwitchToThread = realSwitchToThread;
  waitOnAddress = reinterpret_cast<WaitOnAddressFn>(
      proc(L"kernelbase.dll", "WaitOnAddress"));
  wakeOne = reinterpret_cast<WakeByAddressFn>(
      proc(L"kernelbase.dll", "WakeByAddressSingle"));
  wakeAll = reinterpret_cast<WakeByAddressFn>(
      proc(L"kernelbase.dll", "WakeByAddressAll"));
  if (gort_NtWaitForSingleObject == nullptr || gort_SwitchToThread == nullptr ||
      waitOnAddress == nullptr || wakeOne == nullptr || wakeAll == nullptr) {
    static const char msg[] =
        "fatal error: runtime: a required Windows entry point is missing\n";
    writeErr(msg, sizeof(msg) - 1);
    exit(2);
  }
  void* h = wt::hooks.createTimer(CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
                                  kTimerAccess);
  haveHighRes = h != nullptr;
  if (h != nullptr) CloseHandle(h);
}

void ensureInit() {
  static const bool done = (osinit(), true);
  (void)done;
}

// findWinmm loads winmm.dll the first time the period is needed (only the
// low-resolution path needs it). If winmm is missing, usleep2 still works,
// at the default resolution.
void findWinmm() {
  if (winmmTried) return;
  winmmTried = true;
  HMODULE winmm = static_cast<HMODULE>(wt::hooks.loadWinmm());
  if (winmm == nullptr) return;
  winmmLoaded.store(true);
  auto begin = reinterpret_cast<TimePeriodFn>(
      reinterpret_cast<void*>(GetProcAddress(winmm, "timeBeginPeriod")));
  auto end = reinterpret_cast<TimePeriodFn>(
      reinterpret_cast<void*>(GetProcAddress(winmm, "timeEndPeriod")));
  if (begin == nullptr || end == nullptr) return;
  timeBeginPeriod1 = begin;
  timeEndPeriod1 = end;
}

// updatePeriodLocked takes or releases the 1 ms period so that it is held
// exactly while a low-resolution M lives and sysmon has not relaxed.
void updatePeriodLocked() {
  bool want = lowResMs > 0 && !relaxed;
  if (want == periodHeld) return;
  if (want) {
    findWinmm();
    if (timeBeginPeriod1 == nullptr) return;
    timeBeginPeriod1(1);
    wt::counters.timeBeginPeriods.fetch_add(1);
  } else {
    timeEndPeriod1(1);
    wt::counters.timeEndPeriods.fetch_add(1);
  }
  periodHeld = want;
}

// becomeLowRes makes the calling M sleep with gort_usleep2 from now on,
// with the 1 ms period held for it.
void becomeLowRes() {
  mHighRes = false;
  if (mLowRes) return;
  mLowRes = true;
  AcquireSRWLockExclusive(&periodLock);
  lowResMs++;
  updatePeriodLocked();
  ReleaseSRWLockExclusive(&periodLock);
}

// fallBack: the M wanted its high-resolution timer and cannot use it.
void fallBack(std::atomic<std::int64_t>* why) {
  why->fetch_add(1);
  fallbacks.fetch_add(1);
  becomeLowRes();
}

// createWakeEvent gives a high-resolution M the event its timed futex
// waits are woken by; without one they wait with WaitOnAddress (counted in
// wakeEventFailures), and usleep keeps the timer.
void createWakeEvent() {
  if (mWakeEvent != nullptr) return;
  mWakeEvent = static_cast<HANDLE>(wt::hooks.createEvent());
  if (mWakeEvent == nullptr) wt::counters.wakeEventFailures.fetch_add(1);
}

// noteStack counts whether usleep runs on the M's own stack; false if the
// caller is not an M (a thread outside the runtime).
bool noteStack() {
  if (g0Hi == 0) {
    wt::counters.nonMSleeps.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  char here;
  auto sp = reinterpret_cast<ULONG_PTR>(&here);
  if (sp >= g0Lo && sp < g0Hi) {
    wt::counters.onG0Sleeps.fetch_add(1, std::memory_order_relaxed);
  } else {
    wt::counters.offG0Sleeps.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

// ---- timed futex waits on the M's timer ----------------------------------
//
// WaitOnAddress takes its timeout in milliseconds and cannot wait on a
// handle, so a timed wait that must end at the M's high-resolution timer
// waits with WaitForMultipleObjects on {the M's wake event, its timer}
// instead, and futexwakeup sets the event of each such sleeper on the
// address. The sleeper's record lives on its stack and is linked, for the
// wait only, into one of 64 lists chosen by address, each with its own lock
// and count. futexwakeup with no timed sleeper in the bucket
// costs a fence and one load.
//
// No lost wake-up: the sleeper counts itself in the bucket, then (seq_cst
// fence) re-reads *addr and does not wait if it changed; the waker changed
// *addr before calling futexwakeup, which (seq_cst fence) then reads the
// count. Either the sleeper sees the new value or the waker sees the count
// and, under the bucket's lock, finds the record and sets the event.
// Spurious returns are allowed (notetsleep loops), a stale signal is not:
// the sleeper consumes a set event it did not wait for, and cancels and
// drains a timer it did not wait for (SetWaitableTimer clears a
// manual-reset timer's signal, but Wine keeps an auto-reset one's, which
// usleep's next wait would take at once). The waker sets the event under
// the bucket's lock, so the sleeper, which settles under it, never sees
// woken before the event is set, and never returns (and never closes the
// event at mdestroy) while a waker still holds its record.

struct TimerSleeper {
  std::uint32_t* addr;  // the futex word slept on
  HANDLE event;         // the sleeping M's wake event
  TimerSleeper* next;   // in its bucket's list
  bool linked;          // in the list (guarded by the bucket's lock)
  bool woken;           // its event was set (guarded by the bucket's lock)
};

struct alignas(64) TimerBucket {
  std::atomic<std::uint32_t> sleepers{0};  // records in the list
  SRWLOCK lock = SRWLOCK_INIT;
  TimerSleeper* head = nullptr;
};

constexpr unsigned kTimerBucketBits = 6;
TimerBucket timerBuckets[1u << kTimerBucketBits];

using SetWaitableTimerFn = BOOL(WINAPI*)(HANDLE, const LARGE_INTEGER*, LONG,
                                         PTIMERAPCROUTINE, LPVOID, BOOL);

TimerBucket& bucketOf(const std::uint32_t* addr) {
  auto a = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(addr));
  return timerBuckets[(a * 0x9e3779b97f4a7c15ull) >> (64 - kTimerBucketBits)];
}

// unlinkLocked removes s from b's list (b.lock held).
void unlinkLocked(TimerBucket& b, TimerSleeper* s) {
  for (TimerSleeper** p = &b.head; *p != nullptr; p = &(*p)->next) {
    if (*p == s) {
      *p = s->next;
      break;
    }
  }
  s->linked = false;
  b.sleepers.fetch_sub(1, std::memory_order_relaxed);
}

// wakeTimerSleepers sets the events of up to cnt timed sleepers on addr;
// returns how many. The caller changed *addr before (see above).
std::uint32_t wakeTimerSleepers(std::uint32_t* addr, std::uint32_t cnt) {
  TimerBucket& b = bucketOf(addr);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (b.sleepers.load(std::memory_order_relaxed) == 0) return 0;
  std::uint32_t n = 0;
  AcquireSRWLockExclusive(&b.lock);
  for (TimerSleeper* s = b.head; s != nullptr && n < cnt;) {
    TimerSleeper* next = s->next;
    if (s->addr == addr) {
      unlinkLocked(b, s);
      s->woken = true;
      SetEvent(s->event);  // under the lock: done before the sleeper settles
      n++;
    }
    s = next;
  }
  ReleaseSRWLockExclusive(&b.lock);
  if (n > 0) wt::counters.timerFutexWakes.fetch_add(n);
  return n;
}

// armTimer sets the M's timer ns from now (rounded up to 100 ns), through
// the same entry point as the trampolines.
bool armTimer(std::int64_t ns) {
  std::int64_t ticks = ns / 100 + (ns % 100 != 0 ? 1 : 0);
  LARGE_INTEGER due;
  due.QuadPart = -(ticks > 0 ? ticks : 1);
  auto set = reinterpret_cast<SetWaitableTimerFn>(gort_SetWaitableTimer);
  return set(mTimer, &due, 0, nullptr, nullptr, FALSE) != 0;
}

// settle takes s out of its bucket after the wait (or instead of it) and
// leaves neither the event nor the timer signalled for a later wait:
// waited is WaitForMultipleObjects' result, or WAIT_FAILED if s did not
// wait, and timerSet says whether the timer was armed. Returns whether a
// waker set s's event.
bool settle(TimerBucket& b, TimerSleeper* s, DWORD waited, bool timerSet) {
  AcquireSRWLockExclusive(&b.lock);
  if (s->linked) unlinkLocked(b, s);
  bool woken = s->woken;
  ReleaseSRWLockExclusive(&b.lock);
  if (woken && waited != WAIT_OBJECT_0) WaitForSingleObject(s->event, 0);
  if (timerSet && waited != WAIT_OBJECT_0 + 1) {
    CancelWaitableTimer(mTimer);
    WaitForSingleObject(mTimer, 0);  // it may have fired before the cancel
  }
  return woken;
}

// futexsleepOnTimer is futexsleep for at most ns on the M's timer; false if
// the caller must wait with WaitOnAddress instead: the timer could not be
// set (the M then becomes a low-resolution M, as in usleep) or the wait
// failed.
bool futexsleepOnTimer(std::uint32_t* addr, std::uint32_t val,
                       std::int64_t ns) {
  TimerBucket& b = bucketOf(addr);
  TimerSleeper self{addr, mWakeEvent, nullptr, true, false};
  AcquireSRWLockExclusive(&b.lock);
  self.next = b.head;
  b.head = &self;
  b.sleepers.fetch_add(1, std::memory_order_relaxed);
  ReleaseSRWLockExclusive(&b.lock);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (std::atomic_ref<std::uint32_t>(*addr).load(std::memory_order_relaxed) !=
      val) {
    settle(b, &self, WAIT_FAILED, false);
    return true;
  }
  if (!armTimer(ns)) {
    bool woken = settle(b, &self, WAIT_FAILED, false);
    fallBack(&wt::counters.setTimerFailures);
    return woken;
  }
  wt::counters.timerFutexSleeps.fetch_add(1, std::memory_order_relaxed);
  HANDLE objs[2] = {mWakeEvent, mTimer};  // the event first: it wins a tie
  DWORD r = WaitForMultipleObjects(2, objs, FALSE, INFINITE);
  bool woken = settle(b, &self, r, true);
  return r != WAIT_FAILED || woken;
}

}  // namespace

namespace windows_testing {

void reinit() {
  AcquireSRWLockExclusive(&periodLock);
  relaxed = true;  // give back a period a broken test left held
  updatePeriodLocked();
  relaxed = false;
  lowResMs = 0;
  winmmTried = false;
  timeBeginPeriod1 = timeEndPeriod1 = nullptr;
  ReleaseSRWLockExclusive(&periodLock);
  winmmLoaded.store(false);
  osinit();
}

void reset() {
  hooks = Hooks{realCreateTimer, realLoadWinmm, realHaveSearchSystem32,
                realCreateEvent};
  // Rebuilt rather than zeroed field by field, so a new counter cannot be
  // forgotten (between Runs: nothing updates them now).
  std::destroy_at(&counters);
  std::construct_at(&counters);
  ensureInit();
  reinit();
}

void setWaitableTimerEntry(void* fn) {
  ensureInit();
  gort_SetWaitableTimer = fn != nullptr ? fn : realSetWaitableTimer;
}

void setNtWaitForSingleObjectEntry(void* fn) {
  ensureInit();
  gort_NtWaitForSingleObject = fn != nullptr ? fn : realNtWaitForSingleObject;
}

bool haveWinmm() { return winmmLoaded.load(); }

bool periodIsHeld() {
  AcquireSRWLockShared(&periodLock);
  bool held = periodHeld;
  ReleaseSRWLockShared(&periodLock);
  return held;
}

}  // namespace windows_testing

// usleep mirrors Go's usleep (stubs2.go:21) on Windows (systemstack(usleep1) is
// the caller's job: debug::Usleep switches to g0 first). A failed
// SetWaitableTimer costs this sleep nothing: it is slept with usleep2, and
// the M stays on that path with the 1 ms period held.
void usleep(std::uint32_t usec) {
  ensureInit();
  bool onM = noteStack();
  if (mHighRes) {
    if (gort_usleep2HighRes(usec, mTimer) != 0) {
      wt::counters.highResSleeps.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    fallBack(&wt::counters.setTimerFailures);
  }
  gort_usleep2(usec);
  if (onM) wt::counters.lowResSleeps.fetch_add(1, std::memory_order_relaxed);
}

// usleepOnSystemStack: Windows sleeps on the M's timer, from the M's own
// stack (Go's systemstack (stubs.go:60)(usleep1)).
bool usleepOnSystemStack() { return true; }

void osyield() {
  ensureInit();
  gort_switchtothread();
}

void procyield(std::uint32_t cycles) {
  for (std::uint32_t i = 0; i < cycles; i++) YieldProcessor();
}

// futexsleep mirrors Go's futexsleep (os_linux.go:62) with WaitOnAddress
// (Go's Windows runtime has no futex: its notes sleep on a per-M event,
// lock_sema.go). A timed wait on a high-resolution M waits on the M's timer
// (futexsleepOnTimer); every other wait is WaitOnAddress, whose timeout is in
// milliseconds, rounded up so that a short timeout never becomes a busy loop.
void futexsleep(std::uint32_t* addr, std::uint32_t val, std::int64_t ns) {
  ensureInit();
  if (ns >= 0 && mHighRes && mWakeEvent != nullptr &&
      futexsleepOnTimer(addr, val, ns)) {
    return;
  }
  DWORD ms = INFINITE;
  if (ns >= 0) {
    std::int64_t m = (ns + 999999) / 1000000;
    ms = m >= 0xfffffffe ? 0xfffffffe : static_cast<DWORD>(m);
    wt::counters.msFutexSleeps.fetch_add(1, std::memory_order_relaxed);
  }
  waitOnAddress(addr, &val, sizeof(val), ms);
}

// futexwakeup mirrors Go's futexwakeup (os_linux.go:81): the timed sleepers
// on addr's event first (at most cnt), then WakeByAddress for the rest.
void futexwakeup(std::uint32_t* addr, std::uint32_t cnt) {
  ensureInit();
  std::uint32_t woken = wakeTimerSleepers(addr, cnt);
  if (cnt == 1) {
    if (woken == 0) wakeOne(addr);
  } else {
    wakeAll(addr);
  }
}

std::int64_t nanotime() {
  static const std::int64_t freq = [] {
    LARGE_INTEGER f;
    QueryPerformanceFrequency(&f);
    return static_cast<std::int64_t>(f.QuadPart);
  }();
  LARGE_INTEGER c;
  QueryPerformanceCounter(&c);
  std::int64_t n = c.QuadPart;
  return n / freq * 1000000000 + n % freq * 1000000000 / freq;
}

// processFenceInit: not used on Windows yet (FlushProcessWriteBuffers would
// be the heavy side; Wine's is untested here), so execute keeps its full fence.
bool processFenceInit() { return false; }

void processFence(FenceFor) {}

std::int64_t processFences(FenceFor) { return 0; }

int getproccount() {
  DWORD_PTR proc = 0, sys = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys) && proc != 0) {
    return __builtin_popcountll(static_cast<unsigned long long>(proc));
  }
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return si.dwNumberOfProcessors > 0 ? static_cast<int>(si.dwNumberOfProcessors)
                                     : 1;
}

// Windows has no cgroups (job objects' CPU rate limits are not read, as Go
// does not read them): no limit.
int cgroupFindCPU(const char*, char*, std::size_t) { return 0; }
double cgroupReadCPULimit(const char*, int) { return -1; }

namespace {
DWORD WINAPI threadEntry(LPVOID p) {
  Thread* t = static_cast<Thread*>(p);
  t->fn(t->arg);
  return 0;
}
}  // namespace

// newosproc mirrors Go's newosproc (os_windows.go:908): the thread starts
// suspended so that its handle is stored before it can run (and exit, and be
// joined).
bool newosproc(void (*fn)(void*), void* arg, Thread* out) {
  out->fn = fn;
  out->arg = arg;
  HANDLE h = CreateThread(nullptr, 256 * 1024, threadEntry, out,
                          CREATE_SUSPENDED | STACK_SIZE_PARAM_IS_A_RESERVATION,
                          nullptr);
  if (h == nullptr) return false;
  out->handle = reinterpret_cast<std::uintptr_t>(h);
  ResumeThread(h);
  return true;
}

void threadjoin(Thread t) {
  HANDLE h = reinterpret_cast<HANDLE>(t.handle);
  WaitForSingleObject(h, INFINITE);
  CloseHandle(h);
}

void threaddetach(Thread t) { CloseHandle(reinterpret_cast<HANDLE>(t.handle)); }

bool haveHighResTimer() {
  ensureInit();
  return haveHighRes;
}

// setThreadTimerMode is the usleep half of Go's minit (os_windows.go:974): the
// M's own high-resolution timer (and the wake event of its timed futex
// waits), or the low-resolution path with the 1 ms period. Returns false if the
// M wanted its timer and could not create one: it then sleeps at low resolution
// (counted in timerFallbacks).
bool setThreadTimerMode(TimerMode mode) {
  ensureInit();
  GetCurrentThreadStackLimits(&g0Lo, &g0Hi);
  if (mode == TimerMode::kHighRes && haveHighRes) {
    if (mTimer == nullptr) {
      mTimer = static_cast<HANDLE>(wt::hooks.createTimer(
          CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, kTimerAccess));
      if (mTimer != nullptr) wt::counters.timersCreated.fetch_add(1);
    }
    if (mTimer != nullptr) {
      mHighRes = true;
      createWakeEvent();
      return true;
    }
    fallBack(&wt::counters.timerCreateFailures);
    return false;
  }
  becomeLowRes();
  return true;
}

// mdestroy mirrors Go's mdestroy (os_windows.go:1040): the M's timer (and wake
// event) is closed only when the M ends, not when it merely parks; a
// low-resolution M gives up its share of the 1 ms period.
void mdestroy() {
  if (mTimer != nullptr) {
    CloseHandle(mTimer);
    wt::counters.timersClosed.fetch_add(1);
  }
  mTimer = nullptr;
  if (mWakeEvent != nullptr) CloseHandle(mWakeEvent);
  mWakeEvent = nullptr;
  mHighRes = false;
  if (mLowRes) {
    mLowRes = false;
    AcquireSRWLockExclusive(&periodLock);
    if (lowResMs > 0) lowResMs--;  // 0 if a test's reinit() came between
    updatePeriodLocked();
    ReleaseSRWLockExclusive(&periodLock);
  }
  g0Lo = g0Hi = 0;
}

// osRelax mirrors Go's osRelax (os_windows.go:426): with every P idle (sysmon
// about to sleep long) or no Run in progress, the 1 ms period is given back; it
// is taken again when work resumes. A no-op while no low-resolution M lives.
void osRelax(bool relax) {
  ensureInit();
  if (relax) wt::counters.relaxes.fetch_add(1, std::memory_order_relaxed);
  AcquireSRWLockExclusive(&periodLock);
  relaxed = relax;
  updatePeriodLocked();
  ReleaseSRWLockExclusive(&periodLock);
}

std::int64_t timerFallbacks() { return fallbacks.load(); }

std::size_t physPageSize() {
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return si.dwPageSize;
}

// Windows has no per-process mapping limit; fibres keep their own guards.
std::int64_t mappingsLeft() { return -1; }

// heapRelease: the CRT heap's free blocks back to Windows.
void heapRelease() { _heapmin(); }

namespace {
void (*faultHook)(void* addr, void* sp) = nullptr;

// faultHandler: a vectored handler sees a stack overflow before any frame
// handler does; the runtime decides whether it is a goroutine's.
LONG CALLBACK faultHandler(EXCEPTION_POINTERS* info) {
  EXCEPTION_RECORD* r = info->ExceptionRecord;
  DWORD code = r->ExceptionCode;
  if (code != EXCEPTION_STACK_OVERFLOW && code != EXCEPTION_ACCESS_VIOLATION &&
      code != EXCEPTION_GUARD_PAGE) {
    return EXCEPTION_CONTINUE_SEARCH;
  }
  void* addr = nullptr;
  if (r->NumberParameters >= 2) {
    addr = reinterpret_cast<void*>(r->ExceptionInformation[1]);
  }
  if (code == EXCEPTION_STACK_OVERFLOW) {
    // Windows leaves the faulting address out for overflows; the handler
    // runs on the overflowed stack, just above the reservation's end.
    ULONG_PTR lo = 0, hi = 0;
    GetCurrentThreadStackLimits(&lo, &hi);
    addr = reinterpret_cast<void*>(lo);
  }
  if (faultHook != nullptr) faultHook(addr, nullptr);
  return EXCEPTION_CONTINUE_SEARCH;
}
}  // namespace

void installFaultHandler(void (*onFault)(void* addr, void* sp)) {
  faultHook = onFault;
  AddVectoredExceptionHandler(1, faultHandler);
}

// Windows runs exception handlers on the faulting stack, keeping a reserve
// at its end for them; there is no alternate stack to set up.
void minitSignalStack() {}
void unminitSignalStack() {}

void writeErr(const char* s, std::size_t n) {
  HANDLE h = GetStdHandle(STD_ERROR_HANDLE);
  while (n > 0) {
    DWORD w = 0;
    if (!WriteFile(h, s, static_cast<DWORD>(n), &w, nullptr) || w == 0) return;
    s += w;
    n -= w;
  }
}

bool writeFile(const char* path, const char* data, std::size_t n) {
  HANDLE h = CreateFileA(path, GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return false;
  bool ok = true;
  while (n > 0) {
    DWORD chunk = n > 0x40000000 ? 0x40000000 : static_cast<DWORD>(n);
    DWORD w = 0;
    if (!WriteFile(h, data, chunk, &w, nullptr) || w == 0) {
      ok = false;
      break;
    }
    data += w;
    n -= w;
  }
  return CloseHandle(h) != 0 && ok;
}

std::int64_t gettid() {
  return static_cast<std::int64_t>(GetCurrentThreadId());
}

// threadBlocked: Windows has no cheap per-thread run state like Linux's
// /proc/self/task/<tid>/stat, so the answer is "cannot tell" and sysmon's
// blocked-thread warning stays silent here (docs/reliability.md).
int threadBlocked(std::int64_t) { return -1; }

void crash() { abort(); }

void exit(int code) {
  TerminateProcess(GetCurrentProcess(), static_cast<UINT>(code));
  ExitProcess(static_cast<UINT>(code));
}

const char* getenv(const char* name) { return ::getenv(name); }

}  // namespace gort::os
