// tests/arch/windows_trampoline_test.cc: runs the Windows ARM trampolines
// (runtime/arch/sys_windows_arm.S, sys_windows_arm64.S) on the Linux side of
// the same CPU, under qemu. Windows cannot run here, but the code of these
// functions is plain Thumb-2 / AArch64 whose integer calling convention is
// the same AAPCS / AAPCS64 as Linux's: the COFF object's .text (made into a
// header by coff_blob.py) is copied into executable memory, its relocations
// are pointed at three slots holding mocks of SetWaitableTimer,
// NtWaitForSingleObject and SwitchToThread, and each trampoline is called.
// The mocks record their arguments and the stack pointer, so this checks the
// due time (-10 * usec, 100 ns units, as a 64-bit value), every argument
// including the fifth and sixth (on the stack on arm), the call order, the
// stack alignment at each call, that the caller's registers survive, and
// gort_usleep2HighRes' result: 1 after a wait that returned STATUS_SUCCESS
// (0, what a signalled timer gives), and 0 without waiting when
// SetWaitableTimer failed.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "windows_arm_blob.h"

namespace {

#if defined(__aarch64__)
constexpr std::uintptr_t kStackAlign = 16;
constexpr const char* kWantArch = "arm64";
#elif defined(__arm__)
constexpr std::uintptr_t kStackAlign = 8;
constexpr const char* kWantArch = "arm";
#else
#error "windows_trampoline_test runs on arm and arm64 only"
#endif

__attribute__((always_inline)) inline std::uintptr_t currentSp() {
  std::uintptr_t sp;
  asm volatile("mov %0, sp" : "=r"(sp));
  return sp;
}

enum class Api { kSetWaitableTimer, kNtWaitForSingleObject, kSwitchToThread };

struct Call {
  Api api;
  void* handle = nullptr;
  bool hasDue = false;
  std::int64_t due = 0;
  std::intptr_t period = -1;
  void* completion = reinterpret_cast<void*>(1);
  void* completionArg = reinterpret_cast<void*>(1);
  std::intptr_t resume = -1;
  std::intptr_t alertable = -1;
  std::uintptr_t sp = 0;
};

// A fixed-size record (no allocation inside the mocks).
struct Calls {
  Call at[4];
  std::size_t n = 0;
  void clear() { n = 0; }
  std::size_t size() const { return n; }
  const Call& operator[](std::size_t i) const { return at[i]; }
  void push_back(const Call& c) {
    if (n < 4) at[n] = c;
    n++;
  }
};
Calls* calls;
// What MockSetWaitableTimer returns (TRUE, or FALSE for a failed call).
int setTimerResult = 1;

// The mocks, with the Windows signatures (BOOL and LONG are int, BOOLEAN an
// unsigned char, LARGE_INTEGER an int64).
extern "C" int MockSetWaitableTimer(void* timer, const std::int64_t* due,
                                    int period, void* completion,
                                    void* completionArg, int resume) {
  Call c{Api::kSetWaitableTimer};
  c.sp = currentSp();
  c.handle = timer;
  c.hasDue = due != nullptr;
  if (due != nullptr) c.due = *due;
  c.period = period;
  c.completion = completion;
  c.completionArg = completionArg;
  c.resume = resume;
  calls->push_back(c);
  return setTimerResult;
}

extern "C" int MockNtWaitForSingleObject(void* handle, unsigned char alertable,
                                         const std::int64_t* timeout) {
  Call c{Api::kNtWaitForSingleObject};
  c.sp = currentSp();
  c.handle = handle;
  c.alertable = alertable;
  c.hasDue = timeout != nullptr;
  if (timeout != nullptr) c.due = *timeout;
  calls->push_back(c);
  return 0;  // STATUS_SUCCESS: the timer was signalled
}

extern "C" int MockSwitchToThread() {
  Call c{Api::kSwitchToThread};
  c.sp = currentSp();
  calls->push_back(c);
  return 1;
}

// The loaded trampolines: code, then a page with the three entry-point slots.
struct Loaded {
  void (*usleep2)(std::uint32_t) = nullptr;
  int (*usleep2HighRes)(std::uint32_t, void*) = nullptr;
  void (*switchtothread)() = nullptr;
};

void patch(unsigned char* text, const blob::Reloc& r, std::uintptr_t target) {
  unsigned char* p = text + r.offset;
  switch (r.kind) {
    case blob::kMov32T: {
      // movw then movt, Thumb-2 T3 encoding: imm16 = imm4:i:imm3:imm8.
      for (int k = 0; k < 2; k++) {
        std::uint32_t imm = k == 0 ? target & 0xffff : target >> 16;
        std::uint16_t hw[2];
        std::memcpy(hw, p + 4 * k, 4);
        hw[0] |= ((imm >> 12) & 0xf) | (((imm >> 11) & 1) << 10);
        hw[1] |= (((imm >> 8) & 7) << 12) | (imm & 0xff);
        std::memcpy(p + 4 * k, hw, 4);
      }
      break;
    }
    case blob::kPageBaseRel21: {
      std::int64_t pages =
          static_cast<std::int64_t>(target >> 12) -
          static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) >> 12);
      std::uint32_t insn;
      std::memcpy(&insn, p, 4);
      insn |= static_cast<std::uint32_t>(pages & 3) << 29;
      insn |= static_cast<std::uint32_t>((pages >> 2) & 0x7ffff) << 5;
      std::memcpy(p, &insn, 4);
      break;
    }
    case blob::kPageOffset12L: {
      std::uint32_t insn;
      std::memcpy(&insn, p, 4);
      insn |= static_cast<std::uint32_t>((target & 0xfff) >> 3) << 10;
      std::memcpy(p, &insn, 4);
      break;
    }
  }
}

