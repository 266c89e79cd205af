// tests/stress_test.cc: stress tests that check nothing is lost or
// duplicated under load (ctest label "stress"). Default sizes keep the whole
// binary to a few seconds natively; Scaled() shrinks them further under the
// sanitizers. The documented long run sets the message count per
// configuration:
//
//   GORT_STRESS_MESSAGES=10000000 ./stress_test
//
// Every check is on counts and sums, never on timings. A hang is caught by a
// watchdog whose limit grows with the message count.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::Procs;
using gort_test::Scaled;

// Messages per configuration: $GORT_STRESS_MESSAGES, else Scaled(200 000).
std::int64_t Messages() {
  static const std::int64_t n = [] {
    if (const char* s = std::getenv("GORT_STRESS_MESSAGES")) {
      long long v = std::atoll(s);
      if (v > 0) return static_cast<std::int64_t>(v);
    }
    return static_cast<std::int64_t>(Scaled(200'000));
  }();
  return n;
}

// Run under a watchdog sized for the message count (30 s at the default
// size natively, 10 min for 10 million).
template <class F>
void RunStress(F&& main, const gort::Options& options) {
  const auto limit = std::chrono::seconds(60 + Messages() / 20'000);
  gort_test::Watchdog watchdog("gort::Run in " + gort_test::CurrentTestName(),
                               limit);
  gort::Run(std::forward<F>(main), options);
}

// Counts how often each value in [0, n) was seen.
class Tally {
 public:
  explicit Tally(std::int64_t n)
      : n_(n), counts_(new std::atomic<std::uint8_t>[n]) {
    for (std::int64_t i = 0; i < n; i++) counts_[i].store(0);
  }
  void Add(std::int64_t v) {
    if (v < 0 || v >= n_) {
      out_of_range_.fetch_add(1);
      return;
    }
    if (counts_[v].fetch_add(1) != 0) duplicates_.fetch_add(1);
  }
  std::uint8_t Count(std::int64_t v) const { return counts_[v].load(); }
  std::int64_t Missing() const {
    std::int64_t m = 0;
    for (std::int64_t i = 0; i < n_; i++) m += counts_[i].load() == 0;
    return m;
  }
  std::int64_t duplicates() const { return duplicates_.load(); }
  std::int64_t out_of_range() const { return out_of_range_.load(); }

 private:
  std::int64_t n_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> counts_;
  std::atomic<std::int64_t> duplicates_{0};
  std::atomic<std::int64_t> out_of_range_{0};
};

// ---------------------------------------------------------------------------
// Channels: every value delivered exactly once.

class ChannelDeliveryTest
    : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ChannelDeliveryTest, EveryValueDeliveredExactlyOnce) {
  // Not a structured binding: clang 14 cannot capture one in a lambda.
  const int capacity = std::get<0>(GetParam());
  const int procs = std::get<1>(GetParam());
  const std::int64_t n = Messages();
  constexpr int kProducers = 8;
  constexpr int kConsumers = 8;
  Tally tally(n);
  std::atomic<std::uint64_t> received_sum{0};
  std::atomic<std::int64_t> received{0};
  RunStress(
      [&] {
        auto c = gort::MakeChan<std::int64_t>(capacity);
        gort::WaitGroup producers;
        gort::WaitGroup consumers;
        for (int p = 0; p < kProducers; p++) {
          producers.Add(1);
          gort::Go([&, c, p] {
            for (std::int64_t v = p; v < n; v += kProducers) c.Send(v);
            producers.Done();
          });
        }
        for (int k = 0; k < kConsumers; k++) {
          consumers.Add(1);
          gort::Go([&, c] {
            std::uint64_t sum = 0;
            std::int64_t count = 0;
            while (auto v = c.RecvOk()) {
              tally.Add(*v);
              sum += static_cast<std::uint64_t>(*v);
              count++;
            }
            received_sum.fetch_add(sum);
            received.fetch_add(count);
            consumers.Done();
          });
        }
        producers.Wait();
        c.Close();
        consumers.Wait();
      },
      Procs(procs));
  const std::uint64_t want_sum =
      static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n - 1) / 2;
  EXPECT_EQ(received.load(), n);
  EXPECT_EQ(received_sum.load(), want_sum);
  EXPECT_EQ(tally.duplicates(), 0);
  EXPECT_EQ(tally.out_of_range(), 0);
  EXPECT_EQ(tally.Missing(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    CapacityAndProcs, ChannelDeliveryTest,
    ::testing::Combine(::testing::Values(0, 1, 128),
                       ::testing::Values(1, 2, 4)),
    [](const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
      return "Cap" + std::to_string(std::get<0>(info.param)) + "Procs" +
             std::to_string(std::get<1>(info.param));
    });

// ---------------------------------------------------------------------------
// Select across many channels while they are closed.

class SelectCloseTest : public ::testing::TestWithParam<int> {};

TEST_P(SelectCloseTest, ReceivedEqualsSentWithClosesInFlight) {
  const int procs = GetParam();
  constexpr int kChans = 8;
  constexpr int kSenders = 16;
  constexpr int kReceivers = 6;
  // Channels are closed once this many sends have succeeded; a sender may
  // send at most kCapFactor times that.
  const std::int64_t target = std::max<std::int64_t>(Messages() / 4, 100);
  constexpr std::int64_t kCapFactor = 2;
  const std::int64_t per_sender = target * kCapFactor;
  const std::int64_t n = per_sender * kSenders;
  std::unique_ptr<std::atomic<std::uint8_t>[]> sent(
      new std::atomic<std::uint8_t>[n]);
  for (std::int64_t i = 0; i < n; i++) sent[i].store(0);
  Tally tally(n);
  std::atomic<std::int64_t> sent_total{0};
  std::atomic<std::int64_t> closed_panics{0};
  std::atomic<std::int64_t> other_panics{0};
  std::atomic<std::int64_t> capped{0};
  RunStress(
      [&] {
        std::vector<gort::Chan<std::int64_t>> chans;
        for (int i = 0; i < kChans; i++) {
          chans.push_back(gort::MakeChan<std::int64_t>(i % 3 == 0 ? 0 : i));
        }
        gort::WaitGroup senders;
        gort::WaitGroup receivers;
        for (int s = 0; s < kSenders; s++) {
          senders.Add(1);
          gort::Go([&, s] {
            std::minstd_rand rng(s + 1);
            const std::int64_t base = s * per_sender;
            std::int64_t seq = 0;
            try {
              for (; seq < per_sender; seq++) {
                const int a = static_cast<int>(rng() % kChans);
                const int b =
                    (a + 1 + static_cast<int>(rng() % (kChans - 1))) % kChans;
                const std::int64_t v = base + seq;
                gort::Select(gort::SendCase(chans[a], v),
                             gort::SendCase(chans[b], v));
                sent[v].store(1);
                sent_total.fetch_add(1);
              }
              capped.fetch_add(1);
            } catch (const gort::Panic& p) {
              if (std::string(p.what()) == "send on closed channel") {
                closed_panics.fetch_add(1);
              } else {
                other_panics.fetch_add(1);
              }
            }
            senders.Done();
          });
        }
        for (int r = 0; r < kReceivers; r++) {
          receivers.Add(1);
          gort::Go([&] {
            std::vector<gort::Chan<std::int64_t>> c = chans;
            int open = kChans;
            while (open > 0) {
              std::int64_t v = -1;
              bool ok = false;
              int i = gort::Select(
                  gort::RecvCase(c[0], &v, &ok), gort::RecvCase(c[1], &v, &ok),
                  gort::RecvCase(c[2], &v, &ok), gort::RecvCase(c[3], &v, &ok),
                  gort::RecvCase(c[4], &v, &ok), gort::RecvCase(c[5], &v, &ok),
                  gort::RecvCase(c[6], &v, &ok), gort::RecvCase(c[7], &v, &ok));
              if (ok) {
                tally.Add(v);
              } else {
                c[i] = gort::Chan<std::int64_t>();  // nil: never ready again
                open--;
              }
            }
            receivers.Done();
          });
        }
        // The closer: waits for `target` sends, then closes the channels one
        // at a time while senders are still sending and selecting.
        while (sent_total.load() < target) gort::Gosched();
        for (auto& c : chans) {
          c.Close();
          gort::Gosched();
        }
        senders.Wait();
        receivers.Wait();
      },
      Procs(procs));
  std::int64_t sent_count = 0;
  std::int64_t mismatches = 0;
  for (std::int64_t v = 0; v < n; v++) {
    sent_count += sent[v].load();
    if (sent[v].load() != tally.Count(v)) mismatches++;
  }
  EXPECT_EQ(sent_count, sent_total.load());
  EXPECT_EQ(mismatches, 0) << "values received != values whose send succeeded";
  EXPECT_EQ(tally.duplicates(), 0);
  EXPECT_EQ(tally.out_of_range(), 0);
  EXPECT_EQ(other_panics.load(), 0);
  EXPECT_EQ(closed_panics.load() + capped.load(), kSenders);
  EXPECT_GT(closed_panics.load(), 0);
  EXPECT_GE(sent_total.load(), target);
}

INSTANTIATE_TEST_SUITE_P(Procs, SelectCloseTest, ::testing::Values(1, 2, 4));

// ---------------------------------------------------------------------------
// WaitGroup and Mutex under contention.

class SyncContentionTest : public ::testing::TestWithParam<int> {};

TEST_P(SyncContentionTest, MutexCounterAndWaitGroupsAreExact) {
  const int procs = GetParam();
  const int goroutines = Scaled(1000);
  const std::int64_t iterations =
      std::max<std::int64_t>(Messages() / goroutines, 10);
  std::int64_t counter = 0;   // guarded by mu
  std::int64_t trylocks = 0;  // guarded by mu
  std::atomic<int> waiters_released{0};
  std::atomic<std::int64_t> max_inside{0};
  RunStress(
      [&] {
        gort::Mutex mu;
        std::atomic<int> inside{0};
        gort::WaitGroup done;
        gort::WaitGroup start;  // many goroutines wait on one WaitGroup
        start.Add(1);
        constexpr int kWaiters = 64;
        gort::WaitGroup waiters;
        for (int w = 0; w < kWaiters; w++) {
          waiters.Add(1);
          gort::Go([&] {
            start.Wait();
            waiters_released.fetch_add(1);
            waiters.Done();
          });
        }
        for (int g = 0; g < goroutines; g++) {
          done.Add(1);
          gort::Go([&, g] {
            start.Wait();
            for (std::int64_t i = 0; i < iterations; i++) {
              const bool tried = (i + g) % 7 == 0 && mu.TryLock();
              if (!tried) mu.Lock();
              const int now = inside.fetch_add(1) + 1;
              std::int64_t m = max_inside.load();
              while (now > m && !max_inside.compare_exchange_weak(m, now)) {
              }
              counter++;
              if (tried) trylocks++;
              if (i % 64 == 0) gort::Gosched();  // yield while holding it
              inside.fetch_sub(1);
              mu.Unlock();
            }
            done.Done();
          });
        }
        start.Done();
        done.Wait();
        waiters.Wait();
        // Reuse of a WaitGroup after it reached zero.
        for (int round = 0; round < 100; round++) {
          gort::WaitGroup wg;
          wg.Add(4);
          for (int k = 0; k < 4; k++) gort::Go([&] { wg.Done(); });
          wg.Wait();
        }
      },
      Procs(procs));
  EXPECT_EQ(counter, goroutines * iterations);
  EXPECT_EQ(max_inside.load(), 1) << "two goroutines held the Mutex at once";
  EXPECT_EQ(waiters_released.load(), 64);
  EXPECT_LE(trylocks, counter);
}

INSTANTIATE_TEST_SUITE_P(Procs, SyncContentionTest, ::testing::Values(1, 2, 4));

// ---------------------------------------------------------------------------
// Goroutines blocked in syscalls while others compute and communicate.

class SyscallMixTest : public ::testing::TestWithParam<int> {};

TEST_P(SyscallMixTest, EverythingCompletes) {
  const int procs = GetParam();
  constexpr int kPairs = 8;     // eventfd readers blocked in syscalls
  constexpr int kPollers = 4;   // goroutines in poll() with a timeout
  constexpr int kSpinners = 4;  // CPU-bound goroutines
  const int rounds = std::max(Scaled(200), 5);
  const std::int64_t messages = std::max<std::int64_t>(Messages() / 4, 100);
  std::atomic<std::int64_t> events{0};
  std::atomic<std::int64_t> polls{0};
  std::atomic<std::int64_t> spins{0};
  std::atomic<std::int64_t> delivered{0};
  std::atomic<std::uint64_t> delivered_sum{0};
  gort_test::EventFd fds[kPairs];
  for (auto& fd : fds) ASSERT_TRUE(fd.ok());
  RunStress(
      [&] {
        gort::WaitGroup wg;
        std::atomic<bool> stop{false};
        // Readers block the thread in read() until their writer signals.
        for (int p = 0; p < kPairs; p++) {
          wg.Add(2);
          gort_test::EventFd* fd = &fds[p];
          auto ack = gort::MakeChan<int>();
          gort::Go([&, fd, ack, p] {
            for (int r = 0; r < rounds; r++) {
              std::uint64_t v =
                  (p % 2 == 0)
                      ? gort::BlockingSyscall([fd] { return fd->Read(); })
                      : gort::Syscall([fd] { return fd->Read(); });
              if (v > 0) events.fetch_add(1);
              ack.Send(r);
            }
            wg.Done();
          });
          gort::Go([&, fd, ack] {
            for (int r = 0; r < rounds; r++) {
              fd->Signal();
              if (ack.Recv() != r) events.fetch_add(1'000'000);  // mismatch
            }
            wg.Done();
          });
        }
        // Pollers sleep in poll() for a millisecond at a time.
        for (int k = 0; k < kPollers; k++) {
          wg.Add(1);
          gort::Go([&, k] {
            for (int r = 0; r < rounds; r++) {
              int rc = (k % 2 == 0) ? gort::Syscall([] {
                return gort_test::SleepInKernel(1);
              })
                                    : gort::BlockingSyscall([] {
                                        return gort_test::SleepInKernel(1);
                                      });
              if (rc == 0) polls.fetch_add(1);
            }
            wg.Done();
          });
        }
        // Spinners burn CPU without yielding until told to stop.
        for (int k = 0; k < kSpinners; k++) {
          wg.Add(1);
          gort::Go([&] {
            volatile std::uint64_t x = 0;
            while (!stop.load(std::memory_order_relaxed)) {
              for (int i = 0; i < 10'000; i++) x = x + i;
              spins.fetch_add(1, std::memory_order_relaxed);
              gort::Gosched();
            }
            wg.Done();
          });
        }
        // Channel traffic alongside.
        auto c = gort::MakeChan<std::int64_t>(16);
        gort::WaitGroup traffic;
        traffic.Add(2);
        gort::Go([&, c] {
          for (std::int64_t v = 0; v < messages; v++) c.Send(v);
          c.Close();
          traffic.Done();
        });
        gort::Go([&, c] {
          while (auto v = c.RecvOk()) {
            delivered.fetch_add(1);
            delivered_sum.fetch_add(static_cast<std::uint64_t>(*v));
          }
          traffic.Done();
        });
        traffic.Wait();
        // Stop the spinners only once the blocked goroutines are done too,
        // so they ran concurrently with everything else.
        while (events.load() + polls.load() <
               static_cast<std::int64_t>(kPairs + kPollers) * rounds) {
          gort::Sleep(1ms);
        }
        stop.store(true);
        wg.Wait();
      },
      Procs(procs));
  EXPECT_EQ(events.load(), static_cast<std::int64_t>(kPairs) * rounds);
  EXPECT_EQ(polls.load(), static_cast<std::int64_t>(kPollers) * rounds);
  EXPECT_EQ(delivered.load(), messages);
  EXPECT_EQ(delivered_sum.load(), static_cast<std::uint64_t>(messages) *
                                      static_cast<std::uint64_t>(messages - 1) /
                                      2);
  EXPECT_GT(spins.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Procs, SyscallMixTest, ::testing::Values(1, 2, 4));

// ---------------------------------------------------------------------------
// GOMAXPROCS changed repeatedly while work runs.

TEST(GomaxprocsStressTest, NothingLostWhileProcsChange) {
  const std::int64_t n = Messages();
  constexpr int kProducers = 6;
  constexpr int kConsumers = 6;
  Tally tally(n);
  std::atomic<std::int64_t> spawned_ran{0};
  std::atomic<int> changes{0};
  int spawned = 0;
  RunStress(
      [&] {
        auto c = gort::MakeChan<std::int64_t>(8);
        std::atomic<bool> stop{false};
        gort::WaitGroup producers;
        gort::WaitGroup consumers;
        gort::WaitGroup changer;
        gort::WaitGroup extra;
        changer.Add(1);
        gort::Go([&] {
          int k = 0;
          while (!stop.load()) {
            gort::GOMAXPROCS(1 + (k++ % 4));
            changes.fetch_add(1);
            gort::Sleep(100us);
          }
          changer.Done();
        });
        for (int p = 0; p < kProducers; p++) {
          producers.Add(1);
          gort::Go([&, c, p] {
            for (std::int64_t v = p; v < n; v += kProducers) {
              c.Send(v);
              if (v % 1024 == p) gort::GOMAXPROCS(1 + (v / 1024) % 4);
            }
            producers.Done();
          });
        }
        for (int k = 0; k < kConsumers; k++) {
          consumers.Add(1);
          gort::Go([&, c] {
            while (auto v = c.RecvOk()) tally.Add(*v);
            consumers.Done();
          });
        }
        // Spawning goroutines while the Ps change.
        for (std::int64_t i = 0; i < std::max<std::int64_t>(n / 100, 10); i++) {
          extra.Add(1);
          spawned++;
          gort::Go([&] {
            spawned_ran.fetch_add(1);
            extra.Done();
          });
          if (i % 16 == 0) gort::Gosched();
        }
        producers.Wait();
        c.Close();
        consumers.Wait();
        extra.Wait();
        stop.store(true);
        changer.Wait();
      },
      Procs(4));
  EXPECT_EQ(tally.duplicates(), 0);
  EXPECT_EQ(tally.out_of_range(), 0);
  EXPECT_EQ(tally.Missing(), 0);
  EXPECT_EQ(spawned_ran.load(), spawned);
  EXPECT_GT(changes.load(), 0);
}

}  // namespace
