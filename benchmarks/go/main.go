// Command gortbench-go is the Go side of gort-compare: the benchmarks of
// benchmarks/ping_loops.h and benchmarks/sched_loops.h written in Go, so
// that gort and Go 1.19 can be measured side by side, in one run, on the
// same machine.
//
// It runs one named benchmark per process and reports on stdout in the line
// protocol gort-compare's children speak:
//
//	step <what>                             before each step that could hang
//	result n=N ns=T cpu-ns=C ns-per-op=X    at the end: the last timed run
//
// where T is the wall time and C the process's CPU time of that run. The
// Park benchmarks add rss-before=B rss-parked=P (resident bytes before
// starting the goroutines and with all of them parked); their N is the
// number of goroutines and T the time to start them all.
//
// Like go test -bench, N starts at 1 and grows (testing's predictN) until
// one timed run lasts at least -benchtime, or is fixed with -benchtime=Nx;
// runtime.GC runs before each timed run, as in package testing. GOMAXPROCS
// comes from the environment or -procs.
//
// Usage:
//
//	gortbench-go -bench=ChanToChanPing [-benchtime=1s|100x] [-procs=1] [-trace=file]
//	gortbench-go -list
//	gortbench-go -serve=http|resp [-addr=host:port] ...   (serve.go)
//	gortbench-go -version
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A benchmark is a named loop run n times, or a Park measurement of a fixed
// number of goroutines.
type benchmark struct {
	name       string
	loop       func(n int64)
	goroutines int64 // Park benchmarks: how many goroutines to park.
	// Sized loops (SpawnBurst, Skynet): the loop and its default size,
	// which -goroutines overrides.
	sized func(n, size int64)
	size  int64
}

var benchmarks = []benchmark{
	{name: "ChanToSyscallPing", loop: chanToSyscallPing},
	{name: "SyscallToSyscallPing", loop: syscallToSyscallPing},
	{name: "ChanToChanPing", loop: chanToChanPing},
	{name: "Gosched", loop: gosched},
	{name: "Spawn", loop: spawn},
	{name: "ChanBuffered", loop: chanBuffered},
	{name: "Select2", loop: select2},
	{name: "ChanContended", loop: chanContended},
	{name: "MutexUncontended", loop: mutexUncontended},
	{name: "FanOut", loop: fanOut},
	{name: "SpawnBurst", sized: spawnBurst, size: spawnBurstDefault},
	{name: "ParkBurst", sized: parkBurst, size: parkBurstDefault},
	{name: "Skynet", sized: skynet, size: skynetLeavesDefault},
	{name: "TCPPingPong", loop: tcpPingPong},
	{name: "TCPPingPong100", loop: tcpPingPong100},
	{name: "TCPStream1MiB", loop: tcpStream1MiB},
	{name: "ChanToNetpollPing", loop: chanToNetpollPing},
	{name: "Park100k", goroutines: 100000},
	{name: "Park1M", goroutines: 1000000},
}

// maxN is Go's cap on b.N.
const maxN = 1000000000

var start = time.Now()

// nanotime is a monotonic clock in nanoseconds.
func nanotime() int64 {
	return int64(time.Since(start))
}

// cpuNanos is the process's user plus system CPU time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		failErrno("getrusage", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// residentBytes is the process's resident set size, from /proc/self/statm.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		failErrno("read /proc/self/statm", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		fail("unexpected /proc/self/statm: " + string(data))
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		fail("unexpected /proc/self/statm: " + string(data))
	}
	return pages * int64(os.Getpagesize())
}

// emit writes one protocol line with a single write(2).
func emit(format string, args ...any) {
	os.Stdout.WriteString(fmt.Sprintf(format, args...) + "\n")
}

func fail(what string) {
	fmt.Fprintf(os.Stderr, "gortbench-go: %s\n", what)
	os.Exit(1)
}

func failErrno(what string, err error) {
	fail(what + ": " + err.Error())
}

// predictN is package testing's predictN: aim for goalns with 20% headroom,
// grow at most 100x and at least by one.
func predictN(goalns, prevIters, prevns, last int64) int64 {
	if prevns == 0 {
		prevns = 1
	}
	n := goalns * prevIters / prevns
	n += n / 5
	if n > 100*last {
		n = 100 * last
	}
	if n < last+1 {
		n = last + 1
	}
	if n > maxN {
		n = maxN
	}
	return n
}

