// tests/fuzz/det_mode.cc: chan_fuzz's deterministic mode.
//
// The main goroutine runs a random sequence of channel operations on up to
// four channels (capacities 0..3, one maybe nil) while a model of Go's
// channels (a FIFO buffer and a closed flag per channel) predicts every
// result exactly: which select case is ready, each value and ok flag, each
// panic, len and cap. An operation that would block forever is not issued
// (the model knows when it would). Two operations involve a helper
// goroutine whose outcome is the same in every interleaving: a receiver
// spawned before main sends, and a sender spawned before main receives;
// they cross park, handoff and buffer-refill paths at any GOMAXPROCS.
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_common.h"

namespace gortfuzz {
namespace {

// What the model knows about one channel.
struct ModelChan {
  std::size_t cap = 0;
  std::deque<int> buf;
  bool closed = false;
  bool nil = false;
  bool Full() const { return buf.size() >= cap; }
};

enum Op {
  kTrySend,
  kTryRecv,
  kSend,
  kRecv,
  kClose,
  kSelect2,
  kLenCap,
  kGosched,
  kSpawnRecv,
  kSpawnSend,
  kNumOps
};

class Det {
 public:
  explicit Det(ByteReader& in) : in_(in) {}
  void Setup();
  void Step(int step);

 private:
  std::string Where(const char* op, int ch) const {
    return "det step " + std::to_string(step_) + " " + op + " ch" +
           std::to_string(ch);
  }
  // A send case is ready if it would not block (a closed channel panics).
  bool SendReady(const ModelChan& m) const {
    return !m.nil && (m.closed || !m.Full());
  }
  bool RecvReady(const ModelChan& m) const {
    return !m.nil && (!m.buf.empty() || m.closed);
  }
  void ExpectRecv(ModelChan& m, const CaseResult& r, const std::string& w);
  void DoSelect(int n, bool dflt);
  void DoSend(int ch, bool blocking);
  void DoRecv(int ch, bool blocking);
  void DoClose(int ch);
  void DoSpawnRecv(int ch);
  void DoSpawnSend(int ch);

