// runtime/os/traceback_linux.cc: the Linux side of runtime/os/traceback_os.h.
//
// Stacks are walked by the compiler's own unwinder (_Unwind_Backtrace, from
// libgcc), which follows the DWARF call-frame information every function
// carries, so user code compiled without frame pointers walks as well. A
// parked goroutine is walked through gort_unwind_parked
// (runtime/arch/traceback_linux_<goarch>.S), whose call-frame information
// names the goroutine's saved context as its caller; targets without that
// trampoline report -1 and the dump says the stack is unavailable.
//
// A goroutine stack ends in gentry, called from the context backend's
// bottom frame at the very top of the stack (gort_gostart, or the
// trampoline Boost's make_fcontext put there; its CFA is the top, rounded
// down to 16 on amd64): the walk stops at that frame, before the unwinder
// would read past the stack, and wherever a frame leaves [lo, hi).
//
// Symbols come from libdw (elfutils) when the build found it: function,
// source file and line, from the executable's and libraries' debug
// information; without it, dladdr's dynamic symbols only.
#include <cxxabi.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <unwind.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#if defined(GORT_HAVE_LIBDW)
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

#include "os/cpuprof_os.h"
#include "os/os.h"
#include "os/traceback_os.h"

#if defined(__x86_64__)
#define GORT_HAVE_UNWIND_PARKED 1
extern "C" void gort_unwind_parked(void* ctx, void (*fn)(void*), void* arg);
// A parked context's distance from the goroutine's stack pointer (the CFA
// of its innermost frame); runtime/arch/traceback_linux_amd64.S.
#if defined(GORT_ARCH_GOGO)
constexpr std::uintptr_t kParkedCfa = 0x38;  // gort_gogo
#else
constexpr std::uintptr_t kParkedCfa = 0x40;  // Boost's jump_fcontext
#endif
#endif

