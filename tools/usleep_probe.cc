// tools/usleep_probe.cc: gort-usleep-probe measures how long the runtime's
// usleep really sleeps in each UsleepMode, the number that decides how often
// sysmon wakes (Go's CL 248699 printed the same lines for Windows timers).
//
// For each mode it starts a gort::Run with GOMAXPROCS 1 and that mode, and
// on a goroutine calls gort::debug::Usleep(d) repeatedly for d = 1000, 100,
// 10 and 1 us, timing each call with gort::Nanotime. It prints the median:
//
//   mode: lowres (Go default timer slack)
//   thread timer slack: 50000 ns
//   delay is 1000 us - slept for 1069 us
//   ...
//
// It then times gort::Sleep(d) the same way, once with no descriptor
// registered (the idle M sleeps on its note: a futex with a nanosecond
// timeout on Linux; on Windows the M's high-resolution timer in
// high-resolution mode, WaitOnAddress in whole milliseconds in
// low-resolution mode) and once while a goroutine waits on an eventfd
// through gort::poll::FD (Windows: on a loopback TCP connection), so that
// the idle M blocks in the network poller (Linux: epoll_pwait2 or a timerfd
// in high-resolution mode, whole milliseconds in low-resolution mode, as
// Go; Windows: the completion port, with a high-resolution timer's wait
// packet in high-resolution mode):
//
//   sleep (no poller): delay is 10 us - slept for 21 us
//   sleep (poller in use): delay is 10 us - slept for 23 us

#if defined(_WIN32)
#include <windows.h>
#else
#include <sys/eventfd.h>
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gort/chan.h"
#include "gort/debug.h"
#include "gort/net.h"
#include "gort/poll.h"
#include "gort/runtime.h"

namespace {

struct Mode {
  const char* name;
  gort::UsleepMode usleep;
  const char* about;
};

#if defined(_WIN32)
constexpr Mode kModes[] = {
    {"lowres", gort::UsleepMode::kLowRes, "timeBeginPeriod(1) + usleep2"},
    {"highres", gort::UsleepMode::kHighRes,
     "per-M high-resolution waitable timer"},
};
#else
constexpr Mode kModes[] = {
    {"lowres", gort::UsleepMode::kLowRes, "Go default timer slack"},
    {"highres", gort::UsleepMode::kHighRes, "1 ns timer slack"},
};
#endif

constexpr std::uint32_t kDelaysUs[] = {1000, 100, 10, 1};

struct Options {
  int samples = 1000;  // Per delay; a fifth of this for delays >= 1 ms.
  bool verbose = false;
  std::vector<const Mode*> modes = {&kModes[0], &kModes[1]};
};

struct DelayResult {
  std::uint32_t delay_us;
  std::vector<std::int64_t> slept_ns;  // Sorted.
};

struct ModeResult {
  long timer_slack_ns = -1;
  std::vector<DelayResult> delays;
};

[[noreturn]] void Usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: gort-usleep-probe [--mode=lowres|highres|both] "
               "[--samples=N] [--verbose]\n"
               "\n"
               "Times gort::debug::Usleep(d) on a goroutine for d = 1000, "
               "100, 10, 1 us in each\nusleep mode and prints the median.\n"
               "  --samples=N  calls per delay (default 1000; N/5 for 1000 "
               "us)\n"
               "  --verbose    also print min, 10th/90th percentile and max\n");
  std::exit(code);
}

Options ParseFlags(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0) arg.erase(0, 1);
    if (arg == "-help" || arg == "-h") Usage(0);
    if (arg == "-verbose" || arg == "-v") {
      options.verbose = true;
    } else if (arg.rfind("-samples=", 0) == 0) {
      options.samples = std::atoi(arg.c_str() + std::strlen("-samples="));
      if (options.samples < 5 || options.samples > 1'000'000) Usage(2);
    } else if (arg == "-mode=both") {
      options.modes = {&kModes[0], &kModes[1]};
    } else if (arg == "-mode=lowres") {
      options.modes = {&kModes[0]};
    } else if (arg == "-mode=highres") {
      options.modes = {&kModes[1]};
    } else {
      std::fprintf(stderr, "gort-usleep-probe: bad argument %s\n", argv[i]);
      Usage(2);
    }
  }
  return options;
}

