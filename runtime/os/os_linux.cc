// runtime/os/os_linux.cc: the Linux side of runtime/os/os.h (Go's
// os_linux.go and mem_linux.go). Sleeping, futexes and yielding go through
// the raw-syscall trampolines of runtime/arch; threads, clocks and memory use
// libc, as the rest of a C++ program does.
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#if defined(__GLIBC__)
#include <malloc.h>  // malloc_trim
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "arch/arch.h"
#include "os/os.h"

namespace gort::os {

void usleep(std::uint32_t usec) { gort_usleep(usec); }

bool usleepOnSystemStack() { return false; }

void osyield() { gort_osyield(); }

void procyield(std::uint32_t cycles) { gort_procyield(cycles); }

// futexsleep mirrors Go's futexsleep (os_linux.go:62): FUTEX_WAIT_PRIVATE with
// a relative timeout; EINTR, EAGAIN and timeouts simply return to the caller's
// loop.
void futexsleep(std::uint32_t* addr, std::uint32_t val, std::int64_t ns) {
  if (ns < 0) {
    gort_futex(addr, FUTEX_WAIT_PRIVATE, val, nullptr, nullptr, 0);
    return;
  }
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1000000000);
  ts.tv_nsec = static_cast<long>(ns % 1000000000);
  gort_futex(addr, FUTEX_WAIT_PRIVATE, val, &ts, nullptr, 0);
}

// futexwakeup mirrors Go's futexwakeup (os_linux.go:81).
void futexwakeup(std::uint32_t* addr, std::uint32_t cnt) {
  gort_futex(addr, FUTEX_WAKE_PRIVATE, cnt, nullptr, nullptr, 0);
}

namespace {
std::atomic<int> fenceState{0};  // 0 not asked yet, 1 available, -1 not
std::atomic<std::int64_t> fenceCalls[3] = {};

long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }
}  // namespace

bool processFenceInit() {
  int st = fenceState.load(std::memory_order_acquire);
  if (st != 0) return st > 0;
  long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  bool ok = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
            membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
            membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
  fenceState.store(ok ? 1 : -1, std::memory_order_release);
  return ok;
}

void processFence(FenceFor who) {
  fenceCalls[static_cast<int>(who)].fetch_add(1, std::memory_order_relaxed);
  // Registered and tried once by processFenceInit (a child of fork inherits
  // the registration): a failure now would leave the plain stores it stands
  // for unordered, so it is fatal.
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    static const char msg[] = "fatal error: membarrier failed\n";
    writeErr(msg, sizeof msg - 1);
    crash();
  }
}

std::int64_t processFences(FenceFor who) {
  return fenceCalls[static_cast<int>(who)].load(std::memory_order_relaxed);
}

std::int64_t nanotime() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// getproccount mirrors Go's getproccount (os_linux.go:97): the affinity mask,
// not the machine's CPU count.
int getproccount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::int64_t gettid() { return static_cast<std::int64_t>(syscall(SYS_gettid)); }

// threadBlocked reads the state letter of /proc/self/task/<tid>/stat (after
// the last ')', since the command name may hold one): S (interruptible
// sleep) and D (uninterruptible) mean blocked in the kernel; R, and
// anything else, not.
int threadBlocked(std::int64_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%lld/stat",
                static_cast<long long>(tid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* paren = std::strrchr(buf, ')');
  if (paren == nullptr || paren[1] != ' ') return -1;
  char state = paren[2];
  return state == 'S' || state == 'D' ? 1 : 0;
}

namespace {
void* threadEntry(void* p) {
  Thread* t = static_cast<Thread*>(p);
  t->fn(t->arg);
  return nullptr;
}
}  // namespace

// newosproc mirrors Go's newosproc (os_linux.go:166) (pthread_create instead of
// clone).
bool newosproc(void (*fn)(void*), void* arg, Thread* out) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  out->fn = fn;
  out->arg = arg;
  // pthread_create stores the id before the thread starts, so whoever the
  // new thread later synchronises with (Run, joining it) sees the id; a
  // store after the call could come after the thread has already exited.
  static_assert(sizeof(pthread_t) == sizeof(out->handle));
  int err = pthread_create(reinterpret_cast<pthread_t*>(&out->handle), &attr,
                           threadEntry, out);
  pthread_attr_destroy(&attr);
  return err == 0;
}

void threadjoin(Thread t) {
  pthread_join(static_cast<pthread_t>(t.handle), nullptr);
}

