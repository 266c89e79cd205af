// tests/go_mapping/runtime/cites.h: citations for go_mapping.selftest, which
// runs tools/check_go_mapping.py on this directory and expects exactly the
// two names below that Go 1.19 lacks and the one wrong line to be reported
// (and the rest not).
//
// schedule mirrors Go's schedule. (found: a function)
// Go's waitq.dequeue (found: a method), Go's _G* constants (found: prefix),
// Go's goexit (found: assembly), Go's sync/cond.go (found: a file).
// Go 1.25's cgroup.FindCPU (not looked up: a later release, said so).
// notAGoFunction mirrors Go's notAGoFunction (reported).
// Go's findrunnable (reported: Go 1.19 calls it findRunnable).
// Go's handoffp (proc.go:2380) (found: the line is inside handoffp).
// Go's Mutex.Lock (sync/mutex.go:83) (found: a method, in sync/).
// Go's wakep (proc.go:2380) (reported: that line is handoffp's).