namespace gort::os {

namespace {

struct Walk {
  std::uintptr_t* pcs;
  int max;
  int n = 0;
  std::uintptr_t lo = 0;  // the stack's bounds; hi == 0: unbounded
  std::uintptr_t hi = 0;
  int skip = 0;         // frames to drop first
  bool parked = false;  // drop frames up to gort_unwind_parked's
  // Where each recorded return address was read (walkCache); nullptr: not
  // recorded.
  std::uintptr_t* slots = nullptr;
  bool exact = true;    // every pc is a return address read from its slot
  bool signal = false;  // drop frames up to the one a signal interrupted
};

_Unwind_Reason_Code walkFrame(_Unwind_Context* ctx, void* arg) {
  Walk* w = static_cast<Walk*>(arg);
  int beforeInsn = 0;
  std::uintptr_t ip = _Unwind_GetIPInfo(ctx, &beforeInsn);
  // libgcc's CFA of a frame is its callee's: the stack pointer before the
  // call that left ip as its return address.
  std::uintptr_t cfa = _Unwind_GetCFA(ctx);
#if defined(GORT_HAVE_UNWIND_PARKED)
  if (w->parked) {
    // Frames on the dumping thread's stack, then the trampoline itself.
    if (_Unwind_GetRegionStart(ctx) ==
        reinterpret_cast<std::uintptr_t>(&gort_unwind_parked)) {
      w->parked = false;
    }
    return _URC_NO_REASON;
  }
#endif
  if (w->skip > 0) {
    w->skip--;
    return _URC_NO_REASON;
  }
  if (ip == 0) return _URC_END_OF_STACK;
  if (w->signal) {
    // The unwinder marks the frame the signal interrupted (its ip is the
    // next instruction to run, not a return address): the stack starts
    // there, whatever its stack.
    if (beforeInsn != 0) {
      w->signal = false;
      w->n = 0;
      w->pcs[w->n++] = ip + 1;
      return w->n == w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
    }
    // Before it, the handler's frames (on the signal stack: not bounded).
    // They are kept in case no frame is marked: ThreadSanitizer runs a
    // handler from its own code at a safe point, with no signal frame, so
    // the stack is the handler's callers. The goroutine stack's bottom
    // frame still ends the walk.
    if (w->hi != 0 && cfa < w->hi && cfa >= (w->hi & ~std::uintptr_t{15})) {
      return _URC_END_OF_STACK;
    }
    if (w->n < w->max) w->pcs[w->n++] = ip;
    return _URC_NO_REASON;
  }
  // The frame whose CFA is the top of the stack is the context's bottom
  // frame (gort_gostart, or make_fcontext's trampoline), below gentry: not a
  // real frame, and unwinding it would read past the stack.
  if (w->hi != 0 && (cfa <= w->lo || cfa >= (w->hi & ~std::uintptr_t{15}))) {
    return _URC_END_OF_STACK;
  }
  if (w->slots != nullptr) {
    // The call pushed ip just below that stack pointer; a signal frame's
    // ip was never pushed.
    w->slots[w->n] = cfa - sizeof(std::uintptr_t);
    if (beforeInsn != 0) w->exact = false;
  }
  w->pcs[w->n++] = ip;
  return w->n == w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

#if defined(GORT_HAVE_UNWIND_PARKED)
void walkFromTrampoline(void* arg) { _Unwind_Backtrace(walkFrame, arg); }
#endif

#if defined(GORT_HAVE_UNWIND_PARKED)
// walkCache: the last walks of this thread, by the slot of their first
// return address (see tracebackParkedCached): kSets sets of kWays walks,
// the set chosen by a hash of every bit of the slot's address (34 KiB a
// thread that walks). Direct-mapped by bits 3-6 of the address alone (as
// this cache first was, 16 entries), two walks a thread repeats collided
// whenever those bits matched, and evicted each other every time: 3-28 %
// of ChanToSyscallPing's walks went to the
// unwinder, varying from run to run with where the stacks were mapped
// (perf probe on _Unwind_Backtrace; about 50 a run now, the first ones).
struct walkCache {
  static constexpr int kSetBits = 4;
  static constexpr int kSets = 1 << kSetBits;
  static constexpr int kWays = 4;
  static constexpr int kMax = 32;
  struct entry {
    std::uintptr_t key = 0;  // slots[0]; 0: empty
    int max = 0;             // the walk's limit
    int n = 0;
    std::uint64_t tag = 0;  // the caller's (the tracer's stack id), 0 if new
    std::uintptr_t pcs[kMax];
    std::uintptr_t slots[kMax];
  };
  entry entries[kSets][kWays];
  std::uint8_t victim[kSets] = {};  // the way the next new walk replaces
  std::int64_t hits = 0;

  // set: the index of key's set (a Fibonacci hash of the slot's address).
  static int set(std::uintptr_t key) {
    std::uint64_t h =
        (static_cast<std::uint64_t>(key) / sizeof(std::uintptr_t)) *
        0x9e3779b97f4a7c15u;
    return static_cast<int>(h >> (64 - kSetBits));
  }
};

thread_local std::unique_ptr<walkCache> tlsWalkCache;

walkCache* threadWalkCache() {
  if (!tlsWalkCache) tlsWalkCache = std::make_unique<walkCache>();
  return tlsWalkCache.get();
}

// cacheLookup: the cached walk that started at key with limit max, if every
// one of its slots, all inside [lo, hi), still holds the return address read
// there (its tag in *tag); -1 if none.
int cacheLookup(walkCache* c, std::uintptr_t key, std::uintptr_t lo,
                std::uintptr_t hi, std::uintptr_t* pcs, int max,
                std::uint64_t** tag) {
  for (walkCache::entry& e : c->entries[walkCache::set(key)]) {
    if (e.key != key || e.max != max) continue;
    for (int i = 0; i < e.n; i++) {
      std::uintptr_t a = e.slots[i];
      if (a < lo || a + sizeof(std::uintptr_t) > hi ||
          *reinterpret_cast<const std::uintptr_t*>(a) != e.pcs[i]) {
        return -1;
      }
    }
    std::memcpy(pcs, e.pcs, sizeof(std::uintptr_t) * e.n);
    c->hits++;
    if (tag != nullptr) *tag = &e.tag;
    return e.n;
  }
  return -1;
}

// cacheStore: remembers w's walk, which started at key, if it can be checked
// later (every pc read from its slot): in place of the walk from key with
// the same limit, else in an empty way, else in the set's ways in turn; its
// tag starts at 0 (in *tag).
void cacheStore(walkCache* c, std::uintptr_t key, const Walk& w,
                std::uint64_t** tag) {
  if (w.n <= 0 || !w.exact || w.slots[0] != key) return;
  int s = walkCache::set(key);
  walkCache::entry* e = nullptr;
  for (walkCache::entry& x : c->entries[s]) {
    if (x.key == key && x.max == w.max) e = &x;
  }
  for (walkCache::entry& x : c->entries[s]) {
    if (e == nullptr && x.key == 0) e = &x;
  }
  if (e == nullptr) {
    e = &c->entries[s][c->victim[s]];
    c->victim[s] =
        static_cast<std::uint8_t>((c->victim[s] + 1) % walkCache::kWays);
  }
  e->key = key;
  e->max = w.max;
  e->n = w.n;
  e->tag = 0;
  if (tag != nullptr) *tag = &e->tag;
  std::memcpy(e->pcs, w.pcs, sizeof(std::uintptr_t) * w.n);
  std::memcpy(e->slots, w.slots, sizeof(std::uintptr_t) * w.n);
}
#endif

}  // namespace

int tracebackParked(void* ctx, const void* lo, const void* hi,
                    std::uintptr_t* pcs, int max) {
#if defined(GORT_HAVE_UNWIND_PARKED)
  if (ctx == nullptr || max <= 0) return 0;
  Walk w{pcs, max};
  w.lo = reinterpret_cast<std::uintptr_t>(lo);
  w.hi = reinterpret_cast<std::uintptr_t>(hi);
  w.parked = true;
  std::uintptr_t c = reinterpret_cast<std::uintptr_t>(ctx);
  if (c <= w.lo || c + kParkedCfa > w.hi) return 0;  // not on its stack
  gort_unwind_parked(ctx, walkFromTrampoline, &w);
  return w.n;
#else
  (void)ctx, (void)lo, (void)hi, (void)pcs, (void)max;
  return -1;
#endif
}

int tracebackSelf(const void* lo, const void* hi, std::uintptr_t* pcs,
                  int max) {
#if !defined(GORT_HAVE_UNWIND_PARKED)
  // Where the bottom of a goroutine stack has not been checked (the stop at
  // the context's bottom frame above), do not walk it either.
  (void)lo, (void)hi, (void)pcs, (void)max;
  return -1;
#endif
  if (max <= 0) return 0;
  Walk w{pcs, max};
  w.lo = reinterpret_cast<std::uintptr_t>(lo);
  w.hi = reinterpret_cast<std::uintptr_t>(hi);
  w.skip = 1;  // this function
  _Unwind_Backtrace(walkFrame, &w);
  return w.n;
}

// The walk cache. A trace walks the same few stacks again and again (a
// goroutine parks at the same call, under the same callers, at the same
// depth), and a DWARF walk costs microseconds. A walk records the address
// each return address was read from (its slot: where the call pushed it). A
// later walk that starts at the same slot, all of whose recorded slots still
// hold the same return addresses, is the same walk: each frame's CFA follows
// from its pc and the frame below (a frame sized by alloca aside, whose
// different size would have to leave every slot above it unchanged), so it is
// answered with one load and compare per frame. Only walks bounded by a
// goroutine stack [lo, hi) are cached, so every load is inside it.

int tracebackParkedCached(void* ctx, const void* lo, const void* hi,
                          std::uintptr_t* pcs, int max, std::uint64_t** tag) {
  if (tag != nullptr) *tag = nullptr;
#if defined(GORT_HAVE_UNWIND_PARKED)
  std::uintptr_t l = reinterpret_cast<std::uintptr_t>(lo);
  std::uintptr_t h = reinterpret_cast<std::uintptr_t>(hi);
  std::uintptr_t c = reinterpret_cast<std::uintptr_t>(ctx);
  if (ctx == nullptr || max <= 0 || max > walkCache::kMax || h == 0) {
    return tracebackParked(ctx, lo, hi, pcs, max);
  }
  if (c <= l || c + kParkedCfa > h) return 0;  // not on its stack
  // The parked frame's return address is saved just below kParkedCfa.
  std::uintptr_t key = c + kParkedCfa - sizeof(std::uintptr_t);
  walkCache* cache = threadWalkCache();
  int n = cacheLookup(cache, key, l, h, pcs, max, tag);
  if (n >= 0) return n;
  std::uintptr_t slots[walkCache::kMax];
  Walk w{pcs, max};
  w.lo = l;
  w.hi = h;
  w.parked = true;
  w.slots = slots;
  gort_unwind_parked(ctx, walkFromTrampoline, &w);
  cacheStore(cache, key, w, tag);
  return w.n;
#else
  return tracebackParked(ctx, lo, hi, pcs, max);
#endif
}

int tracebackSelfCached(const void* lo, const void* hi, std::uintptr_t* pcs,
                        int max, std::uint64_t** tag) {
  if (tag != nullptr) *tag = nullptr;
#if defined(GORT_HAVE_UNWIND_PARKED)
  std::uintptr_t l = reinterpret_cast<std::uintptr_t>(lo);
  std::uintptr_t h = reinterpret_cast<std::uintptr_t>(hi);
  if (max <= 0 || max > walkCache::kMax || h == 0) {
    return tracebackSelf(lo, hi, pcs, max);
  }
  // This function's own return address: its frame pointer's slot above the
  // saved one (GCC keeps a frame pointer where the builtin is used).
  std::uintptr_t key =
      reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) +
      sizeof(std::uintptr_t);
  walkCache* cache = threadWalkCache();
  int n = cacheLookup(cache, key, l, h, pcs, max, tag);
  if (n >= 0) return n;
  std::uintptr_t slots[walkCache::kMax];
  Walk w{pcs, max};
  w.lo = l;
  w.hi = h;
  w.skip = 1;  // this function
  w.slots = slots;
  _Unwind_Backtrace(walkFrame, &w);
  cacheStore(cache, key, w, tag);
  return w.n;
#else
  return tracebackSelf(lo, hi, pcs, max);
#endif
}

std::int64_t tracebackCacheHits() {
#if defined(GORT_HAVE_UNWIND_PARKED)
  return tlsWalkCache ? tlsWalkCache->hits : 0;
#else
  return 0;
#endif
}

int tracebackSignal(const void* lo, const void* hi, std::uintptr_t* pcs,
                    int max) {
#if !defined(GORT_HAVE_UNWIND_PARKED)
  (void)lo, (void)hi, (void)pcs, (void)max;
  return 0;
#endif
  if (max <= 0) return 0;
  Walk w{pcs, max};
  w.lo = reinterpret_cast<std::uintptr_t>(lo);
  w.hi = reinterpret_cast<std::uintptr_t>(hi);
  w.signal = true;
  _Unwind_Backtrace(walkFrame, &w);
  return w.n;
}

namespace {

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (d == nullptr) return name;
  std::string s(d);
  std::free(d);
  return s;
}

std::mutex symMu;  // libdw's Dwfl handle and the cache are not thread-safe

#if defined(GORT_HAVE_LIBDW)
Dwfl* session() {
  static Dwfl* dwfl = nullptr;
  static char* debuginfoPath = nullptr;
  static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf,
                                           dwfl_standard_find_debuginfo,
                                           nullptr, &debuginfoPath};
  if (dwfl == nullptr) {
    dwfl = dwfl_begin(&callbacks);
    if (dwfl == nullptr) return nullptr;
  }
  // Re-read the mappings each time: libraries may have been loaded since.
  dwfl_report_begin(dwfl);
  dwfl_linux_proc_report(dwfl, getpid());
  dwfl_report_end(dwfl, nullptr, nullptr);
  return dwfl;
}
#endif

}  // namespace

