package main

import (
	"syscall"
	"unsafe"
)

// pingEvent is an auto-reset event on an eventfd, standing in for the
// Windows event of Go's ping benchmarks (runtime/syscall_windows_test.go),
// exactly as gort::bench::PingEvent in benchmarks/ping_loops.h: "set" adds 1
// to the counter with write(2), "wait" reads the 8-byte counter with
// read(2), which blocks while it is zero and resets it to zero.
//
// Both go through syscall.Syscall, which brackets the call with the
// runtime's entersyscall and exitsyscall, as gort::Syscall does: while a
// goroutine blocks in the read its P stays in the syscall state until
// sysmon retakes it.
type pingEvent struct {
	fd uintptr
}

func newPingEvent() *pingEvent {
	fd, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC, 0)
	if errno != 0 {
		failErrno("eventfd", errno)
	}
	return &pingEvent{fd: fd}
}

func (e *pingEvent) close() {
	syscall.Close(int(e.fd))
}

// set signals the event (Go's SetEvent), as a syscall.
func (e *pingEvent) set() {
	one := uint64(1)
	var r uintptr
	var errno syscall.Errno
	for {
		r, _, errno = syscall.Syscall(syscall.SYS_WRITE, e.fd, uintptr(unsafe.Pointer(&one)), 8)
		if errno != syscall.EINTR {
			break
		}
	}
	if errno != 0 {
		failErrno("eventfd write", errno)
	}
	if r != 8 {
		failErrno("eventfd write", syscall.EIO)
	}
}

// wait blocks until the event is signalled, resets it and returns the
// counter it read (Go's WaitForSingleObject with INFINITE), as a syscall.
func (e *pingEvent) wait() uint64 {
	var value uint64
	var r uintptr
	var errno syscall.Errno
	for {
		r, _, errno = syscall.Syscall(syscall.SYS_READ, e.fd, uintptr(unsafe.Pointer(&value)), 8)
		if errno != syscall.EINTR {
			break
		}
	}
	if errno != 0 {
		failErrno("eventfd read", errno)
	}
	if r != 8 {
		failErrno("eventfd read", syscall.EIO)
	}
	return value
}
