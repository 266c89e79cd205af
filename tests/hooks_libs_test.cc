// tests/hooks_libs_test.cc: unmodified C client libraries from Debian on
// goroutines through gort::hooks (docs/hooks.md), at GOMAXPROCS 1: hiredis
// against a redis-server the test starts, libcurl's easy API against the
// HTTP example server (examples/http.cc) the test starts. Neither library
// knows about gort; every blocking read, write, poll and connect inside them
// parks its goroutine on gort's poller.
#include "hooks_libs_test.h"

#include <curl/curl.h>
#include <hiredis/hiredis.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::ThreadCount;

// Every goroutine holds one descriptor: lift the soft limit to the hard one.
void RaiseFdLimit() {
  rlimit r;
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
}

// Ticker: a goroutine that wakes every 5 ms until stopped, counting its
// wake-ups and sampling the process's thread count.
struct Ticker {
  std::atomic<bool> stop{false};
  std::atomic<int> ticks{0};
  std::atomic<int> maxThreads{0};
  std::atomic<std::int64_t> maxLateNs{0};
  gort::WaitGroup wg;
  void Start() {
    wg.Go([this] {
      while (!stop) {
        std::int64_t t0 = gort::Nanotime();
        gort::Sleep(5ms);
        std::int64_t late = gort::Nanotime() - t0 - 5'000'000;
        maxLateNs = std::max<std::int64_t>(maxLateNs, late);
        ticks++;
        maxThreads = std::max(maxThreads.load(), ThreadCount());
      }
    });
  }
  void Stop() {
    stop = true;
    wg.Wait();
  }
};

// connect: a hiredis connection over the unix socket. A thousand goroutines
// connect at once, faster than redis accepts: a non-blocking unix-socket
// connect (hiredis always connects non-blocking) fails with EAGAIN when the
// listen backlog is full, so try again after a moment, as a client must.
redisContext* connect(const std::string& path) {
  for (int i = 0;; i++) {
    redisContext* c = redisConnectUnix(path.c_str());
    if (c == nullptr || c->err == 0 || c->err != REDIS_ERR_IO ||
        std::string(c->errstr) != std::strerror(EAGAIN) || i == 100) {
      return c;
    }
    redisFree(c);
    gort::Sleep(1ms);
  }
}

// Reply: a command's reply, freed after.
struct Reply {
  redisReply* r;
  explicit Reply(void* p) : r(static_cast<redisReply*>(p)) {}
  ~Reply() {
    if (r != nullptr) freeReplyObject(r);
  }
};