// Runs the probe on a goroutine of a fresh runtime in the given mode.
ModeResult Probe(const Mode& mode, const Options& options) {
  ModeResult result;
  gort::Run(
      [&] {
        auto done = gort::MakeChan<int>();
        gort::Go([&result, &options, done] {
#if !defined(_WIN32)
          result.timer_slack_ns = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
#endif
          for (std::uint32_t delay : kDelaysUs) {
            const int samples =
                delay >= 1000 ? options.samples / 5 : options.samples;
            DelayResult d{delay, {}};
            d.slept_ns.reserve(samples);
            // Inside gort::Syscall: the goroutine sleeps its thread on
            // purpose, so it tells the scheduler (else sysmon's blockwarn
            // check would rightly report it).
            gort::Syscall([&] {
              for (int i = 0; i < samples; ++i) {
                const std::int64_t start = gort::Nanotime();
                gort::debug::Usleep(delay);
                d.slept_ns.push_back(gort::Nanotime() - start);
              }
            });
            std::sort(d.slept_ns.begin(), d.slept_ns.end());
            result.delays.push_back(std::move(d));
          }
          done.Send(1);
        });
        done.Recv();
      },
      gort::Options{.maxprocs = 1, .usleep = mode.usleep});
  return result;
}

// Times gort::Sleep(d) on main in a fresh runtime in the given mode; with
// poller, another goroutine first parks reading an eventfd (Windows: one end
// of a loopback TCP connection, as poll::FD takes sockets only there), so
// the idle M waits in netpoll until the sleep's timer.
std::vector<DelayResult> ProbeSleep(const Mode& mode, const Options& options,
                                    bool poller, std::string* method) {
  std::vector<DelayResult> out;
  gort::Run(
      [&] {
#if defined(_WIN32)
        gort::net::Listener ln;
        gort::net::Conn ev;
        gort::net::Conn peer;
#else
        gort::poll::FD ev;
#endif
        auto parked = gort::MakeChan<int>(1);
        if (poller) {
#if defined(_WIN32)
          ln = gort::net::Listen("tcp", "127.0.0.1:0");
          peer = gort::net::Dial("tcp", ln.Addr());
          ev = ln.Accept();
#else
          ev = gort::poll::FD(eventfd(0, EFD_CLOEXEC));
#endif
          gort::Go([&ev, parked]() mutable {
            parked.Send(1);
            std::uint64_t v;
            try {
              ev.Read(&v, sizeof v);
            } catch (const std::exception&) {
            }
          });
          parked.Recv();
          gort::Gosched();  // the reader parks in the poller
          *method = gort::ReadStats().netpoll_highres;
        }
        for (std::uint32_t delay : kDelaysUs) {
          const int samples =
              delay >= 1000 ? options.samples / 5 : options.samples;
          DelayResult d{delay, {}};
          d.slept_ns.reserve(samples);
          for (int i = 0; i < samples; ++i) {
            const std::int64_t start = gort::Nanotime();
            gort::Sleep(std::chrono::microseconds(delay));
            d.slept_ns.push_back(gort::Nanotime() - start);
          }
          std::sort(d.slept_ns.begin(), d.slept_ns.end());
          out.push_back(std::move(d));
        }
        if (poller) ev.Close();
      },
      gort::Options{.maxprocs = 1, .usleep = mode.usleep});
  return out;
}

