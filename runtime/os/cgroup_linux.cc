// runtime/os/cgroup_linux.cc: the CPU limit of the process's cgroup (Go
// 1.25's internal/runtime/cgroup), for the default GOMAXPROCS.
//
// The cgroup directory is the mount point of the cpu controller (from
// /proc/self/mountinfo: a v1 "cgroup" mount whose options name cpu, else
// the "cgroup2" mount) joined with the process's path in that hierarchy
// (from /proc/self/cgroup: the v1 line naming cpu, else the v2 line "0::").
// v1 takes precedence over v2, as in Go. Every path is read under a root
// prefix, "" for the real system, so that tests can build a fake tree. Go
// keeps the limit files open and rereads them with pread; gort opens them
// at each read (about once a second, from sysmon).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "os/os.h"

namespace gort::os {

namespace {

// readAll reads a whole (small) file; false if it cannot be opened.
bool readAll(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out->clear();
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    std::size_t i = s.find(sep);
    out.push_back(s.substr(0, i));
    if (i == std::string_view::npos) return out;
    s.remove_prefix(i + 1);
  }
}

// containsCPU mirrors Go's containsCPU: "cpu" in a comma-separated list.
bool containsCPU(std::string_view list) {
  for (std::string_view item : split(list, ',')) {
    if (item == "cpu") return true;
  }
  return false;
}

// unescapePath mirrors Go's unescapePath: mountinfo writes space, tab,
// newline and backslash as \ooo.
std::string unescapePath(std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); i++) {
    if (in[i] == '\\' && i + 3 < in.size()) {
      int v = 0;
      bool ok = true;
      for (std::size_t k = 1; k <= 3; k++) {
        char c = in[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(in[i]);
  }
  return out;
}

// cpuMount mirrors Go's parseCPUMount: the cpu controller's mount point and
// its version, 0 if none.
int cpuMount(const std::string& mountinfo, std::string* mount) {
  int version = 0;
  for (std::string_view line : split(mountinfo, '\n')) {
    std::vector<std::string_view> f = split(line, ' ');
    if (f.size() < 5) continue;
    std::size_t dash = 5;
    while (dash < f.size() && f[dash] != "-") dash++;
    if (dash + 1 >= f.size()) continue;
    std::string_view type = f[dash + 1];
    if (type == "cgroup2") {
      *mount = unescapePath(f[4]);
      version = 2;  // a v1 cpu mount later on still wins
    } else if (type == "cgroup" && dash + 3 < f.size() &&
               containsCPU(f[dash + 3])) {
      *mount = unescapePath(f[4]);
      return 1;
    }
  }
  return version;
}

// cpuPath mirrors Go's parseCPURelativePath: the process's path in the
// cpu hierarchy, with its version, 0 if none.
int cpuPath(const std::string& cgroup, std::string* path) {
  int version = 0;
  for (std::string_view line : split(cgroup, '\n')) {
    std::size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    std::size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    std::string_view id = line.substr(0, a);
    std::string_view controllers = line.substr(a + 1, b - a - 1);
    std::string_view p = line.substr(b + 1);
    if (id == "0") {
      *path = std::string(p);
      version = 2;
    } else if (containsCPU(controllers)) {
      *path = std::string(p);
      return 1;
    }
  }
  return version;
}

// parseInt reads a decimal integer ending at a newline or the end of s.
bool parseInt(std::string_view s, long long* v) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.remove_suffix(1);
  if (s.empty()) return false;
  std::string str(s);
  char* end = nullptr;
  errno = 0;
  *v = std::strtoll(str.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

}  // namespace

int cgroupFindCPU(const char* root, char* dir, std::size_t n) {
  std::string r = root != nullptr ? root : "";
  std::string mountinfo, cgroup, mount, path;
  if (!readAll(r + "/proc/self/mountinfo", &mountinfo)) return 0;
  if (!readAll(r + "/proc/self/cgroup", &cgroup)) return 0;
  int mv = cpuMount(mountinfo, &mount);
  int pv = cpuPath(cgroup, &path);
  if (mv == 0 || pv != mv) return 0;  // no cpu cgroup, or a changing one
  std::string full = r + mount + path;
  if (full.size() + 1 > n) return 0;
  std::memcpy(dir, full.c_str(), full.size() + 1);
  return mv;
}

double cgroupReadCPULimit(const char* dir, int version) {
  std::string d = dir;
  std::string text;
  if (version == 2) {
    // "<quota> <period>" or "max <period>", in microseconds.
    if (!readAll(d + "/cpu.max", &text)) return -1;
    std::vector<std::string_view> f = split(text, ' ');
    if (f.size() != 2) return -1;
    if (f[0] == "max") return 0;
    long long quota = 0, period = 0;
    if (!parseInt(f[0], &quota) || !parseInt(f[1], &period) || quota <= 0 ||
        period <= 0) {
      return -1;
    }
    return static_cast<double>(quota) / static_cast<double>(period);
  }
  if (version == 1) {
    long long quota = 0, period = 0;
    if (!readAll(d + "/cpu.cfs_quota_us", &text) || !parseInt(text, &quota)) {
      return -1;
    }
    if (quota < 0) return 0;  // -1: no limit
    if (!readAll(d + "/cpu.cfs_period_us", &text) || !parseInt(text, &period) ||
        quota == 0 || period <= 0) {
      return -1;
    }
    return static_cast<double>(quota) / static_cast<double>(period);
  }
  return -1;
}

}  // namespace gort::os