#if defined(GORT_HAVE_LIBDW)
// dieName: a subprogram's name, mangled if it has a linkage name, following
// DW_AT_abstract_origin and DW_AT_specification.
const char* dieName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    if (dwarf_attr_integrate(die, at, &attr) != nullptr) {
      if (const char* s = dwarf_formstring(&attr)) return s;
    }
  }
  return nullptr;
}

// concreteChain appends to chain the subprogram and inlined-call DIEs
// whose code holds pc, outermost first (dwarf_getscopes would continue
// through an inlined function's abstract definition instead).
void concreteChain(Dwarf_Die* parent, Dwarf_Addr pc, Dwarf_Die* chain, int* n,
                   int max) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
        concreteChain(&child, pc, chain, n, max);
        break;
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine:
      case DW_TAG_lexical_block:
        if (dwarf_haspc(&child, pc) <= 0) break;
        if (dwarf_tag(&child) != DW_TAG_lexical_block && *n < max) {
          chain[(*n)++] = child;
        }
        concreteChain(&child, pc, chain, n, max);
        return;  // only one sibling holds pc
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// expandInlined splits the frame at address `call` into the functions
// inlined there, innermost first; frame i > 0 is at the call site of frame
// i - 1. The outermost frame is named by the caller (its symbol).
int expandInlined(Dwfl_Module* mod, Dwarf_Addr call, Symbol* out, int max) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(mod, call, &bias);
  if (cu == nullptr) return 0;
  constexpr int kMaxChain = 32;
  Dwarf_Die chain[kMaxChain];
  int nchain = 0;
  concreteChain(cu, call - bias, chain, &nchain, kMaxChain);
  Dwarf_Files* files = nullptr;
  std::size_t nfiles = 0;
  dwarf_getsrcfiles(cu, &files, &nfiles);
  int n = 0;
  for (int i = nchain - 1; i >= 0 && n < max; i--) {
    const char* name = dieName(&chain[i]);
    out[n].function = name != nullptr ? demangle(name) : std::string("?");
    n++;
    if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine) break;
    Dwarf_Attribute attr;
    Dwarf_Word file = 0, line = 0;
    if (n < max && files != nullptr &&
        dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &attr), &file) ==
            0 &&
        dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &attr), &line) ==
            0) {
      if (const char* f = dwarf_filesrc(files, file, nullptr, nullptr)) {
        out[n].file = f;
        out[n].line = static_cast<int>(line);
      }
    }
  }
  return n;
}
#endif