void threaddetach(Thread t) {
  pthread_detach(static_cast<pthread_t>(t.handle));
}

// The Linux counterpart of Windows' high-resolution waitable timer: a 1 ns
// timer slack instead of the default 50 us, so nanosleep wakes on time.
bool haveHighResTimer() {
  int old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  return old >= 0;
}

namespace {
std::atomic<std::int64_t> slackFailures{0};
}  // namespace

bool setThreadTimerMode(TimerMode mode) {
  // PR_SET_TIMERSLACK with 0 restores the slack the thread started with.
  unsigned long slack = mode == TimerMode::kHighRes ? 1 : 0;
  bool ok = prctl(PR_SET_TIMERSLACK, slack, 0, 0, 0) == 0;
  if (!ok && mode == TimerMode::kHighRes) slackFailures.fetch_add(1);
  return ok;
}

void mdestroy() {}

// Linux has no system-wide timer period to give back.
void osRelax(bool) {}

std::int64_t timerFallbacks() { return slackFailures.load(); }

std::size_t physPageSize() {
  long n = sysconf(_SC_PAGESIZE);
  return n > 0 ? static_cast<std::size_t>(n) : 4096;
}

namespace {
// countLines counts the lines of a /proc file without allocating; -1 if it
// cannot be read.
std::int64_t countLines(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[4096];
  std::int64_t lines = 0;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; i++) lines += buf[i] == '\n';
  }
  close(fd);
  return lines;
}
}  // namespace

void heapRelease() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// mappingsLeft: vm.max_map_count (65530 if unreadable, the kernel's
// default) minus the mappings the process has now.
std::int64_t mappingsLeft() {
  std::int64_t max = 65530;
  int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) {
      buf[n] = '\0';
      long long v = strtoll(buf, nullptr, 10);
      if (v > 0) max = v;
    }
  }
  std::int64_t used = countLines("/proc/self/maps");
  if (used < 0) used = 0;
  return max > used ? max - used : 0;
}

namespace {
void (*faultHook)(void* addr, void* sp) = nullptr;
thread_local void* sigstack = nullptr;
constexpr std::size_t kSigStackSize = 64 * 1024;

// faultSP: the stack pointer of the interrupted thread, from its context.
void* faultSP(void* uc) {
  const mcontext_t& mc = static_cast<ucontext_t*>(uc)->uc_mcontext;
#if defined(__x86_64__)
  return reinterpret_cast<void*>(mc.gregs[REG_RSP]);
#elif defined(__i386__)
  return reinterpret_cast<void*>(mc.gregs[REG_ESP]);
#elif defined(__aarch64__)
  return reinterpret_cast<void*>(mc.sp);
#elif defined(__arm__)
  return reinterpret_cast<void*>(mc.arm_sp);
#else
  (void)mc;
  return nullptr;
#endif
}

void faultHandler(int sig, siginfo_t* info, void* uc) {
  if (faultHook != nullptr) faultHook(info->si_addr, faultSP(uc));
  // Not ours: let the default action happen when the instruction re-faults.
  signal(sig, SIG_DFL);
}
}  // namespace

void installFaultHandler(void (*onFault)(void* addr, void* sp)) {
  faultHook = onFault;
  struct sigaction sa = {};
  sa.sa_sigaction = faultHandler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
}

void minitSignalStack() {
  if (sigstack != nullptr) return;
  void* p = mmap(nullptr, kSigStackSize, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  stack_t ss = {};
  ss.ss_sp = p;
  ss.ss_size = kSigStackSize;
  if (sigaltstack(&ss, nullptr) != 0) {
    munmap(p, kSigStackSize);
    return;
  }
  sigstack = p;
}

void unminitSignalStack() {
  if (sigstack == nullptr) return;
  stack_t ss = {};
  ss.ss_flags = SS_DISABLE;
  sigaltstack(&ss, nullptr);
  munmap(sigstack, kSigStackSize);
  sigstack = nullptr;
}

void writeErr(const char* s, std::size_t n) {
  while (n > 0) {
    ssize_t w = write(2, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

bool writeFile(const char* path, const char* data, std::size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = true;
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ok = false;
      break;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return close(fd) == 0 && ok;
}

void exit(int code) { _exit(code); }

void crash() { abort(); }

const char* getenv(const char* name) { return ::getenv(name); }

}  // namespace gort::os