const Loaded& load() {
  static Loaded loaded = [] {
    Loaded l;
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t codeSize = (sizeof(blob::kText) + page - 1) / page * page;
    void* mem = mmap(nullptr, codeSize + page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return l;
    auto* text = static_cast<unsigned char*>(mem);
    auto* slots = reinterpret_cast<void**>(text + codeSize);
    std::memcpy(text, blob::kText, sizeof(blob::kText));
    slots[0] = reinterpret_cast<void*>(&MockSetWaitableTimer);
    slots[1] = reinterpret_cast<void*>(&MockNtWaitForSingleObject);
    slots[2] = reinterpret_cast<void*>(&MockSwitchToThread);
    for (const blob::Reloc& r : blob::kRelocs) {
      std::string sym = r.symbol;
      int slot = sym == "gort_SetWaitableTimer"        ? 0
                 : sym == "gort_NtWaitForSingleObject" ? 1
                 : sym == "gort_SwitchToThread"        ? 2
                                                       : -1;
      if (slot < 0) return l;
      patch(text, r, reinterpret_cast<std::uintptr_t>(&slots[slot]));
    }
    if (mprotect(text, codeSize, PROT_READ | PROT_EXEC) != 0) return l;
    __builtin___clear_cache(reinterpret_cast<char*>(text),
                            reinterpret_cast<char*>(text + codeSize));
    // Thumb code is entered with the low bit of the address set.
    const std::uintptr_t thumb = std::string(blob::kArch) == "arm" ? 1 : 0;
    for (const blob::Func& f : blob::kFuncs) {
      std::uintptr_t a =
          reinterpret_cast<std::uintptr_t>(text + f.offset) | thumb;
      std::string name = f.name;
      if (name == "gort_usleep2") {
        l.usleep2 = reinterpret_cast<void (*)(std::uint32_t)>(a);
      } else if (name == "gort_usleep2HighRes") {
        l.usleep2HighRes = reinterpret_cast<int (*)(std::uint32_t, void*)>(a);
      } else if (name == "gort_switchtothread") {
        l.switchtothread = reinterpret_cast<void (*)()>(a);
      }
    }
    return l;
  }();
  return loaded;
}

// Fills the stack below the caller with a pattern, so that an argument the
// trampoline forgot to store is not zero by luck.
__attribute__((noinline)) void poisonStack() {
  volatile unsigned char junk[512];
  for (auto& b : junk) b = 0xa5;
  asm volatile("" ::"r"(junk) : "memory");
}

class WindowsTrampolineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_STREQ(blob::kArch, kWantArch);
    calls = &calls_;
    const Loaded& l = load();
    ASSERT_NE(l.usleep2, nullptr);
    ASSERT_NE(l.usleep2HighRes, nullptr);
    ASSERT_NE(l.switchtothread, nullptr);
  }
  void TearDown() override {
    calls = nullptr;
    setTimerResult = 1;
  }
  Calls calls_;
};