namespace {
int symbolize1(std::uintptr_t pc, Symbol* out, int max);
}  // namespace

// symbolize caches each address's frames: dumps repeat the same few return
// addresses, and reading DWARF is the slow part of a dump.
int symbolize(std::uintptr_t pc, Symbol* out, int max) {
  if (max <= 0) return 0;
  constexpr int kMax = 16;
  static auto* cache =
      new std::unordered_map<std::uintptr_t, std::vector<Symbol>>;
  std::lock_guard<std::mutex> l(symMu);
  auto it = cache->find(pc);
  if (it == cache->end()) {
    // libdw parses line tables with large arrays on the stack (hundreds of
    // KiB): more than a goroutine's or an M's stack holds. Miss on a thread
    // of its own, with room.
    struct Job {
      std::uintptr_t pc;
      Symbol syms[kMax];
      int n = 0;
    } job;
    job.pc = pc;
    auto run = [](void* arg) -> void* {
      Job* j = static_cast<Job*>(arg);
      j->n = symbolize1(j->pc, j->syms, kMax);
      return nullptr;
    };
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 16 << 20);
    pthread_t t;
    if (pthread_create(&t, &attr, run, &job) == 0) {
      pthread_join(t, nullptr);
    }
    pthread_attr_destroy(&attr);
    it = cache->emplace(pc, std::vector<Symbol>(job.syms, job.syms + job.n))
             .first;
  }
  int n = 0;
  for (const Symbol& s : it->second) {
    if (n == max) break;
    out[n++] = s;
  }
  return n;
}

