// runtime/trace_stack.h: the execution tracer's stack table (Go's
// traceStackTable (trace.go:949)): each distinct stack of return addresses
// gets an id the first time an event records it, the event stores only the
// id, and the table is written out when the trace stops.
//
// Lookups take no lock. A bucket is the head of a chain of stacks; a stack
// is written in full before the release store that links it in at the head,
// never changes afterwards, and readers walk the chain from an acquire load
// of the head, so any M finds a stack it has seen with one hash, a few loads
// and a compare of its return addresses. A new stack is inserted under the
// table's lock (looked up again there, so two Ms that race to insert the
// same stack get one id), in memory from the table's own arena of 64 KiB
// blocks: a stack seen before allocates nothing. Unlike Go the arena is
// bounded (kMaxBlocks); past it put answers 0, an event without a stack.
#ifndef GORT_RUNTIME_TRACE_STACK_H_
#define GORT_RUNTIME_TRACE_STACK_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "lock.h"

namespace gort::runtime {

// traceStacks: the distinct stacks of a trace's records (id i at i - 1).
using traceStacks = std::vector<std::vector<std::uintptr_t>>;

// traceStackTable mirrors Go's traceStackTable (trace.go:949).
class traceStackTable {
 public:
  // Go's traceStackTable (trace.go:953) has as many buckets.
  static constexpr int kBuckets = 1 << 13;
  static constexpr int kBlockBytes = 64 << 10;
  static constexpr int kMaxBlocks = 256;  // 16 MiB of stacks at most

  traceStackTable() = default;
  traceStackTable(const traceStackTable&) = delete;
  traceStackTable& operator=(const traceStackTable&) = delete;
  ~traceStackTable();

  // put mirrors Go's traceStackTable.put (trace.go:976): the id (1, 2, ...)
  // of pcs[0, n), new if the table has not seen it; 0 for an empty stack or
  // when the arena is exhausted. Any thread, concurrently with other puts.
  std::uint32_t put(const std::uintptr_t* pcs, int n);
  // dump: every stack, id i at index i - 1 (Go's traceStackTable.dump
  // (trace.go:1045) writes them; here the format's writer does). No put may
  // run meanwhile.
  traceStacks dump();
  // reset: forgets every stack and frees the arena (the end of Go's
  // traceStackTable.dump (trace.go:1079)).
  // No put may run meanwhile.
  void reset();

 private:
  struct traceStack;
  struct block;

  // find mirrors Go's traceStackTable.find (trace.go:1009): pcs' id, 0 if
  // absent; lock-free.
  std::uint32_t find(const std::uintptr_t* pcs, int n,
                     std::uint64_t hash) const;
  // newStack mirrors Go's traceStackTable.newStack (trace.go:1026): room for
  // a stack of n return addresses, nullptr when the arena is exhausted.
  traceStack* newStack(int n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(lock_);

  mutex lock_;
  std::uint32_t seq_ ABSL_GUARDED_BY(lock_) = 0;
  block* blocks_ ABSL_GUARDED_BY(lock_) = nullptr;  // newest first
  int nblocks_ ABSL_GUARDED_BY(lock_) = 0;
  std::atomic<traceStack*> tab_[kBuckets] = {};
};

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_TRACE_STACK_H_
