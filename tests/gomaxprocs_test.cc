// tests/gomaxprocs_test.cc (Linux): the default GOMAXPROCS respects CPU
// affinity and cgroup CPU limits, as Go 1.25's does: the cgroup files are
// found and parsed (v1 and v2, in fake trees under a root prefix), a limit
// is rounded up and never taken below 2, sysmon follows affinity changes
// about once a second, and a custom GOMAXPROCS is left alone.
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "os/os.h"
#include "proc.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::DeadlineFromNow;
using gort_test::RunGuarded;

// A temporary directory tree, removed at the end.
class FakeRoot {
 public:
  FakeRoot() {
    char tmpl[] = "/tmp/gort-cgroup-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~FakeRoot() { std::system(("rm -rf '" + root_ + "'").c_str()); }
  const std::string& path() const { return root_; }
  // Writes text to root/rel, making its directories.
  void Write(const std::string& rel, const std::string& text) {
    std::string full = root_ + "/" + rel;
    for (std::size_t i = root_.size() + 1; i < full.size(); i++) {
      if (full[i] == '/') mkdir(full.substr(0, i).c_str(), 0755);
    }
    std::ofstream(full) << text;
  }

 private:
  std::string root_;
};

const char kV2Mountinfo[] =
    "22 1 0:21 / / rw,relatime - ext4 /dev/root rw\n"
    "30 22 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
const char kV1Mountinfo[] =
    "22 1 0:21 / / rw,relatime - ext4 /dev/root rw\n"
    "31 22 0:27 / /sys/fs/cgroup/cpu,cpuacct rw shared:9 - cgroup cgroup "
    "rw,cpu,cpuacct\n"
    "32 22 0:28 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";

int Find(const FakeRoot& r, std::string* dir) {
  char buf[4096];
  int v = gort::os::cgroupFindCPU(r.path().c_str(), buf, sizeof buf);
  if (v != 0) *dir = buf;
  return v;
}

TEST(CgroupTest, V2) {
  FakeRoot r;
  r.Write("proc/self/mountinfo", kV2Mountinfo);
  r.Write("proc/self/cgroup", "0::/user.slice/app.scope\n");
  r.Write("sys/fs/cgroup/user.slice/app.scope/cpu.max", "150000 100000\n");
  std::string dir;
  ASSERT_EQ(Find(r, &dir), 2);
  EXPECT_EQ(dir, r.path() + "/sys/fs/cgroup/user.slice/app.scope");
  EXPECT_DOUBLE_EQ(gort::os::cgroupReadCPULimit(dir.c_str(), 2), 1.5);
  r.Write("sys/fs/cgroup/user.slice/app.scope/cpu.max", "max 100000\n");
  EXPECT_EQ(gort::os::cgroupReadCPULimit(dir.c_str(), 2), 0);
  r.Write("sys/fs/cgroup/user.slice/app.scope/cpu.max", "garbage\n");
  EXPECT_EQ(gort::os::cgroupReadCPULimit(dir.c_str(), 2), -1);
}

TEST(CgroupTest, V1WinsOverV2) {
  FakeRoot r;
  r.Write("proc/self/mountinfo", std::string(kV2Mountinfo) + kV1Mountinfo + "");
  r.Write("proc/self/cgroup",
          "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
  r.Write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "50000\n");
  r.Write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  std::string dir;
  ASSERT_EQ(Find(r, &dir), 1);
  EXPECT_EQ(dir, r.path() + "/sys/fs/cgroup/cpu,cpuacct/docker/abc");
  EXPECT_DOUBLE_EQ(gort::os::cgroupReadCPULimit(dir.c_str(), 1), 0.5);
  r.Write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  EXPECT_EQ(gort::os::cgroupReadCPULimit(dir.c_str(), 1), 0);
}

TEST(CgroupTest, EscapedMountPointAndNoCgroup) {
  FakeRoot r;
  r.Write("proc/self/mountinfo",
          "30 22 0:26 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw\n");
  r.Write("proc/self/cgroup", "0::/a\n");
  std::string dir;
  ASSERT_EQ(Find(r, &dir), 2);
  EXPECT_EQ(dir, r.path() + "/sys/fs/my cgroup/a");
  // No cgroup mount at all, or no cpu line: no cgroup.
  r.Write("proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/root rw\n");
  EXPECT_EQ(Find(r, &dir), 0);
  r.Write("proc/self/mountinfo", kV1Mountinfo);
  r.Write("proc/self/cgroup", "5:memory:/x\n");
  EXPECT_EQ(Find(r, &dir), 0);
  FakeRoot empty;
  EXPECT_EQ(Find(empty, &dir), 0);
}

// Go 1.25's rounding: up, at least 2, never above the CPU count.
TEST(CgroupTest, AdjustGomaxprocs) {
  using gort::runtime::adjustCgroupGOMAXPROCS;
  EXPECT_EQ(adjustCgroupGOMAXPROCS(8, 0), 8);    // no limit
  EXPECT_EQ(adjustCgroupGOMAXPROCS(8, -1), 8);   // unreadable
  EXPECT_EQ(adjustCgroupGOMAXPROCS(8, 2.5), 3);  // rounded up
  EXPECT_EQ(adjustCgroupGOMAXPROCS(8, 4), 4);
  EXPECT_EQ(adjustCgroupGOMAXPROCS(8, 0.5), 2);  // at least 2
  EXPECT_EQ(adjustCgroupGOMAXPROCS(8, 1), 2);
  EXPECT_EQ(adjustCgroupGOMAXPROCS(1, 0.5), 1);  // but not above the CPUs
  EXPECT_EQ(adjustCgroupGOMAXPROCS(4, 100), 4);
}

int Expected(int ncpu, double limit) {
  return std::min(ncpu, std::max(2, static_cast<int>(std::ceil(limit))));
}

// The environment of these tests: no $GOMAXPROCS, restored afterwards.
class DefaultProcsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* e = getenv("GOMAXPROCS");
    if (e != nullptr) saved_ = e;
    had_ = e != nullptr;
    unsetenv("GOMAXPROCS");
    CPU_ZERO(&all_);
    ASSERT_EQ(sched_getaffinity(0, sizeof all_, &all_), 0);
    // No cgroup unless a test writes one: the machine's own limit, if any,
    // must not decide these tests.
    gort::runtime::setCgroupRootForTest(no_cgroup_.path().c_str());
  }
  void TearDown() override {
    if (had_) setenv("GOMAXPROCS", saved_.c_str(), 1);
    SetAllThreads(all_);
    gort::runtime::setCgroupRootForTest("");
  }
  // Sets the affinity of every thread of the process.
  static void SetAllThreads(const cpu_set_t& set) {
    DIR* d = opendir("/proc/self/task");
    ASSERT_NE(d, nullptr);
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      sched_setaffinity(atoi(e->d_name), sizeof set, &set);
    }
    closedir(d);
  }
  static cpu_set_t OneCPU(const cpu_set_t& from) {
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int i = 0; i < CPU_SETSIZE; i++) {
      if (CPU_ISSET(i, &from)) {
        CPU_SET(i, &one);
        break;
      }
    }
    return one;
  }
  int ncpu() const { return std::min(CPU_COUNT(&all_), 256); }
  FakeRoot no_cgroup_;
  cpu_set_t all_;
  std::string saved_;
  bool had_ = false;
};

