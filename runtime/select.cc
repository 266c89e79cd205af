// runtime/select.cc: the select statement (Go's select.go: selectgo).
//
// selectgo works in three passes, as Go's does. Cases are visited in a
// random poll order (so ready cases are chosen uniformly) and channels are
// locked in address order (so two selects cannot deadlock each other), each
// channel once even if it appears in several cases. Pass 1 looks for a case
// that can proceed now. Pass 2 enqueues one sudog per case on every channel
// and parks. When a partner or close wakes the goroutine, pass 3 locks all
// channels again and dequeues the sudogs of the cases that did not fire.
// A sudog on several queues belongs to one select: whoever dequeues it first
// wins the CAS on g.selectDone; later dequeuers skip it.
#include <utility>

#include "chan.h"
#include "gort/runtime.h"
#include "panic.h"
#include "park.h"
#include "proc.h"

namespace gort::runtime {

namespace {

// sellock mirrors Go's sellock (select.go:34).
void sellock(scase* cases, const std::uint16_t* lockorder,
             int n) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  hchan* last = nullptr;
  for (int i = 0; i < n; i++) {
    hchan* c = cases[lockorder[i]].c;
    if (c != last) {
      last = c;
      lock(&c->lock);
    }
  }
}

// selunlock mirrors Go's selunlock (select.go:45): reverse order, each channel
// once.
void selunlock(scase* cases, const std::uint16_t* lockorder,
               int n) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (int i = n - 1; i >= 0; i--) {
    hchan* c = cases[lockorder[i]].c;
    if (i > 0 && c == cases[lockorder[i - 1]].c) continue;
    unlock(&c->lock);
  }
}

// selparkcommit mirrors Go's selparkcommit (select.go:63): unlock every
// channel, the last one last, touching no sudog after its channel is unlocked.
bool selparkcommit(G* gp, void*) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  gp->parkingOnChan = false;
  hchan* lastc = nullptr;
  for (sudog* sg = gp->waiting; sg != nullptr; sg = sg->waitlink) {
    if (sg->c != lastc && lastc != nullptr) unlock(&lastc->lock);
    lastc = sg->c;
  }
  if (lastc != nullptr) unlock(&lastc->lock);
  return true;
}

// sortLockOrder sorts case indexes by channel address (Go uses a heap
// sort; insertion sort is as good for the handful of cases a select has,
// and heap sort takes over for large ones).
void sortLockOrder(scase* cases, std::uint16_t* order, int n) {
  auto key = [&](int i) {
    return reinterpret_cast<std::uintptr_t>(cases[order[i]].c);
  };
  if (n <= 16) {
    for (int i = 1; i < n; i++) {
      for (int j = i; j > 0 && key(j - 1) > key(j); j--) {
        std::swap(order[j - 1], order[j]);
      }
    }
    return;
  }
  auto sift = [&](int root, int end) {
    for (;;) {
      int child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && key(child) < key(child + 1)) child++;
      if (key(root) >= key(child)) return;
      std::swap(order[root], order[child]);
      root = child;
    }
  };
  for (int i = n / 2 - 1; i >= 0; i--) sift(i, n);
  for (int end = n - 1; end > 0; end--) {
    std::swap(order[0], order[end]);
    sift(0, end);
  }
}

// shuffleTies puts the cases on one channel, adjacent after sortLockOrder,
// in a random order (Fisher-Yates), so which of them a sender or receiver
// finds queued first is random, as in Go, whose lock order is sorted from
// the random poll order. One predictable comparison per case when no two
// cases share a channel.
void shuffleTies(scase* cases, std::uint16_t* order, int n) {
  for (int i = 0; i + 1 < n;) {
    int j = i + 1;
    while (j < n && cases[order[j]].c == cases[order[i]].c) j++;
    for (int k = j - 1; k > i; k--) {
      int r = i + static_cast<int>(
                      fastrandn(static_cast<std::uint32_t>(k - i + 1)));
      std::swap(order[k], order[r]);
    }
    i = j;
  }
}

}  // namespace

}  // namespace gort::runtime

