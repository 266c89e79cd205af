// runtime/trace_stack.cc: the execution tracer's stack table (Go's
// traceStackTable, trace.go:949); trace_stack.h explains the design.
#include "trace_stack.h"

#include <algorithm>
#include <cstddef>
#include <new>

namespace gort::runtime {

// traceStack mirrors Go's traceStack (trace.go:957): one stack, its return
// addresses right after it in the arena.
struct traceStackTable::traceStack {
  traceStack* link;  // the next stack of the bucket
  std::uint64_t hash;
  std::uint32_t id;
  int n;

  std::uintptr_t* stk() { return reinterpret_cast<std::uintptr_t*>(this + 1); }
  const std::uintptr_t* stk() const {
    return reinterpret_cast<const std::uintptr_t*>(this + 1);
  }
};

// block: one piece of the arena (Go's traceAllocBlock (trace.go:1125)).
struct traceStackTable::block {
  block* next = nullptr;
  std::size_t used = 0;
  alignas(std::max_align_t) unsigned char data[kBlockBytes];
};

namespace {

// traceStackHash stands for Go's memhash (alg.go:47) of the return addresses:
// a multiply-xorshift over each, its length mixed in.
std::uint64_t traceStackHash(const std::uintptr_t* pcs, int n) {
  std::uint64_t h = static_cast<std::uint64_t>(n) * 0x9e3779b97f4a7c15u;
  for (int i = 0; i < n; i++) {
    h = (h ^ static_cast<std::uint64_t>(pcs[i])) * 0xff51afd7ed558ccdu;
    h ^= h >> 32;
  }
  return h;
}

std::size_t bucketOf(std::uint64_t hash) {
  return static_cast<std::size_t>(hash % traceStackTable::kBuckets);
}

}  // namespace

traceStackTable::~traceStackTable() { reset(); }

std::uint32_t traceStackTable::find(const std::uintptr_t* pcs, int n,
                                    std::uint64_t hash) const {
  // acquire: pairs with put's release store of the head, publishing the
  // stack and everything it links to.
  for (const traceStack* s =
           tab_[bucketOf(hash)].load(std::memory_order_acquire);
       s != nullptr; s = s->link) {
    if (s->hash == hash && s->n == n && std::equal(pcs, pcs + n, s->stk())) {
      return s->id;
    }
  }
  return 0;
}

traceStackTable::traceStack* traceStackTable::newStack(int n) {
  std::size_t size = sizeof(traceStack) + sizeof(std::uintptr_t) * n;
  size = (size + alignof(traceStack) - 1) & ~(alignof(traceStack) - 1);
  if (size > sizeof(block::data)) return nullptr;
  if (blocks_ == nullptr || sizeof(block::data) - blocks_->used < size) {
    if (nblocks_ == kMaxBlocks) return nullptr;
    block* b = new block;
    b->next = blocks_;
    blocks_ = b;
    nblocks_++;
  }
  void* p = blocks_->data + blocks_->used;
  blocks_->used += size;
  return new (p) traceStack{};
}

std::uint32_t traceStackTable::put(const std::uintptr_t* pcs, int n) {
  if (n <= 0) return 0;
  std::uint64_t hash = traceStackHash(pcs, n);
  if (std::uint32_t id = find(pcs, n, hash); id != 0) return id;
  lock(&lock_);
  std::uint32_t id = find(pcs, n, hash);  // another M may have won the race
  if (id == 0) {
    if (traceStack* s = newStack(n); s != nullptr) {
      s->hash = hash;
      s->id = id = ++seq_;
      s->n = n;
      std::copy(pcs, pcs + n, s->stk());
      std::atomic<traceStack*>& head = tab_[bucketOf(hash)];
      // Only this lock's holder writes heads: relaxed. release: the stack
      // is complete before find's acquire load can see it.
      s->link = head.load(std::memory_order_relaxed);
      head.store(s, std::memory_order_release);
    }
  }
  unlock(&lock_);
  return id;
}

traceStacks traceStackTable::dump() {
  lock(&lock_);
  traceStacks out(seq_);
  unlock(&lock_);
  for (const std::atomic<traceStack*>& head : tab_) {
    for (const traceStack* s = head.load(std::memory_order_acquire);
         s != nullptr; s = s->link) {
      out[s->id - 1].assign(s->stk(), s->stk() + s->n);
    }
  }
  return out;
}

void traceStackTable::reset() {
  for (std::atomic<traceStack*>& head : tab_) {
    head.store(nullptr, std::memory_order_relaxed);  // no put runs
  }
  lock(&lock_);
  while (blocks_ != nullptr) {
    block* b = blocks_;
    blocks_ = b->next;
    delete b;
  }
  nblocks_ = 0;
  seq_ = 0;
  unlock(&lock_);
}

}  // namespace gort::runtime
