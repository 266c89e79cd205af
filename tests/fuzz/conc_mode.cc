// tests/fuzz/conc_mode.cc: chan_fuzz's concurrent mode.
//
// Up to six goroutine programs (some started by main, the others spawned
// by a parent program part-way through) run random channel operations on
// one to three channels of capacity 0..3 at GOMAXPROCS 1..4, and may change
// GOMAXPROCS. Each value sent is unique: (program << 16) | sequence. The
// order of events differs from run to run, so the checks are the
// properties every interleaving must have:
//   - conservation: the values whose send completed are exactly the values
//     received plus the values left in the buffers (drained at the end);
//     nothing is lost, duplicated or invented;
//   - FIFO: each receiver sees one sender's values on one channel in the
//     order they were sent, and what is left in a buffer comes after all of
//     them;
//   - close: exactly one close of each channel succeeds, the others panic
//     with "close of closed channel"; a send panics only on a closed
//     channel; a receive or select case reports ok=false only on a closed
//     channel, and then with the zero value; any other panic is a failure.
// Termination: after some Gosched calls main closes every channel, which
// wakes every blocked sender (panic) and receiver (ok=false) and makes every
// later operation non-blocking, so every program finishes and reports on
// a done channel.
#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_common.h"

namespace gortfuzz {
namespace {

constexpr int kMaxPrograms = 6;
constexpr int kMaxOps = 16;

enum Op {
  kSend,
  kTrySend,
  kRecv,
  kTryRecv,
  kSelect,
  kClose,
  kGosched,
  kLenCap,
  kSetProcs,
  kSpawn,
  kNumOps
};

struct Instr {
  Op op;
  int ch;   // channel (or child program for kSpawn, procs for kSetProcs)
  int arg;  // select: case kinds and second channel; default flag
};

// What one program saw, read by main after the program reports done.
struct Log {
  std::vector<std::pair<int, int>> sent;   // (channel, value) delivered
  std::vector<std::pair<int, int>> recvd;  // (channel, value) received
  std::vector<int> send_panics;            // channels
  std::vector<int> closed_recvs;           // channels
  std::vector<int> closes_ok;              // channels
  std::vector<int> closes_panicked;        // channels
};

struct World {
  std::vector<gort::Chan<int>> chans;
  // Set just before any Close of the channel: a send panic or a closed
  // receive must find it set (the close happened before it).
  std::atomic<bool> closing[3] = {};
  std::vector<std::size_t> caps;
  std::vector<std::vector<Instr>> progs;
  std::vector<Log> logs;
  gort::Chan<int> done;
};

std::string Prog(int p) { return "program " + std::to_string(p); }

void RunProgram(World* w, int p);

// Records a panic from a channel operation, failing on unexpected ones.
void OnPanic(const gort::Panic& e, Log& log, int ch, bool close, int p) {
  std::string msg = e.what();
  if (close) {
    Check(msg == "close of closed channel", Prog(p) + " close: " + msg);
    log.closes_panicked.push_back(ch);
  } else {
    Check(msg == "send on closed channel", Prog(p) + " send: " + msg);
    log.send_panics.push_back(ch);
  }
}

// Records a receive; ok=false must come with the zero value.
void OnRecv(Log& log, int ch, int value, bool ok, int p) {
  if (ok) {
    log.recvd.emplace_back(ch, value);
  } else {
    Check(value == 0,
          Prog(p) + ": closed receive gave " + std::to_string(value));
    log.closed_recvs.push_back(ch);
  }
}

void DoSelect(World* w, int p, const Instr& in, int* seq) {
  Log& log = w->logs[p];
  CaseSpec cs[2];
  CaseResult r[2];
  int n = 1 + (in.arg & 1);
  cs[0] = CaseSpec{(in.arg & 2) != 0, in.ch, 0};
  cs[1] = CaseSpec{(in.arg & 4) != 0,
                   (in.arg >> 4) % static_cast<int>(w->chans.size()), 0};
  for (int i = 0; i < n; i++) {
    if (cs[i].send) cs[i].value = (p + 1) << 16 | ++*seq;
  }
  bool dflt = (in.arg & 8) != 0;
  int got;
  try {
    got = RunSelect(w->chans, cs, n, dflt, r);
  } catch (const gort::Panic& e) {
    bool closing = false;
    for (int i = 0; i < n; i++) {
      closing |= cs[i].send && w->closing[cs[i].ch].load();
    }
    Check(closing, Prog(p) + ": select panicked with no send case closed");
    OnPanic(e, log, -1, false, p);
    return;
  }
  if (got < 0) {
    Check(dflt, Prog(p) + ": select returned default without one");
    return;
  }
  if (cs[got].send) {
    log.sent.emplace_back(cs[got].ch, cs[got].value);
  } else {
    Check(r[got].ok || w->closing[cs[got].ch].load(),
          Prog(p) + ": select receive ok=false on an open channel");
    OnRecv(log, cs[got].ch, r[got].value, r[got].ok, p);
  }
}

void Exec(World* w, int p, const Instr& in, int* seq) {
  Log& log = w->logs[p];
  const gort::Chan<int>& c = w->chans[in.ch % w->chans.size()];
  int ch = in.ch % static_cast<int>(w->chans.size());
  switch (in.op) {
    case kSend: {
      int v = (p + 1) << 16 | ++*seq;
      try {
        c.Send(v);
        log.sent.emplace_back(ch, v);
      } catch (const gort::Panic& e) {
        Check(w->closing[ch].load(), Prog(p) + ": send panicked, channel open");
        OnPanic(e, log, ch, false, p);
      }
      break;
    }
    case kTrySend:
    case kTryRecv: {
      Instr one{kSelect, ch, (in.op == kTrySend ? 2 : 0) | 8};
      DoSelect(w, p, one, seq);
      break;
    }
    case kRecv: {
      std::optional<int> v = c.RecvOk();
      Check(v.has_value() || w->closing[ch].load(),
            Prog(p) + ": receive ok=false on an open channel");
      OnRecv(log, ch, v.value_or(0), v.has_value(), p);
      break;
    }
    case kSelect:
      DoSelect(w, p, Instr{kSelect, ch, in.arg}, seq);
      break;
    case kClose:
      w->closing[ch].store(true);
      try {
        c.Close();
        log.closes_ok.push_back(ch);
      } catch (const gort::Panic& e) {
        OnPanic(e, log, ch, true, p);
      }
      break;
    case kGosched:
      gort::Gosched();
      break;
    case kLenCap:
      Check(c.Cap() == w->caps[ch] && c.Len() <= c.Cap(),
            Prog(p) + ": len/cap out of range");
      break;
    case kSetProcs:
      gort::GOMAXPROCS(1 + in.ch % 4);
      break;
    case kSpawn:
      gort::Go([w, child = in.ch] { RunProgram(w, child); });
      break;
    case kNumOps:
      break;
  }
}

void RunProgram(World* w, int p) {
  int seq = 0;
  for (const Instr& in : w->progs[p]) Exec(w, p, in, &seq);
  w->done.Send(p);
}

// Decodes the programs; returns which ones main starts itself.
std::vector<bool> Decode(ByteReader& in, World* w) {
  int nch = 1 + in.Below(3);
  for (int i = 0; i < nch; i++) w->caps.push_back(in.Below(4));
  int np = 2 + in.Below(kMaxPrograms - 1);
  w->progs.resize(np);
  std::vector<bool> root(np, true);
  for (int p = 0; p < np; p++) {
    int nops = 1 + in.Below(kMaxOps);
    for (int i = 0; i < nops; i++) {
      Op op = static_cast<Op>(in.Below(kSpawn));
      int a = in.Next();
      w->progs[p].push_back(Instr{op, a, in.Next()});
    }
    // Programs after the first may be started by an earlier one instead.
    if (p > 0 && in.Below(2) == 0) {
      int parent = in.Below(p);
      auto& pp = w->progs[parent];
      pp.insert(pp.begin() + in.Below(static_cast<int>(pp.size()) + 1),
                Instr{kSpawn, p, 0});
      root[p] = false;
    }
  }
  return root;
}

// Main's end of the bargain: after all programs are done, drain every
// channel and check the properties in the file comment.
void CheckWorld(World* w) {
  int nch = static_cast<int>(w->chans.size());
  std::vector<std::vector<int>> sent(nch), recvd(nch), left(nch);
  std::vector<int> closes(nch);
  for (const Log& log : w->logs) {
    for (auto [c, v] : log.sent) sent[c].push_back(v);
    for (auto [c, v] : log.recvd) recvd[c].push_back(v);
    for (int c : log.closes_ok) closes[c]++;
  }
  for (int c = 0; c < nch; c++) {
    std::string where = "ch" + std::to_string(c);
    // Everything still buffered, in order; then the channel reports closed.
    for (;;) {
      std::optional<int> v = w->chans[c].RecvOk();
      if (!v) break;
      left[c].push_back(*v);
    }
    Check(left[c].size() <= w->caps[c], where + ": more left than cap");
    Check(closes[c] == 1,
          where + ": " + std::to_string(closes[c]) + " successful closes");
    // FIFO: per receiver and sender, increasing; leftovers after them all.
    std::map<int, int> last_recvd;  // sender -> highest value received
    for (const Log& log : w->logs) {
      std::map<int, int> last;
      for (auto [cc, v] : log.recvd) {
        if (cc != c) continue;
        int s = v >> 16;
        Check(last[s] < v, where + ": sender " + std::to_string(s) +
                               " reordered for one receiver");
        last[s] = v;
        last_recvd[s] = std::max(last_recvd[s], v);
      }
    }
    std::map<int, int> last_left;
    for (int v : left[c]) {
      int s = v >> 16;
      Check(last_left[s] < v && last_recvd[s] < v,
            where + ": buffered value " + std::to_string(v) + " out of order");
      last_left[s] = v;
    }
    // Conservation.
    std::vector<int> out = recvd[c];
    out.insert(out.end(), left[c].begin(), left[c].end());
    std::sort(out.begin(), out.end());
    std::sort(sent[c].begin(), sent[c].end());
    Check(out == sent[c], where + ": sent " + std::to_string(sent[c].size()) +
                              " values, received+left " +
                              std::to_string(out.size()) + " (or different)");
  }
}

}  // namespace

void RunConcurrent(ByteReader& in) {
  gort::Options options;
  options.maxprocs = 1 + in.Below(4);
  World w;
  std::vector<bool> root = Decode(in, &w);
  int yields = in.Below(16);
  gort::Run(
      [&] {
        for (std::size_t cap : w.caps)
          w.chans.push_back(gort::MakeChan<int>(cap));
        w.logs.resize(w.progs.size());
        w.done = gort::MakeChan<int>(w.progs.size());
        for (std::size_t p = 0; p < w.progs.size(); p++) {
          if (root[p])
            gort::Go([&w, p] { RunProgram(&w, static_cast<int>(p)); });
        }
        for (int i = 0; i < yields; i++) gort::Gosched();
        Log main_log;
        for (std::size_t c = 0; c < w.chans.size(); c++) {
          w.closing[c].store(true);
          try {
            w.chans[c].Close();
            main_log.closes_ok.push_back(static_cast<int>(c));
          } catch (const gort::Panic& e) {
            OnPanic(e, main_log, static_cast<int>(c), true, -1);
          }
        }
        for (std::size_t p = 0; p < w.progs.size(); p++) w.done.Recv();
        w.logs.push_back(std::move(main_log));
        CheckWorld(&w);
      },
      options);
}

}  // namespace gortfuzz