TEST(HooksLibsTest, HiredisThousandGoroutinesAtGomaxprocs1) {
  gort_test::Redis redis;
  if (!redis.Installed()) {
    GTEST_SKIP() << "redis-server is not installed (scripts/deps.sh installs "
                    "redis-server with scripts/test.sh)";
  }
  ASSERT_TRUE(redis.Up()) << "redis-server did not start";
  RaiseFdLimit();
  const int kClients = 1000, kOps = 100;
  std::atomic<int> correct{0}, blpops{0}, blpopsWithTicks{0};
  Ticker ticker;
  gort_test::Watchdog w("hiredis test", 60s);
  gort::Run(
      [&] {
        ticker.Start();
        std::atomic<bool> done{false};
        gort::WaitGroup slow;
        // A reply the server holds for 200 ms: the ticker must fire
        // meanwhile, which it cannot if the waiting read holds the P.
        slow.Go([&] {
          redisContext* c = connect(redis.Socket());
          ASSERT_TRUE(c != nullptr && c->err == 0);
          while (!done || blpops == 0) {
            int t0 = ticker.ticks;
            Reply r(redisCommand(c, "BLPOP gort-hooks-empty 0.2"));
            ASSERT_NE(r.r, nullptr);
            EXPECT_EQ(r.r->type, REDIS_REPLY_NIL);
            blpops++;
            if (ticker.ticks - t0 >= 1) blpopsWithTicks++;
          }
          redisFree(c);
        });
        gort::WaitGroup wg;
        for (int i = 0; i < kClients; i++) {
          wg.Go([&, i] {
            redisContext* c = connect(redis.Socket());
            ASSERT_TRUE(c != nullptr && c->err == 0) << (c ? c->errstr : "");
            std::string key = "k";  // not "k" + ...: GCC 12 -Wrestrict
            key += std::to_string(i);
            for (int j = 0; j < kOps; j++) {
              std::string val = std::to_string(i) + "-" + std::to_string(j);
              Reply s(redisCommand(c, "SET %s %s", key.c_str(), val.c_str()));
              Reply g(redisCommand(c, "GET %s", key.c_str()));
              if (s.r != nullptr && g.r != nullptr &&
                  s.r->type == REDIS_REPLY_STATUS &&
                  g.r->type == REDIS_REPLY_STRING && g.r->str == val) {
                correct++;
              }
            }
            redisFree(c);
          });
        }
        wg.Wait();
        done = true;
        slow.Wait();
        ticker.Stop();
      },
      gort_test::Procs(1));
  EXPECT_EQ(correct, kClients * kOps);
  EXPECT_GE(blpops, 1);
  EXPECT_EQ(blpopsWithTicks, blpops);
  EXPECT_LE(ticker.maxThreads, 8);
  std::printf(
      "hiredis: %d clients x %d SET+GET, %d ticks, max tick lateness "
      "%.1f ms, max threads %d\n",
      kClients, kOps, ticker.ticks.load(), ticker.maxLateNs / 1e6,
      ticker.maxThreads.load());
}

// [[maybe_unused]]: curl's type-checking macros hide the use from GCC in
// optimized builds.
[[maybe_unused]] std::size_t appendBody(char* p, std::size_t size,
                                        std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

TEST(HooksLibsTest, CurlTwoHundredGoroutinesAtGomaxprocs1) {
#ifndef GORT_EXAMPLE_HTTP
  GTEST_SKIP() << "examples/http.cc not built (GORT_BUILD_EXAMPLES=OFF)";
#else
  RaiseFdLimit();
  int port = gort_test::FreePort();
  std::string addr = "127.0.0.1:" + std::to_string(port);
  gort_test::Child server;
  ASSERT_TRUE(server.Start({GORT_EXAMPLE_HTTP, "--addr=" + addr}));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_TRUE(gort_test::WaitConnectable(reinterpret_cast<sockaddr*>(&a),
                                         sizeof a, AF_INET));
  ASSERT_EQ(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
  const int kClients = 200;
  std::atomic<int> correct{0};
  Ticker ticker;
  std::string url = "http://" + addr + "/";
  gort_test::Watchdog w("libcurl test", 60s);
  gort::Run(
      [&] {
        ticker.Start();
        gort::WaitGroup wg;
        for (int i = 0; i < kClients; i++) {
          wg.Go([&] {
            CURL* h = curl_easy_init();
            std::string body;
            curl_easy_setopt(h, CURLOPT_URL, url.c_str());
            curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, appendBody);
            curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
            curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
            CURLcode rc = curl_easy_perform(h);
            long code = 0;
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
            if (rc == CURLE_OK && code == 200 && body == "Hello, World!\n") {
              correct++;
            }
            curl_easy_cleanup(h);
          });
        }
        wg.Wait();
        ticker.Stop();
      },
      gort_test::Procs(1));
  curl_global_cleanup();
  EXPECT_EQ(correct, kClients);
  EXPECT_LE(ticker.maxThreads, 8);
  std::printf(
      "libcurl: %d goroutines, %d ticks, max tick lateness %.1f ms, "
      "max threads %d\n",
      kClients, ticker.ticks.load(), ticker.maxLateNs / 1e6,
      ticker.maxThreads.load());
#endif
}

}  // namespace
