// tools/hooks_redis.cc: what gort::hooks buys a blocking C client library
// (docs/hooks.md). Runs unmodified Debian hiredis against a redis-server
// it starts (or --socket=PATH), and prints one line of numbers:
//
//   --mode=goroutines  --clients goroutines at $GOMAXPROCS (default 1), each
//                      its own connection doing --ops SET+GET pairs, beside a
//                      5 ms ticker goroutine (its worst lateness, and the
//                      process's most OS threads, are reported) and, with
//                      --blpop-ms, one goroutine waiting in BLPOP meanwhile.
//   --mode=threads     the same SET+GET pairs split over --threads plain
//                      threads (no gort at all): the classic alternative.
//
// Built twice from this file: gort-hooks-redis links gort::hooks,
// gort-hooks-redis-nohooks does not (hooks=0 in its output), so the same
// goroutine program shows the problem the hooks solve.
// scripts/load-test-hooks.sh runs all three.
#include <hiredis/hiredis.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gort/gort.h"
#include "hooks_libs_test.h"

namespace {

using namespace std::chrono_literals;

struct Flags {
  std::string mode = "goroutines";
  std::string socket;
  int clients = 1000, ops = 100, threads = 64, blpopMs = 0;
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&](const char* name) -> const char* {
      std::size_t n = std::strlen(name);
      return a.compare(0, n, name) == 0 ? a.c_str() + n : nullptr;
    };
    if (auto v = val("--mode="))
      f.mode = v;
    else if (auto v = val("--socket="))
      f.socket = v;
    else if (auto v = val("--clients="))
      f.clients = std::atoi(v);
    else if (auto v = val("--ops="))
      f.ops = std::atoi(v);
    else if (auto v = val("--threads="))
      f.threads = std::atoi(v);
    else if (auto v = val("--blpop-ms="))
      f.blpopMs = std::atoi(v);
    else {
      std::fprintf(stderr, "hooks_redis: unknown flag %s\n", a.c_str());
      std::exit(2);
    }
  }
  return f;
}

// pairs runs n SET+GET pairs on key; how many replies were right.
int pairs(redisContext* c, const std::string& key, int n) {
  int ok = 0;
  for (int j = 0; j < n; j++) {
    std::string val = key + "-" + std::to_string(j);
    auto* s = static_cast<redisReply*>(
        redisCommand(c, "SET %s %s", key.c_str(), val.c_str()));
    auto* g = static_cast<redisReply*>(redisCommand(c, "GET %s", key.c_str()));
    if (s != nullptr && g != nullptr && g->type == REDIS_REPLY_STRING &&
        g->str == val) {
      ok++;
    }
    if (s != nullptr) freeReplyObject(s);
    if (g != nullptr) freeReplyObject(g);
  }
  return ok;
}

double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

std::int64_t now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void goroutines(const Flags& f, const std::string& sock) {
  std::atomic<int> ok{0}, ticks{0}, maxThreads{0};
  std::atomic<std::int64_t> maxLate{0};
  std::int64_t t0 = now(), t1 = 0;
  gort::Run([&] {
    std::atomic<bool> stop{false};
    gort::WaitGroup bg;
    bg.Go([&] {
      while (!stop) {
        std::int64_t a = now();
        gort::Sleep(5ms);
        maxLate = std::max<std::int64_t>(maxLate, now() - a - 5'000'000);
        ticks++;
        maxThreads = std::max(maxThreads.load(), gort_test::ThreadCount());
      }
    });
    if (f.blpopMs > 0) {
      bg.Go([&] {
        redisContext* c = redisConnectUnix(sock.c_str());
        std::string cmd =
            "BLPOP gort-hooks-empty " + std::to_string(f.blpopMs / 1000.0);
        while (!stop) {
          freeReplyObject(redisCommand(c, cmd.c_str()));
          gort::Gosched();  // without hooks, the only way others get the P
        }
        redisFree(c);
      });
    }
    gort::WaitGroup wg;
    for (int i = 0; i < f.clients; i++) {
      wg.Go([&, i] {
        redisContext* c = redisConnectUnix(sock.c_str());
        for (int k = 0; c != nullptr && c->err == REDIS_ERR_IO && k < 100;
             k++) {
          redisFree(c);  // the listen backlog was full (EAGAIN): again
          usleep(1000);
          c = redisConnectUnix(sock.c_str());
        }
        if (c == nullptr || c->err) return;
        ok += pairs(c, std::string(1, 'g').append(std::to_string(i)), f.ops);
        redisFree(c);
      });
    }
    wg.Wait();
    t1 = now();
    stop = true;
    bg.Wait();
  });
  std::int64_t n = std::int64_t{f.clients} * f.ops;
  std::printf(
      "mode=goroutines hooks=%d gomaxprocs=%s clients=%d pairs=%lld "
      "correct=%d seconds=%.3f pairs_per_sec=%.0f max_threads=%d ticks=%d "
      "max_tick_late_ms=%.1f blpop_ms=%d\n",
      GORT_HOOKS_LINKED,
      std::getenv("GOMAXPROCS") ? std::getenv("GOMAXPROCS") : "default",
      f.clients, static_cast<long long>(n), ok.load(), seconds(t1 - t0),
      static_cast<double>(n) / seconds(t1 - t0), maxThreads.load(),
      ticks.load(), static_cast<double>(maxLate) / 1e6, f.blpopMs);
}

void threads(const Flags& f, const std::string& sock) {
  std::atomic<int> ok{0};
  std::int64_t total = std::int64_t{f.clients} * f.ops;
  std::int64_t t0 = now();
  std::vector<std::thread> ts;
  for (int t = 0; t < f.threads; t++) {
    int n = static_cast<int>(total / f.threads + (t < total % f.threads));
    ts.emplace_back([&, t, n] {
      redisContext* c = redisConnectUnix(sock.c_str());
      if (c == nullptr || c->err) return;
      ok += pairs(c, std::string(1, 't').append(std::to_string(t)), n);
      redisFree(c);
    });
  }
  for (auto& t : ts) t.join();
  std::int64_t t1 = now();
  std::printf(
      "mode=threads hooks=%d threads=%d pairs=%lld correct=%d seconds=%.3f "
      "pairs_per_sec=%.0f\n",
      GORT_HOOKS_LINKED, f.threads, static_cast<long long>(total), ok.load(),
      seconds(t1 - t0), static_cast<double>(total) / seconds(t1 - t0));
}

}  // namespace

int main(int argc, char** argv) {
  Flags f = parse(argc, argv);
  rlimit r;
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
  gort_test::Redis redis(f.socket.empty());
  std::string sock = f.socket.empty() ? redis.Socket() : f.socket;
  if (f.socket.empty() && !redis.Up()) {
    std::fprintf(stderr, "hooks_redis: could not start redis-server\n");
    return 1;
  }
  if (f.mode == "threads") {
    threads(f, sock);
  } else {
    goroutines(f, sock);
  }
  return 0;
}