// parseBenchtime accepts "1s"-style durations and "100x" counts.
func parseBenchtime(s string) (d time.Duration, n int64, err error) {
	if strings.HasSuffix(s, "x") {
		n, err = strconv.ParseInt(strings.TrimSuffix(s, "x"), 10, 64)
		if err != nil || n <= 0 || n > maxN {
			return 0, 0, fmt.Errorf("bad -benchtime %q", s)
		}
		return 0, n, nil
	}
	d, err = time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, 0, fmt.Errorf("bad -benchtime %q", s)
	}
	return d, 0, nil
}

func main() {
	name := flag.String("bench", "", "the benchmark to run (see -list)")
	benchtime := flag.String("benchtime", "1s", "target time of the last timed run (e.g. 500ms), or a fixed count such as 100x")
	procs := flag.Int("procs", 0, "GOMAXPROCS (0: leave as set by $GOMAXPROCS)")
	goroutines := flag.Int64("goroutines", 0, "Park: goroutines to park; SpawnBurst, ParkBurst: the burst; Skynet: the leaves (0: the default)")
	list := flag.Bool("list", false, "list the benchmarks and exit")
	version := flag.Bool("version", false, "print the Go version and exit")
	traceOut := flag.String("trace", "", "write an execution trace of the timed runs to this file (runtime/trace), as GORT_TRACE does for gort-compare")
	flag.Parse()

	if *version {
		fmt.Println(runtime.Version())
		return
	}
	if *serve != "" {
		os.Exit(serveMain(*serve))
	}
	if *list {
		for _, b := range benchmarks {
			fmt.Println("Benchmark" + b.name)
		}
		return
	}
	var bench *benchmark
	for i := range benchmarks {
		if "Benchmark"+benchmarks[i].name == *name || benchmarks[i].name == *name {
			bench = &benchmarks[i]
		}
	}
	if bench == nil {
		fmt.Fprintf(os.Stderr, "gortbench-go: unknown benchmark %q (see -list)\n", *name)
		os.Exit(2)
	}
	goal, fixedN, err := parseBenchtime(*benchtime)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gortbench-go: %v\n", err)
		os.Exit(2)
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}

	if bench.sized != nil {
		size := bench.size
		if *goroutines > 0 {
			size = *goroutines
		}
		bench.loop = func(n int64) { bench.sized(n, size) }
	}
	if bench.loop == nil {
		count := bench.goroutines
		if *goroutines > 0 {
			count = *goroutines
		}
		runtime.GC()
		emit("step parking %d goroutines", count)
		cpu := cpuNanos()
		r := parkGoroutines(count)
		cpu = cpuNanos() - cpu
		emit("result n=%d ns=%d cpu-ns=%d rss-before=%d rss-parked=%d ns-per-op=%.4g",
			count, r.startNs, cpu, r.rssBefore, r.rssParked, float64(r.startNs)/float64(count))
		return
	}

	if *traceOut != "" {
		f, err := os.Create(*traceOut)
		if err != nil {
			failErrno("create "+*traceOut, err)
		}
		if err := trace.Start(f); err != nil {
			failErrno("trace.Start", err)
		}
		defer func() {
			trace.Stop()
			if err := f.Close(); err != nil {
				failErrno("close "+*traceOut, err)
			}
		}()
	}
	var n, ns, cpu int64
	timedRun := func(iters int64) {
		runtime.GC()
		emit("step timed loop with N=%d", iters)
		c0 := cpuNanos()
		t0 := nanotime()
		bench.loop(iters)
		ns = nanotime() - t0
		cpu = cpuNanos() - c0
		n = iters
	}
	if fixedN > 0 {
		timedRun(fixedN)
	} else {
		timedRun(1)
		for ns < int64(goal) && n < maxN {
			timedRun(predictN(int64(goal), n, ns, n))
		}
	}
	emit("result n=%d ns=%d cpu-ns=%d ns-per-op=%.4g", n, ns, cpu, float64(ns)/float64(n))
}
