// benchmarks/compare_run.cc: how gort-compare's parent runs its children:
// spawning a measurement (fork and exec, GOMAXPROCS and timer slack set in
// between), watching its line protocol and stderr with a no-progress
// deadline, and reaping it with its peak resident set; and the small
// process helpers (this executable's path, a command's first line).

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks/compare.h"
#include "benchmarks/harness.h"

namespace gort_compare {
namespace {

// The first line of text that reports a fatal error or panic, else its last
// non-empty line.
std::string FatalLine(const std::string& text) {
  std::string last;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find("fatal error") != std::string::npos ||
        line.rfind("panic:", 0) == 0 ||
        line.find("sched_loops:") != std::string::npos ||
        line.find("ping_loops:") != std::string::npos) {
      return line;
    }
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace

// Runs argv[0] with GOMAXPROCS=procs in its environment, reading its line
// protocol from stdout and keeping its stderr; kills it when a step makes
// no progress for timeout_s. With slack1 the child's timer slack is set to
// 1 ns before the exec, which every thread it creates inherits. The peak
// resident set comes from wait4's rusage (it includes the few MB of this
// process that the fork copied, the same for every child).
ChildOutcome RunMeasurement(const std::vector<std::string>& argv, int procs,
                            double timeout_s, bool slack1) {
  ChildOutcome out;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    out.failure = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    out.failure = std::string("pipe: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return out;
  }
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string procs_text = std::to_string(procs);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    out.failure = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      close(fd);
    }
    return out;
  }
  if (pid == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    setenv("GOMAXPROCS", procs_text.c_str(), 1);
    if (slack1) prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    execv(args[0], args.data());
    const std::string msg = std::string("gort-compare: exec ") + args[0] +
                            ": " + std::strerror(errno) + "\n";
    ssize_t ignored = write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);

  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(timeout_s));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string step = "starting";
  std::string out_buf;
  bool have_result = false;
  bool timed_out = false;
  bool out_open = true;
  bool err_open = true;
  constexpr std::size_t kMaxStderr = 64 * 1024;
  auto handle_line = [&](const std::string& line) {
    if (line.rfind("step ", 0) == 0) {
      step = line.substr(5);
      deadline = std::chrono::steady_clock::now() + timeout;
    } else if (line.rfind("result ", 0) == 0) {
      have_result = true;
      std::size_t pos = 7;
      while (pos < line.size()) {
        std::size_t sp = line.find(' ', pos);
        if (sp == std::string::npos) sp = line.size();
        std::string field = line.substr(pos, sp - pos);
        if (auto eq = field.find('='); eq != std::string::npos) {
          out.fields[field.substr(0, eq)] = field.substr(eq + 1);
        }
        pos = sp + 1;
      }
    } else if (out.stderr_text.size() < kMaxStderr) {
      out.stderr_text += line + "\n";  // Stray output: keep it for reports.
    }
  };
  while (out_open || err_open) {
    const int left = gort::bench::MillisLeftOrKill(deadline, pid);
    if (left < 0) {
      timed_out = true;
      break;
    }
    pollfd pfds[2];
    int nfds = 0;
    int out_index = -1;
    int err_index = -1;
    if (out_open) {
      out_index = nfds;
      pfds[nfds++] = {out_pipe[0], POLLIN, 0};
    }
    if (err_open) {
      err_index = nfds;
      pfds[nfds++] = {err_pipe[0], POLLIN, 0};
    }
    const int ready = poll(pfds, nfds, left + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // Timeout: caught at the top of the loop.
    char buf[4096];
    if (out_index >= 0 && pfds[out_index].revents != 0) {
      const ssize_t r = read(out_pipe[0], buf, sizeof(buf));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        out_open = false;
      } else {
        out_buf.append(buf, static_cast<std::size_t>(r));
        std::size_t nl;
        while ((nl = out_buf.find('\n')) != std::string::npos) {
          handle_line(out_buf.substr(0, nl));
          out_buf.erase(0, nl + 1);
        }
      }
    }
    if (err_index >= 0 && pfds[err_index].revents != 0) {
      const ssize_t r = read(err_pipe[0], buf, sizeof(buf));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        err_open = false;
      } else if (out.stderr_text.size() < kMaxStderr) {
        out.stderr_text.append(buf, static_cast<std::size_t>(r));
      }
    }
  }
  if (!out_buf.empty()) handle_line(out_buf);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  rusage ru{};
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  out.peak_rss_kib = ru.ru_maxrss;
  if (timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g", timeout_s);
    out.failure = std::string("hung: no progress for ") + buf + " s during " +
                  step + " (child killed)";
  } else if (!have_result || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.failure = gort::bench::DescribeStatus(status) + " during " + step;
    const std::string fatal = FatalLine(out.stderr_text);
    if (!fatal.empty()) out.failure += ": " + fatal;
  } else {
    out.ok = true;
  }
  return out;
}

// The directory of this executable, with a trailing slash.
std::string SelfDir() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "./";
  std::string s(path, static_cast<std::size_t>(n));
  return s.substr(0, s.rfind('/') + 1);
}

std::string SelfPath() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "gort-compare";
  return std::string(path, static_cast<std::size_t>(n));
}

// The first line a command prints, or "".
std::string CommandOutput(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "";
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "";
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) {
      args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char buf[512];
  ssize_t r;
  while ((r = read(fds[0], buf, sizeof(buf))) != 0) {
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    text.append(buf, static_cast<std::size_t>(r));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "";
  return text.substr(0, text.find('\n'));
}

}  // namespace gort_compare
