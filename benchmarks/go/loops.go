package main

import (
	"runtime"
	"sync"
)

// The benchmark loops. Each runs its benchmark n times and mirrors, line
// for line, its C++ twin: the ping family in benchmarks/ping_loops.h (ported
// from Go's runtime/syscall_windows_test.go), the rest in
// benchmarks/sched_loops.h. Every value that crosses a channel or an event
// is checked; a broken protocol is a fatal error.

// chanToSyscallPing is Go's BenchmarkChanToSyscallPing: the main goroutine
// sets an event and waits on a channel; a second goroutine waits for the
// event in a syscall and answers on the channel.
func chanToSyscallPing(n int64) {
	ch := make(chan int)
	event := newPingEvent()
	defer event.close()
	go func() {
		for i := int64(0); i < n; i++ {
			if event.wait() != 1 {
				fail("ChanToSyscallPing: event counter is not 1")
			}
			ch <- 1
		}
	}()
	for i := int64(0); i < n; i++ {
		event.set()
		if <-ch != 1 {
			fail("ChanToSyscallPing: ch delivered a value != 1")
		}
	}
}

// syscallToSyscallPing is Go's BenchmarkSyscallToSyscallPing: both
// goroutines block in syscalls.
func syscallToSyscallPing(n int64) {
	event1 := newPingEvent()
	event2 := newPingEvent()
	defer event1.close()
	defer event2.close()
	go func() {
		for i := int64(0); i < n; i++ {
			if event1.wait() != 1 {
				fail("SyscallToSyscallPing: event1 counter is not 1")
			}
			event2.set()
		}
	}()
	for i := int64(0); i < n; i++ {
		event1.set()
		if event2.wait() != 1 {
			fail("SyscallToSyscallPing: event2 counter is not 1")
		}
	}
}

// chanToChanPing is Go's BenchmarkChanToChanPing: two goroutines bounce a
// value over two unbuffered channels.
func chanToChanPing(n int64) {
	ch1 := make(chan int)
	ch2 := make(chan int)
	go func() {
		for i := int64(0); i < n; i++ {
			if <-ch1 != 1 {
				fail("ChanToChanPing: ch1 delivered a value != 1")
			}
			ch2 <- 1
		}
	}()
	for i := int64(0); i < n; i++ {
		ch1 <- 1
		if <-ch2 != 1 {
			fail("ChanToChanPing: ch2 delivered a value != 1")
		}
	}
}

// gosched: the main goroutine and a second one each call runtime.Gosched n
// times; an op is one Gosched by each.
func gosched(n int64) {
	done := make(chan int)
	go func() {
		for i := int64(0); i < n; i++ {
			runtime.Gosched()
		}
		done <- 1
	}()
	for i := int64(0); i < n; i++ {
		runtime.Gosched()
	}
	if <-done != 1 {
		fail("Gosched: done delivered a value != 1")
	}
}

// spawnChain starts a goroutine that starts the next, n deep; the last
// sends on done. Go's benchmarkCreateGoroutines' f.
func spawnChain(done *chan bool, n int64) {
	if n == 0 {
		*done <- true
		return
	}
	go spawnChain(done, n-1)
}

// spawn is Go's BenchmarkCreateGoroutinesParallel (BenchmarkCreateGoroutines
// at GOMAXPROCS 1): GOMAXPROCS chains of goroutines, each goroutine starting
// the next and exiting, n goroutines in all; an op is one goroutine
// created, run and finished.
func spawn(n int64) {
	chains := int64(runtime.GOMAXPROCS(0))
	done := make(chan bool)
	for c := int64(0); c < chains; c++ {
		length := n / chains
		if c < n%chains {
			length++
		}
		go spawnChain(&done, length)
	}
	for c := int64(0); c < chains; c++ {
		if !<-done {
			fail("Spawn: done delivered false")
		}
	}
}