const std::uint32_t kUsecs[] = {
    0, 1, 15, 1000, 999'999, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff};

TEST_F(WindowsTrampolineTest, Usleep2WaitsOnTheProcessWithARelativeTimeout) {
  for (std::uint32_t usec : kUsecs) {
    calls_.clear();
    poisonStack();
    load().usleep2(usec);
    ASSERT_EQ(calls_.size(), 1u) << "usec=" << usec;
    const Call& c = calls_[0];
    EXPECT_EQ(c.api, Api::kNtWaitForSingleObject);
    EXPECT_EQ(c.handle, reinterpret_cast<void*>(~std::uintptr_t{0}))
        << "not NtCurrentProcess()";
    EXPECT_EQ(c.alertable, 0);
    ASSERT_TRUE(c.hasDue);
    EXPECT_EQ(c.due, -10 * static_cast<std::int64_t>(usec)) << "usec=" << usec;
    EXPECT_EQ(c.sp % kStackAlign, 0u) << "sp=" << c.sp;
  }
}

TEST_F(WindowsTrampolineTest, Usleep2HighResSetsTheTimerThenWaitsOnIt) {
  void* timer = reinterpret_cast<void*>(0x5a5a0);
  for (std::uint32_t usec : kUsecs) {
    calls_.clear();
    poisonStack();
    EXPECT_EQ(load().usleep2HighRes(usec, timer), 1)
        << "usec=" << usec << ": a completed sleep must return 1, not the "
        << "wait's STATUS_SUCCESS (0), or usleep sleeps again at low "
        << "resolution";
    ASSERT_EQ(calls_.size(), 2u) << "usec=" << usec;
    const Call& set = calls_[0];
    EXPECT_EQ(set.api, Api::kSetWaitableTimer);
    EXPECT_EQ(set.handle, timer);
    ASSERT_TRUE(set.hasDue);
    EXPECT_EQ(set.due, -10 * static_cast<std::int64_t>(usec))
        << "usec=" << usec;
    EXPECT_EQ(set.period, 0);
    EXPECT_EQ(set.completion, nullptr);
    EXPECT_EQ(set.completionArg, nullptr);  // fifth argument
    EXPECT_EQ(set.resume, 0);               // sixth argument
    EXPECT_EQ(set.sp % kStackAlign, 0u) << "sp=" << set.sp;
    const Call& wait = calls_[1];
    EXPECT_EQ(wait.api, Api::kNtWaitForSingleObject);
    EXPECT_EQ(wait.handle, timer);
    EXPECT_EQ(wait.alertable, 0);
    EXPECT_FALSE(wait.hasDue) << "waits on the timer with no timeout";
    EXPECT_EQ(wait.sp % kStackAlign, 0u) << "sp=" << wait.sp;
  }
}

TEST_F(WindowsTrampolineTest, Usleep2HighResReturnsZeroWithoutWaitingIfNotSet) {
  void* timer = reinterpret_cast<void*>(0x5a5a0);
  setTimerResult = 0;  // SetWaitableTimer failed
  for (std::uint32_t usec : {0u, 1u, 1000u, 0xffffffffu}) {
    calls_.clear();
    poisonStack();
    EXPECT_EQ(load().usleep2HighRes(usec, timer), 0) << "usec=" << usec;
    ASSERT_EQ(calls_.size(), 1u)
        << "usec=" << usec << ": waited on a timer that was never set";
    EXPECT_EQ(calls_[0].api, Api::kSetWaitableTimer);
    EXPECT_EQ(calls_[0].handle, timer);
  }
}

TEST_F(WindowsTrampolineTest, SwitchToThreadIsCalled) {
  load().switchtothread();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].api, Api::kSwitchToThread);
  EXPECT_EQ(calls_[0].sp % kStackAlign, 0u);
}

// Values the compiler must keep in callee-saved registers (or spill) across
// each call; a trampoline that clobbered one would change them.
template <class Fn>
void expectRegistersSurvive(Fn fn) {
  std::uintptr_t a = 0x1111, b = 0x2222, c = 0x3333, d = 0x4444, e = 0x5555,
                 f = 0x6666, g = 0x7777, h = 0x8888;
  for (int i = 0; i < 3; i++) {
    asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    asm volatile("" : "+r"(e), "+r"(f), "+r"(g), "+r"(h));
    fn();
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

TEST_F(WindowsTrampolineTest, CallerRegistersSurvive) {
  expectRegistersSurvive([] { load().usleep2(10); });
  expectRegistersSurvive(
      [] { load().usleep2HighRes(10, reinterpret_cast<void*>(1)); });
  setTimerResult = 0;  // the early return restores them too
  expectRegistersSurvive(
      [] { load().usleep2HighRes(10, reinterpret_cast<void*>(1)); });
  expectRegistersSurvive([] { load().switchtothread(); });
}

}  // namespace
