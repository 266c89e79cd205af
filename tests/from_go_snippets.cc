// tests/from_go_snippets.cc: the C++ side of every example in
// docs/from-go.md, compiled and run by from_go_test. Each example sits
// between a "// snippet: NAME" line and a "// end snippet" line;
// from_go_test checks that the document quotes each one verbatim (after
// removing the common indentation), so the two cannot drift apart.
//
// Snippets inside `#if GORT_FROM_GO_PENDING` (LockOSThread, Stack, Mutex's
// std names) are compiled and run only when the build defines the macro to
// 1, which tests/CMakeLists.txt does; their text is checked either way.
#include "from_go_snippets.h"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "gort/gort.h"

#ifndef GORT_FROM_GO_PENDING
#define GORT_FROM_GO_PENDING 0
#endif

namespace from_go {

using namespace std::chrono_literals;

namespace {
void worker(int id, gort::Chan<int> jobs, gort::Chan<int> results) {
  while (auto j = jobs.RecvOk()) results.Send(*j * 2);
}
int expensive() { return 42; }
void use(int) {}
}  // namespace

// go, a channel, close and for range.
int GoAndChannels() {
  int sum = 0;
  // snippet: run
  gort::Run([&] {
    // the body of Go's main: goroutine 1
    sum = Pipeline();
  });
  // end snippet
  return sum;
}

int Pipeline() {
  // snippet: make-chan
  gort::Chan<int> jobs = gort::MakeChan<int>(100);   // make(chan int, 100)
  gort::Chan<int> results = gort::MakeChan<int>(0);  // make(chan int)
  // end snippet
  // snippet: go
  for (int w = 1; w <= 3; w++) {
    gort::Go([=] { worker(w, jobs, results); });  // go worker(w, jobs, results)
  }
  // end snippet
  // snippet: send-close
  for (int j = 1; j <= 5; j++) jobs.Send(j);  // jobs <- j
  jobs.Close();                               // close(jobs)
  // end snippet
  int sum = 0;
  // snippet: recv
  for (int i = 0; i < 5; i++) sum += results.Recv();  // sum += <-results
  // end snippet
  auto ch = gort::MakeChan<int>(3);
  ch.Send(1);
  ch.Send(2);
  ch.Close();
  // snippet: range
  for (int v : ch) {  // for v := range ch {
    use(v);
  }
  // end snippet
  // snippet: recv-ok
  std::optional<int> v = ch.RecvOk();  // v, ok := <-ch
  bool ok = v.has_value();
  // end snippet
  return ok ? -1 : sum;
}

// select, with a default case and with a timeout.
int SelectExamples() {
  auto in = gort::MakeChan<int>(1);
  auto out = gort::MakeChan<int>(0);  // nobody receives: only in is ready
  auto quit = gort::MakeChan<bool>(0);
  in.Send(7);
  int x = 1, got = 0;
  // snippet: select
  int v = 0;
  switch (gort::Select(gort::RecvCase(in, &v),   // case v := <-in:
                       gort::SendCase(out, x),   // case out <- x:
                       gort::RecvCase(quit))) {  // case <-quit:
    case 0:
      got = v;
      break;
    case 1:
      break;
    case 2:
      return -1;
  }
  // end snippet
  // snippet: select-default
  if (gort::Select(gort::RecvCase(in, &v), gort::DefaultCase()) == 1) {
    // default: nothing was ready
  }
  // end snippet
  // snippet: select-timeout
  if (gort::Select(gort::RecvCase(in, &v), gort::RecvCase(gort::After(10ms))) ==
      1) {
    // case <-time.After(10 * time.Millisecond): timed out
  }
  // end snippet
  // snippet: select-handlers
  for (;;) {  // for { select { ... } }
    int i = gort::Select(
        gort::OnRecv(in, [&](int v, bool ok) { got = ok ? v : -1; }),
        gort::OnSend(out, x, [] {}),  // case out <- x:
        gort::OnRecv(quit, [] {}),    // case <-quit:
        gort::OnDefault([] {}));      // default:
    if (i >= 2) break;                // leaves the loop
  }
  // end snippet
  return got;
}

// sync: WaitGroup, Mutex, RWMutex, Once, Cond.
int SyncExamples() {
  int counter = 0;
  // snippet: waitgroup
  gort::WaitGroup wg;
  for (int i = 0; i < 10; i++) {
    wg.Go([] { gort::Sleep(1ms); });  // Add(1); go with Done deferred
  }
  wg.Wait();
  // end snippet
  // snippet: defer
  wg.Add(1);
  gort::Go([&] {
    gort::Defer done([&] { wg.Done(); });  // defer wg.Done()
    gort::Sleep(1ms);
  });
  wg.Wait();
  // end snippet
  gort::Mutex mu;
  // snippet: mutex
  mu.Lock();
  counter++;  // what Go guards with `mu.Lock(); defer mu.Unlock()`
  mu.Unlock();
  // end snippet
#if GORT_FROM_GO_PENDING
  // snippet: mutex-defer
  {
    std::lock_guard<gort::Mutex> lock(mu);  // mu.Lock(); defer mu.Unlock()
    counter++;
  }
  // end snippet
#else
  counter++;
#endif
  gort::RWMutex rw;
  // snippet: rwmutex
  {
    std::shared_lock<gort::RWMutex> lock(rw);  // rw.RLock(); defer rw.RUnlock()
    use(counter);
  }
  {
    std::unique_lock<gort::RWMutex> lock(rw);  // rw.Lock(); defer rw.Unlock()
    counter++;
  }
  // end snippet
  int config = 0;
  // snippet: once
  gort::Once once;                         // var once sync.Once
  once.Do([&] { config = expensive(); });  // once.Do(func() { ... })
  // end snippet
  bool ready = false;
  gort::Cond cond(&mu);
  gort::Go([&] {
    mu.Lock();
    ready = true;
    cond.Broadcast();
    mu.Unlock();
  });
  // snippet: cond
  mu.Lock();
  while (!ready) cond.Wait();  // for !ready { cond.Wait() }
  mu.Unlock();
  // end snippet
  return counter + (config == 42 ? 100 : 0);
}

// time: Sleep, NewTimer, AfterFunc, NewTicker.
int TimeExamples() {
  int ticks = 0;
  // snippet: sleep
  gort::Sleep(10ms);  // time.Sleep(10 * time.Millisecond)
  // end snippet
  // snippet: timer
  gort::Timer t =
      gort::NewTimer(50ms);  // t := time.NewTimer(50 * time.Millisecond)
  if (!t.Stop()) {           // if !t.Stop() {
    t.C().Recv();            //   <-t.C }
  }
  t.Reset(1ms);                       // t.Reset(time.Millisecond)
  std::int64_t fired = t.C().Recv();  // a gort::Nanotime() reading
  // end snippet
  (void)fired;
  auto done = gort::MakeChan<bool>(0);
  // snippet: afterfunc
  gort::AfterFunc(20ms, [done] { done.Close(); });  // time.AfterFunc(d, f)
  // end snippet
  // snippet: ticker
  gort::Ticker ticker = gort::NewTicker(5ms);  // ticker := time.NewTicker(d)
  for (bool running = true; running;) {        // defer ticker.Stop(): below
    switch (gort::Select(gort::RecvCase(ticker.C()),  // case <-ticker.C:
                         gort::RecvCase(done))) {     // case <-done:
      case 0:
        ticks++;
        break;
      case 1:
        running = false;
        break;
    }
  }
  ticker.Stop();
  // end snippet
  return ticks;
}

void slowOperation(gort::Context ctx, gort::Chan<int> out) {
  if (gort::Select(gort::RecvCase(gort::After(1h)),
                   gort::RecvCase(ctx.Done())) == 0) {
    out.Send(1);
  }
}

// context: WithTimeout, WithCancel, Done in select, Err.
gort::ContextError ContextExamples() {
  // snippet: with-timeout
  auto [ctx, cancel] = gort::WithTimeout(gort::Background(), 10ms);
  // ctx, cancel := context.WithTimeout(context.Background(),
  // 10*time.Millisecond)
  auto result = gort::MakeChan<int>(1);
  gort::Go([ctx = ctx, result] { slowOperation(ctx, result); });
  int r = 0;
  switch (gort::Select(gort::RecvCase(result, &r),     // case r := <-result:
                       gort::RecvCase(ctx.Done()))) {  // case <-ctx.Done():
    case 1:
      if (ctx.Err() == gort::ContextError::kDeadlineExceeded) {
        // ctx.Err() == context.DeadlineExceeded
      }
      break;
  }
  cancel();  // Go: defer cancel()
  // end snippet
  gort::ContextError err = ctx.Err();
  // snippet: with-cancel
  auto [parent, stop] = gort::WithCancel(gort::Background());
  auto [child, cancelChild] = gort::WithCancel(parent);
  stop();  // cancels child too: child.Err() == gort::ContextError::kCanceled
  cancelChild();
  // end snippet
  return child.Err() == gort::ContextError::kCanceled
             ? err
             : gort::ContextError::kNone;
}

// runtime: GOMAXPROCS, NumGoroutine, Gosched, panics, syscalls.
int RuntimeExamples() {
  // snippet: runtime
  int procs = gort::GOMAXPROCS(0);  // runtime.GOMAXPROCS(0)
  int n = gort::NumGoroutine();     // runtime.NumGoroutine()
  gort::Gosched();                  // runtime.Gosched()
  // end snippet
  int recovered = 0;
  // snippet: recover
  try {
    gort::Chan<int> c = gort::MakeChan<int>(0);
    c.Close();
    c.Close();                      // panics: "close of closed channel"
  } catch (const gort::Panic& p) {  // defer func() { recover() }()
    recovered = 1;
  }
  // end snippet
  // snippet: syscall
  long r = gort::Syscall([] { return 0L; });  // a blocking call: read(2)...
  // end snippet
  return procs > 0 && n > 0 && r == 0 ? recovered : -1;
}

#if GORT_FROM_GO_PENDING
// LockOSThread and the goroutine dump.
std::string ThreadExamples() {
  // snippet: lock-os-thread
  gort::LockOSThread();  // runtime.LockOSThread()
  // ... thread-affine work: OpenGL, a GUI toolkit, thread-local state
  gort::UnlockOSThread();  // runtime.UnlockOSThread()
  // end snippet
  // snippet: stack
  std::string dump = gort::Stack(true);  // buf := make([]byte, 1<<20)
                                         // runtime.Stack(buf, true)
  // end snippet
  return dump;
}
#endif

}  // namespace from_go