// The entry points gort/internal/chan_impl.h declares for the public
// headers, on the runtime above.
namespace gort::internal {

using namespace gort::runtime;

// selectgo mirrors Go's selectgo (select.go:122).
int selectgo(scase* cases, int ncases, std::uint16_t* order, bool block,
             bool* recvOK) {
  chanEnter();
  std::uint16_t* pollorder = order;
  std::uint16_t* lockorder = order + ncases;
  *recvOK = false;

  // Random poll order over the non-nil cases. The lock order starts from
  // the cases' own order, where Go sorts a copy of the poll order: sorting
  // then makes the same comparisons in every run of the same select, which
  // the branch predictor learns (from a random order half of them miss);
  // shuffleTies gives cases on one channel the random order they get in Go.
  int norder = 0;
  for (int i = 0; i < ncases; i++) {
    if (cases[i].c == nullptr) continue;
    int j = static_cast<int>(fastrandn(static_cast<std::uint32_t>(norder + 1)));
    pollorder[norder] = pollorder[j];
    pollorder[j] = static_cast<std::uint16_t>(i);
    lockorder[norder] = static_cast<std::uint16_t>(i);
    norder++;
  }
  if (norder == 0) {
    if (!block) return -1;
    if (getcurg() == nullptr)
      throw Panic("gort: blocking select outside a goroutine");
    gopark(nullptr, nullptr,
           norder == ncases ? waitReason::selectNoCases : waitReason::select);
    throw_("unreachable");
  }
  sortLockOrder(cases, lockorder, norder);
  shuffleTies(cases, lockorder, norder);

  sellock(cases, lockorder, norder);

  // Pass 1: a case that can proceed now.
  for (int k = 0; k < norder; k++) {
    int i = pollorder[k];
    scase& cas = cases[i];
    hchan* c = cas.c;
    if (cas.send) {
      if (c->closed.load(std::memory_order_relaxed) != 0) {
        selunlock(cases, lockorder, norder);
        throw Panic("send on closed channel");
      }
      if (sudog* sg = c->recvq.dequeue()) {
        G* gp = sendLocked(c, sg, cas.elem);
        selunlock(cases, lockorder, norder);
        goready(gp);
        return i;
      }
      if (c->qcount.load(std::memory_order_relaxed) < c->dataqsiz) {
        bufpush(c, cas.elem);
        selunlock(cases, lockorder, norder);
        return i;
      }
    } else {
      if (sudog* sg = c->sendq.dequeue()) {
        G* gp = recvLocked(c, sg, cas.elem);
        selunlock(cases, lockorder, norder);
        goready(gp);
        *recvOK = true;
        return i;
      }
      if (c->qcount.load(std::memory_order_relaxed) > 0) {
        bufpop(c, cas.elem);
        selunlock(cases, lockorder, norder);
        *recvOK = true;
        return i;
      }
      if (c->closed.load(std::memory_order_relaxed) != 0) {
        selunlock(cases, lockorder, norder);
        return i;
      }
    }
  }

  if (!block) {
    selunlock(cases, lockorder, norder);
    return -1;
  }
  G* gp = getcurg();
  if (gp == nullptr) {
    selunlock(cases, lockorder, norder);
    throw Panic("gort: blocking select outside a goroutine");
  }

  // Pass 2: enqueue on every channel, in lock order (selparkcommit unlocks
  // along gp->waiting, so one channel's cases must be adjacent there).
  sudog** nextp = &gp->waiting;
  for (int k = 0; k < norder; k++) {
    scase& cas = cases[lockorder[k]];
    sudog* sg = acquireSudog();
    sg->g = gp;
    sg->isSelect = true;
    sg->elem = cas.elem;
    sg->c = cas.c;
    *nextp = sg;
    nextp = &sg->waitlink;
    chanref(cas.c);
    (cas.send ? cas.c->sendq : cas.c->recvq).enqueue(sg);
  }
  gp->param = nullptr;
  gp->parkingOnChan = true;
  gopark(selparkcommit, nullptr, waitReason::select);
  gp = getg();

  // Pass 3: dequeue from the channels that did not fire.
  sellock(cases, lockorder, norder);
  gp->selectDone.store(false, std::memory_order_relaxed);
  auto* won = static_cast<sudog*>(gp->param);
  gp->param = nullptr;
  int casi = -1;
  bool caseSuccess = false;
  sudog* sglist = gp->waiting;
  gp->waiting = nullptr;
  for (int k = 0; k < norder; k++) {
    scase& cas = cases[lockorder[k]];
    if (sglist == won) {
      casi = lockorder[k];
      caseSuccess = sglist->success;
    } else {
      (cas.send ? cas.c->sendq : cas.c->recvq).dequeueSudoG(sglist);
    }
    sudog* next = sglist->waitlink;
    releaseSudog(sglist);
    sglist = next;
  }
  if (casi < 0) throw_("selectgo: bad wakeup");
  selunlock(cases, lockorder, norder);
  for (int k = 0; k < norder; k++) chanunref(cases[lockorder[k]].c);
  if (cases[casi].send) {
    if (!caseSuccess) throw Panic("send on closed channel");
  } else {
    *recvOK = caseSuccess;
  }
  return casi;
}

}  // namespace gort::internal