  ByteReader& in_;
  std::vector<gort::Chan<int>> chans_;
  std::vector<ModelChan> model_;
  gort::Chan<int> reply_;
  int next_value_ = 1;
  int step_ = 0;
};

void Det::Setup() {
  int n = 1 + in_.Below(4);
  int nil_index = in_.Below(8);  // nil if < n
  for (int i = 0; i < n; i++) {
    ModelChan m;
    m.cap = in_.Below(4);
    m.nil = i == nil_index;
    chans_.push_back(m.nil ? gort::Chan<int>() : gort::MakeChan<int>(m.cap));
    if (m.nil) m.cap = 0;
    model_.push_back(m);
  }
  reply_ = gort::MakeChan<int>(1);
}

// Checks a receive that the model said was ready, and updates the model.
void Det::ExpectRecv(ModelChan& m, const CaseResult& r, const std::string& w) {
  if (!m.buf.empty()) {
    Check(r.ok && r.value == m.buf.front(),
          w + ": want " + std::to_string(m.buf.front()) + " got " +
              std::to_string(r.value) + " ok=" + std::to_string(r.ok));
    m.buf.pop_front();
  } else {
    Check(m.closed, w + ": receive succeeded on an empty open channel");
    Check(!r.ok && r.value == 0, w + ": closed and drained: want 0,false got " +
                                     std::to_string(r.value) + "," +
                                     std::to_string(r.ok));
  }
}

void Det::DoSend(int ch, bool blocking) {
  ModelChan& m = model_[ch];
  std::string w = Where(blocking ? "Send" : "TrySend", ch);
  if (blocking && (m.nil || (!m.closed && m.Full()))) return;  // would block
  int v = next_value_++;
  bool panicked = false;
  int got = -1;
  try {
    if (blocking) {
      chans_[ch].Send(v);
      got = 0;
    } else {
      CaseSpec cs{true, ch, v};
      CaseResult r[1];
      got = RunSelect(chans_, &cs, 1, true, r);
    }
  } catch (const gort::Panic& p) {
    Check(std::string(p.what()) == "send on closed channel",
          w + ": " + p.what());
    panicked = true;
  }
  Check(panicked == (!m.nil && m.closed), w + ": panic mismatch");
  if (panicked) return;
  bool ready = SendReady(m);
  Check((got == 0) == ready, w + ": ready mismatch");
  if (ready) m.buf.push_back(v);
}

void Det::DoRecv(int ch, bool blocking) {
  ModelChan& m = model_[ch];
  std::string w = Where(blocking ? "Recv" : "TryRecv", ch);
  bool ready = RecvReady(m);
  if (blocking && !ready) return;  // would block forever
  CaseResult r;
  if (blocking) {
    std::optional<int> v = chans_[ch].RecvOk();
    r.ok = v.has_value();
    r.value = v.value_or(0);
  } else {
    CaseSpec cs{false, ch, 0};
    int got = RunSelect(chans_, &cs, 1, true, &r);
    Check((got == 0) == ready, w + ": ready mismatch");
    if (got < 0) return;
  }
  ExpectRecv(m, r, w);
}

void Det::DoClose(int ch) {
  ModelChan& m = model_[ch];
  std::string w = Where("Close", ch);
  std::string want = m.nil      ? "close of nil channel"
                     : m.closed ? "close of closed channel"
                                : "";
  std::string got;
  try {
    chans_[ch].Close();
  } catch (const gort::Panic& p) {
    got = p.what();
  }
  Check(got == want, w + ": want panic '" + want + "' got '" + got + "'");
  if (!m.nil) m.closed = true;
}

void Det::DoSelect(int n, bool dflt) {
  CaseSpec cs[2];
  CaseResult r[2];
  bool any_ready = false;
  bool may_panic = false;
  for (int i = 0; i < n; i++) {
    cs[i].send = in_.Below(2) == 0;
    cs[i].ch = in_.Below(static_cast<int>(chans_.size()));
    cs[i].value = next_value_++;
    const ModelChan& m = model_[cs[i].ch];
    any_ready |= cs[i].send ? SendReady(m) : RecvReady(m);
    may_panic |= cs[i].send && !m.nil && m.closed;
  }
  if (!any_ready) dflt = true;  // a blocking select here would never return
  std::string w = Where(dflt ? "Select+default" : "Select", cs[0].ch) +
                  (n > 1 ? "/ch" + std::to_string(cs[1].ch) : "");
  int got;
  try {
    got = RunSelect(chans_, cs, n, dflt, r);
  } catch (const gort::Panic& p) {
    Check(may_panic && std::string(p.what()) == "send on closed channel",
          w + ": unexpected panic " + p.what());
    return;
  }
  if (got < 0) {
    Check(!any_ready, w + ": default chosen with a ready case");
    return;
  }
  ModelChan& m = model_[cs[got].ch];
  if (cs[got].send) {
    Check(!m.nil && !m.closed && !m.Full(), w + ": chose a send that can't go");
    m.buf.push_back(cs[got].value);
  } else {
    Check(RecvReady(m), w + ": chose a receive that can't go");
    ExpectRecv(m, r[got], w);
  }
}

// A goroutine receives once from ch and reports it; main sends once (unless
// ch is closed). Whatever the interleaving, the helper gets the buffer's
// head if there is one, else main's value.
void Det::DoSpawnRecv(int ch) {
  ModelChan& m = model_[ch];
  if (m.nil) return;
  std::string w = Where("SpawnRecv", ch);
  gort::Chan<int> c = chans_[ch];
  gort::Chan<int> reply = reply_;
  gort::Go([c, reply] {
    std::optional<int> v = c.RecvOk();
    reply.Send(v.value_or(-1));
  });
  int want;
  if (m.closed) {
    want = m.buf.empty() ? -1 : m.buf.front();
    if (!m.buf.empty()) m.buf.pop_front();
  } else {
    int v = next_value_++;
    c.Send(v);
    if (m.buf.empty()) {
      want = v;
    } else {
      want = m.buf.front();
      m.buf.pop_front();
      m.buf.push_back(v);
    }
  }
  int got = reply_.Recv();
  Check(got == want, w + ": helper got " + std::to_string(got) + " want " +
                         std::to_string(want));
}

// A goroutine sends once on ch and reports whether it panicked; main
// receives once (unless ch is closed).
void Det::DoSpawnSend(int ch) {
  ModelChan& m = model_[ch];
  if (m.nil) return;
  std::string w = Where("SpawnSend", ch);
  gort::Chan<int> c = chans_[ch];
  gort::Chan<int> reply = reply_;
  int v = next_value_++;
  gort::Go([c, reply, v] {
    int status = 1;
    try {
      c.Send(v);
    } catch (const gort::Panic&) {
      status = 2;
    }
    reply.Send(status);
  });
  if (m.closed) {
    Check(reply_.Recv() == 2, w + ": send on closed channel did not panic");
    return;
  }
  std::optional<int> got = c.RecvOk();
  int want = m.buf.empty() ? v : m.buf.front();
  if (!m.buf.empty()) {
    m.buf.pop_front();
    m.buf.push_back(v);
  }
  Check(got == want, w + ": main got " + std::to_string(got.value_or(-1)) +
                         " want " + std::to_string(want));
  Check(reply_.Recv() == 1, w + ": helper's send panicked");
}

void Det::Step(int step) {
  step_ = step;
  int op = in_.Below(kNumOps);
  int ch = in_.Below(static_cast<int>(chans_.size()));
  switch (op) {
    case kTrySend:
      DoSend(ch, false);
      break;
    case kTryRecv:
      DoRecv(ch, false);
      break;
    case kSend:
      DoSend(ch, true);
      break;
    case kRecv:
      DoRecv(ch, true);
      break;
    case kClose:
      DoClose(ch);
      break;
    case kSelect2:
      DoSelect(1 + ch % 2, in_.Below(2) == 0);
      break;
    case kLenCap: {
      const ModelChan& m = model_[ch];
      Check(chans_[ch].Len() == m.buf.size() && chans_[ch].Cap() == m.cap,
            Where("LenCap", ch) + ": len/cap mismatch");
      break;
    }
    case kGosched:
      gort::Gosched();
      break;
    case kSpawnRecv:
      DoSpawnRecv(ch);
      break;
    case kSpawnSend:
      DoSpawnSend(ch);
      break;
  }
}

}  // namespace

void RunDeterministic(ByteReader& in) {
  gort::Options options;
  options.maxprocs = 1 + in.Below(4);
  gort::Run(
      [&in] {
        Det det(in);
        det.Setup();
        for (int step = 0; step < 200 && !in.Done(); step++) det.Step(step);
      },
      options);
}

}  // namespace gortfuzz
