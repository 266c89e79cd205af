// runtime/chan.cc: channels (Go's chan.go).
//
// Invariants, as in Go: at most one of sendq and recvq is non-empty, except
// for an unbuffered channel used by one goroutine in a select on both
// sides; for a buffered channel, qcount > 0 means recvq is empty and
// qcount < dataqsiz means sendq is empty.
//
// A sender that finds a parked receiver moves its value straight into the
// receiver's storage and readies it (no buffer involved); a receiver that
// finds a parked sender on a full buffer takes the head and moves the
// sender's value into the freed tail slot. Elements are C++ objects: moved
// with the element type's move constructor and destroyed in place, which is
// why ElemOps replaces Go's typedmemmove (mbarrier.go:157).
#include "chan.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <new>

#include "gort/runtime.h"
#include "panic.h"
#include "park.h"
#include "proc.h"

namespace gort::runtime {

namespace {
// Go's maxAlloc (malloc.go:219): 1<<40 on 64-bit targets, 2 GiB on 32-bit ones.
constexpr std::size_t kMaxChanBytes =
    static_cast<std::size_t>(std::min<std::uint64_t>(
        std::uint64_t{1} << 40, std::numeric_limits<std::size_t>::max() >> 1));

[[noreturn]] void blockForever(waitReason reason) {
  if (getcurg() == nullptr) {
    throw Panic("gort: blocking channel operation outside a goroutine");
  }
  gopark(nullptr, nullptr, reason);
  throw_("unreachable");
}

// park blocks the current goroutine on c with mysg queued on q (Go's tail of
// chansend / chanrecv); c is locked on entry and unlocked by the park.
// Always inline, so a resumed receiver or sender lands in chanrecv or
// chansend itself (park.h's file comment says why).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool park(hchan* c, waitq* q, void* ep,
                                              waitReason reason)
    ABSL_UNLOCK_FUNCTION(c->lock) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  G* gp = getcurg();
  if (gp == nullptr) {
    unlock(&c->lock);
    throw Panic("gort: blocking channel operation outside a goroutine");
  }
  // The G's own sudog, not one from the P's cache (Go's acquireSudog
  // (proc.go:379)): a goroutine waits in one plain send or receive at a
  // time, and the cache's take and give back, zeroing included, were 7 % of
  // ChanToChanPing's profile (docs/notes/performance-switch.md).
  sudog* mysg = &gp->chanWait;
  mysg->elem = ep;
  mysg->g = gp;
  mysg->c = c;
  mysg->success = false;
  gp->waiting = mysg;
  gp->param = nullptr;
  q->enqueue(mysg);  // no chanref: hchan's comment says why none is needed
  gp->parkingOnChan = true;
  gopark(chanparkcommit, &c->lock, reason);
  gp->waiting = nullptr;
  gp->param = nullptr;
  return mysg->success;
}
}  // namespace

// chanEnter is the safe point at the start of every channel operation:
// rejects threads that are not the runtime's and honours a preemption
// request.
void chanEnter() {
  G* gp = getg();
  if (gp == nullptr) {
    throw Panic("gort: channel operation outside gort::Run's goroutines");
  }
  if (gp->preempt.load(std::memory_order_relaxed) && gp != gp->m->g0) {
    goschedIfPreempted();
  }
}

void waitq::enqueue(sudog* sg) {
  sg->next = nullptr;
  sg->prev = last;
  if (last != nullptr) {
    last->next = sg;
  } else {
    first = sg;
  }
  last = sg;
}

// dequeue mirrors Go's waitq.dequeue (chan.go:770): skips select sudogs whose
// select was already won on another channel.
sudog* waitq::dequeue() {
  for (;;) {
    sudog* sg = first;
    if (sg == nullptr) return nullptr;
    first = sg->next;
    if (first == nullptr) {
      last = nullptr;
    } else {
      first->prev = nullptr;
    }
    sg->next = nullptr;
    if (sg->isSelect) {
      bool f = false;
      if (!sg->g->selectDone.compare_exchange_strong(f, true)) continue;
    } else {
      // Its goroutine holds no reference: once this caller lets go, the
      // channel may be freed before that goroutine runs, so Run's end must
      // not look at it through this sudog (chanAbandon).
      sg->c = nullptr;
    }
    return sg;
  }
}

