// tests/test_os.h: the few operating-system calls the tests make on their
// own (blocking a thread in a real system call, thread ids, CPU counts), for
// Linux and Windows, so that the test files themselves stay portable.
#ifndef GORT_TESTS_TEST_OS_H_
#define GORT_TESTS_TEST_OS_H_

#if defined(_WIN32)
// clang-format off
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
// clang-format on
#else
#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <cstdint>
#include <thread>

#if defined(_WIN32)
#include <stdlib.h>
// POSIX's environment calls, which the CRT spells differently (an empty value
// removes the variable).
inline int setenv(const char* name, const char* value, int) {
  return _putenv_s(name, value);
}
inline int unsetenv(const char* name) { return _putenv_s(name, ""); }
#endif

namespace gort_test {

// Stacks of parked goroutines are walked on linux/amd64 only
// (docs/targets.md): elsewhere traces and profiles carry no frames, and the
// tests that look for function names skip.
#if defined(__linux__) && defined(__x86_64__)
inline constexpr bool kStacks = true;
#else
inline constexpr bool kStacks = false;
#endif

// An event a thread blocks on in a real system call until another thread
// signals it (an eventfd on Linux, a semaphore on Windows).
class EventFd {
 public:
#if defined(_WIN32)
  EventFd() : h_(CreateSemaphoreW(nullptr, 0, 0x7fffffff, nullptr)) {}
  ~EventFd() {
    if (h_ != nullptr) CloseHandle(h_);
  }
  bool ok() const { return h_ != nullptr; }
  // Makes the event readable.
  bool Signal() { return ReleaseSemaphore(h_, 1, nullptr) != 0; }
  // Blocks until signalled (true, consuming one signal) or timeout_ms pass.
  bool WaitFor(int timeout_ms) {
    return WaitForSingleObject(h_, static_cast<DWORD>(timeout_ms)) ==
           WAIT_OBJECT_0;
  }
  // Blocks until signalled; returns the signals consumed (0 on error).
  std::uint64_t Read() {
    return WaitForSingleObject(h_, INFINITE) == WAIT_OBJECT_0 ? 1 : 0;
  }
#else
  EventFd() : fd_(eventfd(0, EFD_CLOEXEC)) {}
  ~EventFd() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  // Makes the event readable.
  bool Signal() {
    std::uint64_t one = 1;
    ssize_t n;
    do {
      n = write(fd_, &one, sizeof(one));
    } while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(sizeof(one));
  }
  // Blocks until signalled (true, consuming the signal) or timeout_ms pass.
  bool WaitFor(int timeout_ms) {
    pollfd pfd = {fd_, POLLIN, 0};
    int r;
    do {
      r = poll(&pfd, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r != 1) return false;
    std::uint64_t value = 0;
    return read(fd_, &value, sizeof(value)) == sizeof(value) && value > 0;
  }
  // Blocks until signalled; returns the signals consumed (0 on error).
  std::uint64_t Read() {
    std::uint64_t value = 0;
    ssize_t r;
    do {
      r = read(fd_, &value, sizeof(value));
    } while (r < 0 && errno == EINTR);
    return r == sizeof(value) ? value : 0;
  }
#endif
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

 private:
#if defined(_WIN32)
  HANDLE h_;
#else
  int fd_;
#endif
};

// Blocks the thread in the kernel for about ms milliseconds; returns 0.
inline int SleepInKernel(int ms) {
#if defined(_WIN32)
  ::Sleep(static_cast<DWORD>(ms));
  return 0;
#else
  return poll(nullptr, 0, ms);
#endif
}

// Blocks the thread in the kernel for about us microseconds (Windows: whole
// milliseconds, rounded up).
inline void SleepInKernelUs(int us) {
#if defined(_WIN32)
  ::Sleep(static_cast<DWORD>((us + 999) / 1000));
#else
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  nanosleep(&ts, nullptr);
#endif
}

// The calling thread's id.
inline long Tid() {
#if defined(_WIN32)
  return static_cast<long>(GetCurrentThreadId());
#else
  return syscall(SYS_gettid);
#endif
}

// The process id.
inline long Pid() {
#if defined(_WIN32)
  return static_cast<long>(GetCurrentProcessId());
#else
  return getpid();
#endif
}

// CPUs this process may run on, as the runtime counts them by default.
inline int CpuCount() {
#if defined(_WIN32)
  DWORD_PTR proc = 0, sys = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys) && proc != 0) {
    return __builtin_popcountll(static_cast<unsigned long long>(proc));
  }
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

// Whether the program runs under Wine rather than Windows.
inline bool UnderWine() {
#if defined(_WIN32)
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  return ntdll != nullptr &&
         GetProcAddress(ntdll, "wine_get_version") != nullptr;
#else
  return false;
#endif
}

// Whether UsleepMode::kHighRes is available: Linux's timer slack (unless a
// seccomp filter denies it), Windows' high-resolution waitable timer.
inline bool HaveHighResUsleep() {
#if defined(_WIN32)
  HANDLE h = CreateWaitableTimerExW(nullptr, nullptr, 0x00000002,
                                    SYNCHRONIZE | TIMER_MODIFY_STATE);
  if (h == nullptr) return false;
  CloseHandle(h);
  return true;
#else
  return prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) >= 0;
#endif
}

// A connected pair of stream sockets, both blocking, for tests that need a
// pollable descriptor and a peer written to from outside the runtime
// (socketpair on Linux; a loopback TCP connection on Windows, whose
// sockets poll::FD takes). false if the OS refused.
inline bool SocketPair(std::intptr_t sv[2]) {
#if defined(_WIN32)
  WSADATA d;
  if (WSAStartup(MAKEWORD(2, 2), &d) != 0) return false;
  SOCKET l = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  if (l == INVALID_SOCKET) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int len = sizeof a;
  SOCKET c = INVALID_SOCKET, s = INVALID_SOCKET;
  if (bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      listen(l, 1) == 0 &&
      getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    c = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (c != INVALID_SOCKET &&
        connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      s = accept(l, nullptr, nullptr);
    }
  }
  closesocket(l);
  if (s == INVALID_SOCKET) {
    if (c != INVALID_SOCKET) closesocket(c);
    return false;
  }
  sv[0] = static_cast<std::intptr_t>(s);
  sv[1] = static_cast<std::intptr_t>(c);
  return true;
#else
  int p[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) return false;
  sv[0] = p[0];
  sv[1] = p[1];
  return true;
#endif
}

// Writes n bytes to a socket from SocketPair outside the runtime; true if
// all went.
inline bool SocketWrite(std::intptr_t s, const void* buf, int n) {
#if defined(_WIN32)
  return send(static_cast<SOCKET>(s), static_cast<const char*>(buf), n, 0) == n;
#else
  return write(static_cast<int>(s), buf, static_cast<std::size_t>(n)) == n;
#endif
}

// Closes a socket from SocketPair that no poll::FD owns.
inline void SocketClose(std::intptr_t s) {
#if defined(_WIN32)
  closesocket(static_cast<SOCKET>(s));
#else
  close(static_cast<int>(s));
#endif
}

// Descriptors (Linux) or handles (Windows) the process holds now; -1 if
// the OS does not say.
inline int OpenDescriptors() {
#if defined(_WIN32)
  DWORD n = 0;
  return GetProcessHandleCount(GetCurrentProcess(), &n) ? static_cast<int>(n)
                                                        : -1;
#else
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (readdir(d) != nullptr) n++;
  closedir(d);
  return n;
#endif
}

}  // namespace gort_test

#endif  // GORT_TESTS_TEST_OS_H_