// Value at quantile q of sorted xs (nearest rank, halves averaged for the
// median of an even count).
double At(const std::vector<std::int64_t>& xs, double q) {
  if (q == 0.5 && xs.size() % 2 == 0) {
    return (xs[xs.size() / 2 - 1] + xs[xs.size() / 2]) / 2.0;
  }
  std::size_t i = static_cast<std::size_t>(q * (xs.size() - 1) + 0.5);
  return static_cast<double>(xs[std::min(i, xs.size() - 1)]);
}

// Prints d's spread under --verbose.
void PrintSpread(const DelayResult& d) {
  std::printf("  n=%zu min=%.1f p10=%.1f p50=%.1f p90=%.1f max=%.1f (us)\n",
              d.slept_ns.size(), At(d.slept_ns, 0) / 1000,
              At(d.slept_ns, 0.1) / 1000, At(d.slept_ns, 0.5) / 1000,
              At(d.slept_ns, 0.9) / 1000, At(d.slept_ns, 1) / 1000);
}

#if defined(_WIN32)
// The seed's C program: a waitable timer created with or without
// CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, with or without timeBeginPeriod(1),
// set to each delay and waited for, outside the runtime. Prints the median
// of each delay in the same format as the runtime's modes.
void ProbeRawTimers(const Options& options) {
  for (bool period : {false, true}) {
    for (bool highres : {false, true}) {
      std::printf("\ntimer: high-resolution flag %s, timeBeginPeriod(1) %s\n",
                  highres ? "on" : "off", period ? "on" : "off");
      if (period) timeBeginPeriod(1);
      HANDLE t = CreateWaitableTimerExW(
          nullptr, nullptr, highres ? 0x00000002 : 0, TIMER_ALL_ACCESS);
      if (t == nullptr) {
        std::printf("CreateWaitableTimerExW failed: %lu\n", GetLastError());
      } else {
        for (std::uint32_t delay : kDelaysUs) {
          const int samples =
              delay >= 1000 ? options.samples / 5 : options.samples;
          std::vector<std::int64_t> slept;
          for (int i = 0; i < samples; ++i) {
            LARGE_INTEGER due;
            due.QuadPart = -10 * static_cast<std::int64_t>(delay);
            const std::int64_t start = gort::Nanotime();
            SetWaitableTimer(t, &due, 0, nullptr, nullptr, FALSE);
            WaitForSingleObject(t, INFINITE);
            slept.push_back(gort::Nanotime() - start);
          }
          std::sort(slept.begin(), slept.end());
          std::printf("delay is %" PRIu32 " us - slept for %.0f us\n", delay,
                      At(slept, 0.5) / 1000);
        }
        CloseHandle(t);
      }
      if (period) timeEndPeriod(1);
      std::fflush(stdout);
    }
  }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseFlags(argc, argv);
  bool first = true;
  for (const Mode* mode : options.modes) {
    ModeResult r = Probe(*mode, options);
    if (!first) std::printf("\n");
    first = false;
    std::printf("mode: %s (%s)\n", mode->name, mode->about);
    if (r.timer_slack_ns >= 0) {
      std::printf("thread timer slack: %ld ns\n", r.timer_slack_ns);
    }
    for (const DelayResult& d : r.delays) {
      std::printf("delay is %" PRIu32 " us - slept for %.0f us\n", d.delay_us,
                  At(d.slept_ns, 0.5) / 1000);
      if (options.verbose) PrintSpread(d);
    }
    for (bool poller : {false, true}) {
      std::string method;
      std::vector<DelayResult> sleeps =
          ProbeSleep(*mode, options, poller, &method);
      if (poller) std::printf("poller's timed waits: %s\n", method.c_str());
      for (const DelayResult& d : sleeps) {
        std::printf("sleep (%s): delay is %" PRIu32 " us - slept for %.0f us\n",
                    poller ? "poller in use" : "no poller", d.delay_us,
                    At(d.slept_ns, 0.5) / 1000);
        if (options.verbose) PrintSpread(d);
      }
    }
    std::fflush(stdout);
  }
#if defined(_WIN32)
  ProbeRawTimers(options);
#endif
  return 0;
}