namespace {
int symbolize1(std::uintptr_t pc, Symbol* out, int max) {
  std::uintptr_t call = pc - 1;  // inside the call instruction
#if defined(GORT_HAVE_LIBDW)
  static std::int64_t lastReport = 0;
  static Dwfl* dwfl = nullptr;
  std::int64_t now = nanotime();
  if (dwfl == nullptr || now - lastReport > 1'000'000'000) {
    dwfl = session();
    lastReport = now;
  }
  if (dwfl != nullptr) {
    if (Dwfl_Module* mod = dwfl_addrmodule(dwfl, call)) {
      const char* modname = dwfl_module_info(
          mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
      int n = expandInlined(mod, call, out, max);
      GElf_Off off = 0;
      GElf_Sym sym;
      const char* name = dwfl_module_addrinfo(mod, call, &off, &sym, nullptr,
                                              nullptr, nullptr);
      if (n == 0) {
        if (name == nullptr) return 0;
        n = 1;
      }
      // The real function's symbol is fully qualified; DWARF names may not be.
      if (name != nullptr) out[n - 1].function = demangle(name);
      // The innermost frame's line is the line table's; the outermost
      // (the real function) carries the module and offset.
      if (Dwfl_Line* line = dwfl_module_getsrc(mod, call)) {
        int lineno = 0;
        const char* file =
            dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
        if (file != nullptr) {
          out[0].file = file;
          out[0].line = lineno;
        }
      }
      if (modname != nullptr) out[n - 1].module = modname;
      if (name != nullptr) out[n - 1].offset = off + 1;
      return n;
    }
  }
#endif
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(call), &info) == 0) return 0;
  if (info.dli_fname != nullptr) out[0].module = info.dli_fname;
  if (info.dli_sname == nullptr) return 0;
  out[0].function = demangle(info.dli_sname);
  out[0].offset = pc - reinterpret_cast<std::uintptr_t>(info.dli_saddr);
  return 1;
}
}  // namespace

namespace {
void (*quitHook)() = nullptr;

void quitHandler(int) {
  int saved = errno;
  if (quitHook != nullptr) quitHook();
  errno = saved;
}
}  // namespace

bool installQuitHandler(void (*onQuit)()) {
  quitHook = onQuit;
  struct sigaction sa = {};
  sa.sa_handler = quitHandler;
  sa.sa_flags = SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGQUIT, &sa, nullptr) == 0;
}

}  // namespace gort::os