// dequeueSudoG mirrors Go's waitq.dequeueSudoG (select.go:601).
void waitq::dequeueSudoG(sudog* sg) {
  sudog* x = sg->prev;
  sudog* y = sg->next;
  if (x != nullptr) {
    if (y != nullptr) {
      x->next = y;
      y->prev = x;
    } else {
      x->next = nullptr;
      last = x;
    }
  } else if (y != nullptr) {
    y->prev = nullptr;
    first = y;
  } else if (first == sg) {
    first = last = nullptr;
  }
  sg->next = sg->prev = nullptr;
}

// bufpush and bufpop change qcount with a plain load and store, not a
// read-modify-write: every writer holds c->lock, as in Go's chansend
// (chan.go:227), whose qcount++ is a plain add, and a locked add here was a
// third locked instruction per operation beside lock's and unlock's
// exchanges (docs/notes/performance.md, ChanBuffered).
void bufpush(hchan* c, void* ep) {
  c->ops->move(c->slot(c->sendx), ep);
  if (++c->sendx == c->dataqsiz) c->sendx = 0;
  c->qcount.store(c->qcount.load(std::memory_order_relaxed) + 1,
                  std::memory_order_relaxed);
}

void bufpop(hchan* c, void* ep) {
  void* s = c->slot(c->recvx);
  c->ops->move(ep, s);
  c->ops->destroy(s);
  if (++c->recvx == c->dataqsiz) c->recvx = 0;
  c->qcount.store(c->qcount.load(std::memory_order_relaxed) - 1,
                  std::memory_order_relaxed);
}

G* sendLocked(hchan* c, sudog* sg, void* ep) {
  c->ops->move(sg->elem, ep);  // Go's sendDirect (chan.go:335)
  G* gp = sg->g;
  gp->param = sg;
  sg->success = true;
  return gp;
}

G* recvLocked(hchan* c, sudog* sg, void* ep) {
  if (c->dataqsiz == 0) {
    c->ops->move(ep, sg->elem);  // Go's recvDirect (chan.go:348)
  } else {
    // Full buffer: take the head, put the sender's value at the tail,
    // which is the same slot.
    void* s = c->slot(c->recvx);
    c->ops->move(ep, s);
    c->ops->destroy(s);
    c->ops->move(s, sg->elem);
    if (++c->recvx == c->dataqsiz) c->recvx = 0;
    c->sendx = c->recvx;
  }
  G* gp = sg->g;
  gp->param = sg;
  sg->success = true;
  return gp;
}

bool chanparkcommit(G* gp, void* chanLock) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  gp->parkingOnChan = false;
  unlock(static_cast<mutex*>(chanLock));
  return true;
}

void chanAbandon(sudog* sg) {
  hchan* c = sg->c;
  lock(&c->lock);
  for (waitq* q : {&c->recvq, &c->sendq}) {
    for (sudog* s = q->first; s != nullptr; s = s->next) {
      if (s == sg) {
        q->dequeueSudoG(sg);
        break;
      }
    }
  }
  bool last =
      c->orphaned && c->recvq.first == nullptr && c->sendq.first == nullptr;
  unlock(&c->lock);
  if (sg->isSelect) {
    chanunref(c);  // the reference selectgo took for this case
  } else if (last) {
    chanfree(c);
  }
}

}  // namespace gort::runtime

