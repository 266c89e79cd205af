// runtime/chan.h: the channel structure shared by chan.cc and select.cc
// (Go's hchan (chan.go:33) and waitq in chan.go).
#ifndef GORT_RUNTIME_CHAN_H_
#define GORT_RUNTIME_CHAN_H_

#include <atomic>
#include <cstdint>

#include "gort/internal/chan_impl.h"
#include "runtime2.h"

namespace gort::runtime {

// waitq mirrors Go's waitq (chan.go:54): goroutines blocked on one side of a
// channel.
struct waitq {
  sudog* first = nullptr;
  sudog* last = nullptr;
  void enqueue(sudog* sg);
  sudog* dequeue();
  void dequeueSudoG(sudog* sg);
};

}  // namespace gort::runtime

// hchan is in gort::internal because the public headers hold handles to it
// (gort/internal/chan_impl.h); everything else here is the runtime's.
namespace gort::internal {

// hchan mirrors Go's hchan (chan.go:33), plus a reference count standing in for
// Go's garbage collector: Chan handles (and a parked select, for each of its
// channels) keep it alive. A plain send or receive that parks takes no
// reference: its caller's handle is alive while it queues, and once woken it
// touches the channel no more. If the last handle goes while such waiters
// are parked, the channel is orphaned and Run's end frees it with them.
struct hchan {
  std::atomic<std::int64_t> refs{1};
  bool orphaned = false;  // under lock: last handle gone with waiters parked
  // Elements in buf: written under lock, read without it by Len.
  std::atomic<std::uint32_t> qcount{0};
  std::uint32_t dataqsiz = 0;  // capacity
  char* buf = nullptr;
  const ElemOps* ops = nullptr;
  std::atomic<std::uint32_t> closed{0};
  std::uint32_t sendx = 0;
  std::uint32_t recvx = 0;
  runtime::waitq recvq;
  runtime::waitq sendq;
  runtime::mutex lock;

  void* slot(std::uint32_t i) { return buf + std::size_t{i} * ops->size; }
};

// chanfree destroys the values left in c's buffer and frees c.
void chanfree(hchan* c);

}  // namespace gort::internal

namespace gort::runtime {

using internal::ElemOps;
using internal::scase;

// The buffer moves of chan.go, shared with select.cc. Each takes c locked.
void bufpush(hchan* c, void* ep);  // moves *ep into the tail slot
void bufpop(hchan* c, void* ep);   // moves the head slot into raw ep
// sendLocked / recvLocked mirror Go's send (chan.go:294) / recv with a waiting
// partner: move the value and mark sg done; return the G to ready after
// unlocking.
G* sendLocked(hchan* c, sudog* sg, void* ep);
G* recvLocked(hchan* c, sudog* sg, void* ep);
// chanEnter is the safe point at the start of every channel operation.
void chanEnter();
// chanparkcommit mirrors Go's chanparkcommit (chan.go:657).
bool chanparkcommit(G* gp, void* chanLock);
// chanAbandon takes a parked goroutine's sudog off its channel when Run
// ends; drops the reference a select took for that case, or frees an
// orphaned channel this leaves with no waiter.
void chanAbandon(sudog* sg);

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_CHAN_H_
