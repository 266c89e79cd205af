// runtime/chan.h: the channel structure shared by chan.cc and select.cc
// (Go's hchan and waitq in chan.go).
#ifndef GORT_RUNTIME_CHAN_H_
#define GORT_RUNTIME_CHAN_H_

#include <atomic>
#include <cstdint>

#include "gort/internal/chan_impl.h"
#include "runtime2.h"

namespace gort::internal {

// waitq mirrors Go's waitq: goroutines blocked on one side of a channel.
struct waitq {
  runtime::sudog* first = nullptr;
  runtime::sudog* last = nullptr;
  void enqueue(runtime::sudog* sg);
  runtime::sudog* dequeue();
  void dequeueSudoG(runtime::sudog* sg);
};

// hchan mirrors Go's hchan, plus a reference count standing in for Go's
// garbage collector: Chan handles and parked waiters keep it alive.
struct hchan {
  std::atomic<std::int64_t> refs{1};
  std::atomic<std::uint32_t> qcount{0};  // elements in buf
  std::uint32_t dataqsiz = 0;            // capacity
  char* buf = nullptr;
  const ElemOps* ops = nullptr;
  std::atomic<std::uint32_t> closed{0};
  std::uint32_t sendx = 0;
  std::uint32_t recvx = 0;
  waitq recvq;
  waitq sendq;
  runtime::mutex lock;

  void* slot(std::uint32_t i) { return buf + std::size_t{i} * ops->size; }
};

// The buffer moves of chan.go, shared with select.cc. Each takes c locked.
void bufpush(hchan* c, void* ep);  // moves *ep into the tail slot
void bufpop(hchan* c, void* ep);   // moves the head slot into raw ep
// sendLocked / recvLocked mirror Go's send / recv with a waiting partner:
// move the value and mark sg done; return the G to ready after unlocking.
runtime::G* sendLocked(hchan* c, runtime::sudog* sg, void* ep);
runtime::G* recvLocked(hchan* c, runtime::sudog* sg, void* ep);
// chanEnter is the safe point at the start of every channel operation.
void chanEnter();
// chanparkcommit mirrors Go's chanparkcommit.
bool chanparkcommit(runtime::G* gp, void* chanLock);
// chanAbandon takes a parked goroutine's sudog off its channel when Run
// ends, dropping the reference it held.
void chanAbandon(runtime::sudog* sg);

}  // namespace gort::internal

#endif  // GORT_RUNTIME_CHAN_H_