// The entry points gort/internal/chan_impl.h declares for the public
// headers, on the runtime above.
namespace gort::internal {

using namespace gort::runtime;

hchan* makechan(const ElemOps* ops, std::size_t size) {
  if (size > 0xffffffffu ||
      (ops->size != 0 && size > kMaxChanBytes / ops->size)) {
    throw Panic("makechan: size out of range");
  }
  auto* c = new hchan;
  c->ops = ops;
  c->dataqsiz = static_cast<std::uint32_t>(size);
  if (size > 0) {
    c->buf = static_cast<char*>(::operator new (
        size * ops->size, std::align_val_t{ops->align}, std::nothrow));
    if (c->buf == nullptr) {
      delete c;
      throw Panic("makechan: size out of range");
    }
  }
  return c;
}

void chanref(hchan* c) { c->refs.fetch_add(1, std::memory_order_relaxed); }

// chanunref drops a reference; the last one frees c unless goroutines are
// parked on it, which hold none (hchan): then it is orphaned, and the
// abandonment of the last of them frees it (chanAbandon). The lock orders
// this look at the queues after a parking waiter's enqueue.
void chanunref(hchan* c) {
  if (c->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  lock(&c->lock);
  bool waiters = c->recvq.first != nullptr || c->sendq.first != nullptr;
  if (waiters) c->orphaned = true;
  unlock(&c->lock);
  if (!waiters) chanfree(c);
}

// chanfree destroys the values left in c's buffer and frees c.
void chanfree(hchan* c) {
  for (std::uint32_t n = c->qcount.load(); n > 0; n--) {
    c->ops->destroy(c->slot(c->recvx));
    if (++c->recvx == c->dataqsiz) c->recvx = 0;
  }
  if (c->buf != nullptr) {
    ::operator delete (c->buf, std::align_val_t{c->ops->align});
  }
  delete c;
}

// chansend mirrors Go's chansend (chan.go:160) with block = true.
void chansend(hchan* c, void* ep) {
  chanEnter();
  if (c == nullptr) blockForever(waitReason::chanSendNilChan);
  lock(&c->lock);
  if (c->closed.load(std::memory_order_relaxed) != 0) {
    unlock(&c->lock);
    throw Panic("send on closed channel");
  }
  if (sudog* sg = c->recvq.dequeue()) {
    G* gp = sendLocked(c, sg, ep);
    unlock(&c->lock);
    goready(gp);
    return;
  }
  if (c->qcount.load(std::memory_order_relaxed) < c->dataqsiz) {
    bufpush(c, ep);
    unlock(&c->lock);
    return;
  }
  bool ok = park(c, &c->sendq, ep, waitReason::chanSend);
  if (!ok) throw Panic("send on closed channel");  // woken by close
}

// chanrecv mirrors Go's chanrecv (chan.go:457) with block = true.
bool chanrecv(hchan* c, void* ep) {
  chanEnter();
  if (c == nullptr) blockForever(waitReason::chanReceiveNilChan);
  lock(&c->lock);
  if (c->closed.load(std::memory_order_relaxed) != 0 &&
      c->qcount.load(std::memory_order_relaxed) == 0) {
    unlock(&c->lock);
    return false;
  }
  if (sudog* sg = c->sendq.dequeue()) {
    G* gp = recvLocked(c, sg, ep);
    unlock(&c->lock);
    goready(gp);
    return true;
  }
  if (c->qcount.load(std::memory_order_relaxed) > 0) {
    bufpop(c, ep);
    unlock(&c->lock);
    return true;
  }
  bool ok = park(c, &c->recvq, ep, waitReason::chanReceive);
  // A compiler-only fence, so park is not a tail call: stacks (the trace's,
  // the profiles', the dump's) name chanrecv as Go's do.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return ok;
}

// closechan mirrors Go's closechan (chan.go:357).
void closechan(hchan* c) {
  if (c == nullptr) throw Panic("close of nil channel");
  chanEnter();
  lock(&c->lock);
  if (c->closed.load(std::memory_order_relaxed) != 0) {
    unlock(&c->lock);
    throw Panic("close of closed channel");
  }
  c->closed.store(1, std::memory_order_release);
  G* glist = nullptr;
  for (waitq* q : {&c->recvq, &c->sendq}) {
    while (sudog* sg = q->dequeue()) {
      G* gp = sg->g;
      gp->param = sg;
      sg->success = false;
      gp->schedlink = glist;
      glist = gp;
    }
  }
  unlock(&c->lock);
  while (glist != nullptr) {
    G* gp = glist;
    glist = gp->schedlink;
    gp->schedlink = nullptr;
    goready(gp);
  }
}

std::size_t chanlen(hchan* c) {
  return c == nullptr ? 0 : c->qcount.load(std::memory_order_relaxed);
}

std::size_t chancap(hchan* c) { return c == nullptr ? 0 : c->dataqsiz; }

}  // namespace gort::internal