// chanBufferedCap is ChanBuffered's channel capacity.
const chanBufferedCap = 128

// chanBuffered: one producer sends 0..n-1 on a channel of capacity 128, the
// main goroutine receives and checks them; an op is one value.
func chanBuffered(n int64) {
	ch := make(chan int64, chanBufferedCap)
	go func() {
		for i := int64(0); i < n; i++ {
			ch <- i
		}
	}()
	for i := int64(0); i < n; i++ {
		if <-ch != i {
			fail("ChanBuffered: values arrived out of order")
		}
	}
}

// select2 is the body of Go's BenchmarkSelectUncontended on one goroutine:
// a select over two channels of capacity 1 of which exactly one holds a
// value; the chosen case refills the other. An op is one select and one
// send.
func select2(n int64) {
	c1 := make(chan int, 1)
	c2 := make(chan int, 1)
	c1 <- 0
	for i := int64(0); i < n; i++ {
		v := -1
		select {
		case v = <-c1:
			c2 <- 0
		case v = <-c2:
			c1 <- 0
		}
		if v != 0 {
			fail("Select2: received a value != 0")
		}
	}
}

const (
	contendedProducers = 4
	contendedConsumers = 4
)

// mutexUncontended: an op is one Lock and one Unlock of a Mutex only the
// calling goroutine uses, around an increment the loop checks.
func mutexUncontended(n int64) {
	var mu sync.Mutex
	count := int64(0)
	for i := int64(0); i < n; i++ {
		mu.Lock()
		count++
		mu.Unlock()
	}
	if count != n {
		fail("MutexUncontended: lost increments")
	}
}

// chanContended: 4 producers send 0..n-1 between them over one unbuffered
// channel, 4 consumers receive a quarter each and report their sums, which
// must add up to n(n-1)/2; an op is one value.
func chanContended(n int64) {
	ch := make(chan int64)
	sums := make(chan int64, contendedConsumers)
	for p := int64(0); p < contendedProducers; p++ {
		p := p
		go func() {
			for v := p; v < n; v += contendedProducers {
				ch <- v
			}
		}()
	}
	for c := int64(0); c < contendedConsumers; c++ {
		quota := n / contendedConsumers
		if c < n%contendedConsumers {
			quota++
		}
		go func() {
			sum := int64(0)
			for i := int64(0); i < quota; i++ {
				sum += <-ch
			}
			sums <- sum
		}()
	}
	total := int64(0)
	for c := 0; c < contendedConsumers; c++ {
		total += <-sums
	}
	if total != n*(n-1)/2 {
		fail("ChanContended: the values received do not add up")
	}
}

const (
	fanOutGoroutines = 256  // Goroutines per op.
	fanOutSteps      = 4096 // LCG steps per goroutine.
)

