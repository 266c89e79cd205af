// tests/arch/trampoline_test.cc: the contract of runtime/arch/arch.h, checked
// against the trampolines of the target being built (sys_linux_<goarch>.S):
// each call reaches the right system call with every argument in place, the
// kernel's raw result comes back, and the caller's registers survive. Built
// once against the gort library, and on 32-bit targets once more with
// _TIME_BITS=64, where the timespecs are 64-bit and the *_time64 calls are
// used (see tests/arch/CMakeLists.txt).
#include <errno.h>
#include <gtest/gtest.h>
#include <linux/futex.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "arch/arch.h"

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t sinceNs(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                              start)
      .count();
}

TEST(ArchTest, TimeTypesMatchTheBuild) {
#if defined(_TIME_BITS) && _TIME_BITS == 64
  EXPECT_EQ(sizeof(time_t), 8u);
#endif
  RecordProperty("sizeof_time_t", static_cast<int>(sizeof(time_t)));
}

TEST(ArchTest, UsleepZeroReturns) {
  auto start = Clock::now();
  gort_usleep(0);
  EXPECT_LT(sinceNs(start), 1'000'000'000);
}

TEST(ArchTest, UsleepSleepsAtLeastUsec) {
  for (std::uint32_t usec : {1u, 999u, 2'000u, 20'000u}) {
    auto start = Clock::now();
    gort_usleep(usec);
    EXPECT_GE(sinceNs(start), std::int64_t{usec} * 1000) << "usec=" << usec;
  }
}

// More than a second: the trampoline splits usec into tv_sec and tv_nsec (a
// tv_nsec of 1e9 or more would make nanosleep fail with EINVAL at once).
TEST(ArchTest, UsleepSplitsSeconds) {
  auto start = Clock::now();
  gort_usleep(1'100'000);
  std::int64_t ns = sinceNs(start);
  EXPECT_GE(ns, 1'100'000'000);
  EXPECT_LT(ns, 10'000'000'000);
}

TEST(ArchTest, FutexWaitValueMismatchIsEagain) {
  std::uint32_t word = 1;
  EXPECT_EQ(gort_futex(&word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0),
            -EAGAIN);
}

// The C side's struct timespec reaches the kernel as written: a timeout of
// 0 s + 30 ms read with the wrong time_t width would be 0 (returns at once).
TEST(ArchTest, FutexWaitTimesOut) {
  std::uint32_t word = 0;
  struct timespec ts = {};
  ts.tv_sec = 0;
  ts.tv_nsec = 30'000'000;
  auto start = Clock::now();
  std::intptr_t r;
  do {
    r = gort_futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, nullptr, 0);
  } while (r == -EINTR);
  EXPECT_EQ(r, -ETIMEDOUT);
  EXPECT_GE(sinceNs(start), 30'000'000);
}

TEST(ArchTest, FutexWakeWithoutWaitersIsZero) {
  std::uint32_t word = 0;
  EXPECT_EQ(gort_futex(&word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0), 0);
}

TEST(ArchTest, FutexWakeWakesAWaiter) {
  alignas(4) std::uint32_t word = 0;
  std::atomic<bool> woken{false};
  std::thread waiter([&] {
    while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 0) {
      gort_futex(&word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
    }
    woken.store(true);
  });
  // Wake until the waiter has been seen asleep (a wake count of 1).
  std::intptr_t n = 0;
  auto start = Clock::now();
  while (n == 0 && sinceNs(start) < 20'000'000'000) {
    gort_usleep(1000);
    n = gort_futex(&word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    if (n == 1) break;
  }
  EXPECT_EQ(n, 1);
  __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
  gort_futex(&word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  waiter.join();
  EXPECT_TRUE(woken.load());
}

// The fifth and sixth arguments (on the stack on 386 and arm): FUTEX_WAKE_OP
// applies the operation encoded in val3 to *addr2.
TEST(ArchTest, FutexPassesAddr2AndVal3) {
  std::uint32_t word = 0;
  std::uint32_t word2 = 7;
  const std::uint32_t set42 =
      (FUTEX_OP_SET << 28) | (FUTEX_OP_CMP_EQ << 24) | (42 << 12) | 0;
  EXPECT_EQ(gort_futex(&word, FUTEX_WAKE_OP_PRIVATE, 1,
                       reinterpret_cast<const void*>(std::uintptr_t{1}), &word2,
                       set42),
            0);
  EXPECT_EQ(word2, 42u);
  // FUTEX_CMP_REQUEUE compares *addr with val3.
  word = 5;
  EXPECT_EQ(gort_futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, nullptr, &word2, 6),
            -EAGAIN);
  EXPECT_EQ(gort_futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, nullptr, &word2, 5),
            0);
}

TEST(ArchTest, FutexReturnsRawErrno) {
  std::uint32_t word = 0;
  EXPECT_EQ(gort_futex(&word, 99, 0, nullptr, nullptr, 0), -ENOSYS);
  EXPECT_EQ(gort_futex(nullptr, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0),
            -EFAULT);
}

TEST(ArchTest, OsyieldAndProcyieldReturn) {
  for (int i = 0; i < 100; i++) gort_osyield();
  for (std::uint32_t cycles : {0u, 1u, 2u, 30u, 100'000u}) {
    gort_procyield(cycles);
  }
}

// Values the compiler must keep in callee-saved registers (or spill) across
// each call; a trampoline that clobbered one would change them.
template <class Call>
void expectRegistersSurvive(Call call) {
  std::uintptr_t a = 0x1111, b = 0x2222, c = 0x3333, d = 0x4444, e = 0x5555,
                 f = 0x6666, g = 0x7777, h = 0x8888;
  for (int i = 0; i < 4; i++) {
    asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    asm volatile("" : "+r"(e), "+r"(f), "+r"(g), "+r"(h));
    call();
    asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    asm volatile("" : "+r"(e), "+r"(f), "+r"(g), "+r"(h));
    ASSERT_EQ(a, 0x1111u + i);
    ASSERT_EQ(b, 0x2222u + i);
    ASSERT_EQ(c, 0x3333u + i);
    ASSERT_EQ(d, 0x4444u + i);
    ASSERT_EQ(e, 0x5555u + i);
    ASSERT_EQ(f, 0x6666u + i);
    ASSERT_EQ(g, 0x7777u + i);
    ASSERT_EQ(h, 0x8888u + i);
    a++, b++, c++, d++, e++, f++, g++, h++;
  }
}

TEST(ArchTest, CallerRegistersSurvive) {
  std::uint32_t word = 1, word2 = 0;
  struct timespec ts = {0, 1000};
  expectRegistersSurvive([] { gort_usleep(10); });
  expectRegistersSurvive([] { gort_osyield(); });
  expectRegistersSurvive([] { gort_procyield(3); });
  expectRegistersSurvive(
      [&] { gort_futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, &word2, 0); });
  expectRegistersSurvive(
      [&] { gort_futex(&word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0); });
}

}  // namespace