// A fake cgroup's limit sets GOMAXPROCS at Run's start, below 2 only if the
// CPUs are fewer; Options.maxprocs overrides it.
TEST_F(DefaultProcsTest, CgroupLimitAtStart) {
  FakeRoot r;
  r.Write("proc/self/mountinfo", kV2Mountinfo);
  r.Write("proc/self/cgroup", "0::/app\n");
  gort::runtime::setCgroupRootForTest(r.path().c_str());
  for (double limit : {0.5, 1.0, 2.5, 3.0}) {
    r.Write("sys/fs/cgroup/app/cpu.max",
            std::to_string(static_cast<long>(limit * 100000)) + " 100000\n");
    int got = 0;
    RunGuarded([&] { got = gort::GOMAXPROCS(0); });
    EXPECT_EQ(got, Expected(ncpu(), limit)) << "limit=" << limit;
    EXPECT_EQ(gort::GOMAXPROCS(0), got) << "outside Run, limit=" << limit;
  }
  r.Write("sys/fs/cgroup/app/cpu.max", "max 100000\n");
  int got = 0;
  RunGuarded([&] { got = gort::GOMAXPROCS(0); });
  EXPECT_EQ(got, ncpu());
  RunGuarded([&] { got = gort::GOMAXPROCS(0); }, gort_test::Procs(3));
  EXPECT_EQ(got, 3);
}

// Affinity: a Run started on one CPU has GOMAXPROCS 1.
TEST_F(DefaultProcsTest, AffinityAtStart) {
  if (ncpu() < 2) GTEST_SKIP() << "needs 2 CPUs";
  cpu_set_t one = OneCPU(all_);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  int got = 0;
  RunGuarded([&] { got = gort::GOMAXPROCS(0); });
  ASSERT_EQ(sched_setaffinity(0, sizeof all_, &all_), 0);
  EXPECT_EQ(got, 1);
}

// sysmon follows affinity changes while the program runs (Go 1.25's
// updatemaxprocs), down and back up.
TEST_F(DefaultProcsTest, SysmonFollowsAffinity) {
  if (ncpu() < 2) GTEST_SKIP() << "needs 2 CPUs";
  int before = 0, down = 0, up = 0;
  RunGuarded([&] {
    before = gort::GOMAXPROCS(0);
    SetAllThreads(OneCPU(all_));
    std::int64_t deadline = DeadlineFromNow();
    while (gort::GOMAXPROCS(0) != 1 && gort::Nanotime() < deadline) {
      gort::Sleep(10ms);
    }
    down = gort::GOMAXPROCS(0);
    SetAllThreads(all_);
    deadline = DeadlineFromNow();
    while (gort::GOMAXPROCS(0) == 1 && gort::Nanotime() < deadline) {
      gort::Sleep(10ms);
    }
    up = gort::GOMAXPROCS(0);
  });
  EXPECT_EQ(before, ncpu());
  EXPECT_EQ(down, 1);
  EXPECT_EQ(up, ncpu());
}

// After GOMAXPROCS(n), sysmon no longer changes it (Go 1.25: a custom
// value).
TEST_F(DefaultProcsTest, CustomValueIsKept) {
  if (ncpu() < 2) GTEST_SKIP() << "needs 2 CPUs";
  int after = 0;
  RunGuarded([&] {
    gort::GOMAXPROCS(ncpu());
    SetAllThreads(OneCPU(all_));
    gort::Sleep(2500ms);  // two of sysmon's checks and more
    after = gort::GOMAXPROCS(0);
  });
  EXPECT_EQ(after, ncpu());
}

}  // namespace
