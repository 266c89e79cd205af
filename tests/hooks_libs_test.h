// tests/hooks_libs_test.h: child servers and process probes for the tests
// and tools that run unmodified C client libraries (hiredis, libcurl) on
// goroutines through gort::hooks (docs/hooks.md).
#ifndef GORT_TESTS_HOOKS_LIBS_TEST_H_
#define GORT_TESTS_HOOKS_LIBS_TEST_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace gort_test {

// ThreadCount: the OS threads of this process now.
inline int ThreadCount() {
  int n = 0;
  for ([[maybe_unused]] auto& e :
       std::filesystem::directory_iterator("/proc/self/task")) {
    n++;
  }
  return n;
}

// FindProgram: the path of name on $PATH (or /usr/sbin, /usr/bin), or "".
inline std::string FindProgram(const std::string& name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/usr/bin";
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t end = path.find(':', pos);
    if (end == std::string::npos) end = path.size();
    std::string p = path.substr(pos, end - pos) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
    pos = end + 1;
  }
  return "";
}

// FreePort: a loopback TCP port nothing listens on just now.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), len);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Child: a server process, stopped (SIGTERM, then waited for) on
// destruction.
class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { Stop(); }
  // Start: runs argv[0] with argv; false if it could not be started. The
  // child gets SIGTERM if this process dies first (a watchdog's _Exit, a
  // timeout's kill), so no server outlives a failed test.
  bool Start(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(127);
      execv(args[0], args.data());
      _exit(127);
    }
    return true;
  }
  // Stop: SIGTERM, and SIGKILL if it has not exited within 5 s (a server's
  // graceful shutdown must not hang the test).
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int st;
    for (int i = 0; i < 500 && waitpid(pid_, &st, WNOHANG) == 0; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (waitpid(pid_, &st, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &st, 0);
    }
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

// WaitConnectable: whether connecting to addr succeeds within 10 s.
inline bool WaitConnectable(const sockaddr* addr, socklen_t len, int family) {
  for (int i = 0; i < 1000; i++) {
    int fd = socket(family, SOCK_STREAM, 0);
    bool ok = connect(fd, addr, len) == 0;
    close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Redis: redis-server on a unix socket in a fresh temporary directory, no
// persistence; stopped and removed on destruction.
class Redis {
 public:
  // Starts it (unless start is false: an empty, never-up object).
  explicit Redis(bool start = true) {
    if (!start) return;
    binary_ = FindProgram("redis-server");
    if (binary_.empty()) return;
    char tmpl[] = "/tmp/gort-redis-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return;
    dir_ = tmpl;
    socket_ = dir_ + "/redis.sock";
    if (!child_.Start({binary_, "--port", "0", "--unixsocket", socket_, "--dir",
                       dir_, "--save", "", "--appendonly", "no", "--maxclients",
                       "4000", "--logfile", dir_ + "/redis.log"})) {
      return;
    }
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    socket_.copy(a.sun_path, sizeof a.sun_path - 1);
    up_ = WaitConnectable(reinterpret_cast<sockaddr*>(&a), sizeof a, AF_UNIX);
  }
  ~Redis() {
    child_.Stop();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  // Installed: redis-server was found on $PATH.
  bool Installed() const { return !binary_.empty(); }
  // Up: it accepts connections.
  bool Up() const { return up_; }
  // Socket: its unix socket's path.
  const std::string& Socket() const { return socket_; }

 private:
  std::string binary_, dir_, socket_;
  Child child_;
  bool up_ = false;
};

}  // namespace gort_test

#endif  // GORT_TESTS_HOOKS_LIBS_TEST_H_