// fanOutWork runs steps steps of a 64-bit linear congruential generator
// from seed: a chain of dependent multiply-adds that no compiler can
// shorten, so Go and C++ take the same time per step.
func fanOutWork(seed uint64, steps int) uint64 {
	x := seed
	for i := 0; i < steps; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

type fanOutState struct {
	results [fanOutGoroutines]uint64
	wg      sync.WaitGroup
}

// fanOut: an op starts 256 goroutines that each run 4096 LCG steps (a few
// microseconds of CPU) and waits for all of them. The main goroutine's P
// queues them all, so with GOMAXPROCS 2 the second P gets work only by
// stealing; time per op should halve.
func fanOut(n int64) {
	st := new(fanOutState)
	want := uint64(0)
	for i := int64(0); i < n; i++ {
		st.wg.Add(fanOutGoroutines)
		for g := 0; g < fanOutGoroutines; g++ {
			g := g
			go func() {
				st.results[g] = fanOutWork(uint64(g), fanOutSteps)
				st.wg.Done()
			}()
		}
		st.wg.Wait()
		sum := uint64(0)
		for _, r := range st.results {
			sum += r
		}
		if i == 0 {
			want = sum
		} else if sum != want {
			fail("FanOut: the results changed between ops")
		}
	}
}

// parkResult is what parkGoroutines measured.
type parkResult struct {
	rssBefore int64 // Resident bytes before starting the goroutines.
	rssParked int64 // Resident bytes with all of them parked.
	startNs   int64 // Time to start them all and see them parked.
}

type parkState struct {
	ch     chan int
	parked sync.WaitGroup
	exited sync.WaitGroup
}

// parkGoroutines starts count goroutines that each park receiving from one
// channel, measures the resident memory with all of them parked, then
// closes the channel and waits for all of them to exit.
func parkGoroutines(count int64) parkResult {
	st := &parkState{ch: make(chan int)}
	var r parkResult
	r.rssBefore = residentBytes()
	start := nanotime()
	st.parked.Add(int(count))
	st.exited.Add(int(count))
	for i := int64(0); i < count; i++ {
		go func() {
			st.parked.Done()
			<-st.ch
			st.exited.Done()
		}()
	}
	st.parked.Wait()
	r.startNs = nanotime() - start
	r.rssParked = residentBytes()
	close(st.ch)
	st.exited.Wait()
	return r
}

// spawnBurstDefault is spawnBurst's default burst.
const spawnBurstDefault = 200000

// spawnBurst: the main goroutine starts burst goroutines that each call
// WaitGroup.Done, then waits for them; with GOMAXPROCS 1 none runs before
// the wait. Repeated n times: an op is one whole burst (as gort's
// SpawnBurst, sched_loops.h).
func spawnBurst(n, burst int64) {
	var wg sync.WaitGroup
	for b := int64(0); b < n; b++ {
		wg.Add(int(burst))
		for i := int64(0); i < burst; i++ {
			go func() {
				wg.Done()
			}()
		}
		wg.Wait()
	}
}

// parkBurstDefault is parkBurst's default burst; parkBurstCap its channel's
// capacity.
const (
	parkBurstDefault = 100000
	parkBurstCap     = 1024
)

// parkBurst: the main goroutine starts burst goroutines that each send once
// on a channel of capacity 1024, then receives every value, so most of them
// park first. Repeated n times: an op is one whole burst (as gort's
// ParkBurst, sched_loops.h), so the peak RSS is always that of burst
// goroutines.
func parkBurst(n, burst int64) {
	ch := make(chan int64, parkBurstCap)
	for b := int64(0); b < n; b++ {
		for i := int64(0); i < burst; i++ {
			go func(i int64) {
				ch <- i
			}(i)
		}
		var sum int64
		for i := int64(0); i < burst; i++ {
			sum += <-ch
		}
		if sum != burst*(burst-1)/2 {
			fail("ParkBurst: a value was lost or doubled")
		}
	}
}

// skynetLeavesDefault is skynet's default number of leaves.
const skynetLeavesDefault = 1000000

// skynetNode is one node of the skynet tree (github.com/atemerev/skynet):
// a leaf sends its number, an inner node starts 10 children on a fresh
// unbuffered channel, sums their answers and sends the sum on c.
func skynetNode(c chan int64, num, size int64) {
	if size == 1 {
		c <- num
		return
	}
	const div = 10
	rc := make(chan int64)
	for i := int64(0); i < div; i++ {
		sub := num + i*(size/div)
		go skynetNode(rc, sub, size/div)
	}
	sum := int64(0)
	for i := 0; i < div; i++ {
		sum += <-rc
	}
	c <- sum
}

// skynet: n times, a tree of goroutines with leaves leaves; an op is one
// whole tree. The root's sum is checked.
func skynet(n, leaves int64) {
	for i := int64(0); i < n; i++ {
		c := make(chan int64)
		go skynetNode(c, 0, leaves)
		if <-c != leaves*(leaves-1)/2 {
			fail("Skynet: the sum of the leaves is wrong")
		}
	}
}
