// Command go_sleep_probe is the Go side of gort-usleep-probe's Sleep(d)
// section: the median of time.Sleep(d) for d = 1000, 100, 10, 1 µs at
// GOMAXPROCS 1, printed in the probe's format. Go's timers always wait in
// its netpoller, which rounds a wait up to whole milliseconds on Linux.
//
//	cd tools/go_sleep_probe && GOMAXPROCS=1 go run . [-samples=1000]
package main

import (
	"flag"
	"fmt"
	"sort"
	"time"
)

func main() {
	samples := flag.Int("samples", 1000, "calls per delay (a fifth for 1000 µs)")
	flag.Parse()
	for _, us := range []int{1000, 100, 10, 1} {
		n := *samples
		if us >= 1000 {
			n /= 5
		}
		d := time.Duration(us) * time.Microsecond
		slept := make([]time.Duration, 0, n)
		for i := 0; i < n; i++ {
			t0 := time.Now()
			time.Sleep(d)
			slept = append(slept, time.Since(t0))
		}
		sort.Slice(slept, func(i, j int) bool { return slept[i] < slept[j] })
		fmt.Printf("sleep (go1.19): delay is %d us - slept for %.0f us\n", us,
			float64(slept[len(slept)/2].Nanoseconds())/1000)
	}
}
