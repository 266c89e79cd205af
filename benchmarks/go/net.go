package main

// The Go twins of benchmarks/net_loops.h: TCP over loopback and
// ChanToNetpollPing, whose eventfd is opened non-blocking through
// os.NewFile, so that Go reads it through its network poller.

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

func mustNet(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func echoServer(c net.Conn) {
	var b [1]byte
	for {
		if _, err := io.ReadFull(c, b[:]); err != nil {
			c.Close()
			return
		}
		if _, err := c.Write(b[:]); err != nil {
			fail(err.Error())
		}
	}
}

// tcpPingPong: one connection, one byte each way, n times.
func tcpPingPong(n int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustNet(err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		mustNet(err)
		echoServer(c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	mustNet(err)
	defer c.Close()
	roundTrips(c, n, "TCPPingPong")
}

// roundTrips: n one-byte round trips on c, each echoed byte checked (bench
// names the benchmark in the failure).
func roundTrips(c net.Conn, n int64, bench string) {
	var b, r [1]byte
	for i := int64(0); i < n; i++ {
		b[0] = byte(i)
		_, err := c.Write(b[:])
		mustNet(err)
		_, err = io.ReadFull(c, r[:])
		mustNet(err)
		if r[0] != b[0] {
			fail(bench + ": wrong byte echoed")
		}
	}
}

// tcpPingPong100: 100 connections at once, n round trips in all.
func tcpPingPong100(n int64) {
	const conns = 100
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustNet(err)
	defer ln.Close()
	accepted := make(chan bool, 1)
	go func() {
		for i := 0; i < conns; i++ {
			c, err := ln.Accept()
			mustNet(err)
			go echoServer(c)
		}
		accepted <- true
	}()
	var wg sync.WaitGroup
	wg.Add(conns)
	for k := int64(0); k < conns; k++ {
		mine := n / conns
		if k < n%conns {
			mine++
		}
		go func(mine int64) {
			defer wg.Done()
			c, err := net.Dial("tcp", ln.Addr().String())
			mustNet(err)
			defer c.Close()
			roundTrips(c, mine, "TCPPingPong100")
		}(mine)
	}
	wg.Wait()
	<-accepted // the listener stays open until all are accepted
}

// tcpStream1MiB: n blocks of 1 MiB one way, acknowledged at the end.
func tcpStream1MiB(n int64) {
	const block = 1 << 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustNet(err)
	defer ln.Close()
	go func() {
		s, err := ln.Accept()
		mustNet(err)
		defer s.Close()
		buf := make([]byte, 256<<10)
		var total int64
		for {
			k, err := s.Read(buf)
			total += int64(k)
			if err == io.EOF {
				break
			}
			mustNet(err)
		}
		if total != n*block {
			fail("TCPStream1MiB: wrong byte count")
		}
		var ack [8]byte
		for i := 0; i < 8; i++ {
			ack[i] = byte(total >> (8 * i))
		}
		_, err = s.Write(ack[:])
		mustNet(err)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	mustNet(err)
	defer c.Close()
	buf := make([]byte, block)
	for i := range buf {
		buf[i] = 'x'
	}
	for i := int64(0); i < n; i++ {
		_, err := c.Write(buf)
		mustNet(err)
	}
	mustNet(c.(*net.TCPConn).CloseWrite())
	var ack [8]byte
	_, err = io.ReadFull(c, ack[:])
	mustNet(err)
	var got int64
	for i := 0; i < 8; i++ {
		got |= int64(ack[i]) << (8 * i)
	}
	if got != n*block {
		fail("TCPStream1MiB: wrong acknowledgement")
	}
}

// chanToNetpollPing: chanToSyscallPing with the eventfd read through Go's
// poller (os.NewFile on a non-blocking descriptor).
func chanToNetpollPing(n int64) {
	fd, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0,
		syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if errno != 0 {
		fail("eventfd failed: " + errno.Error())
	}
	f := os.NewFile(fd, "eventfd")
	defer f.Close()
	ch := make(chan int)
	go func() {
		var v [8]byte
		for i := int64(0); i < n; i++ {
			if _, err := f.Read(v[:]); err != nil {
				fail(err.Error())
			}
			if v[0] != 1 {
				fail("ChanToNetpollPing: event counter is not 1")
			}
			ch <- 1
		}
	}()
	one := [8]byte{1}
	for i := int64(0); i < n; i++ {
		if _, err := f.Write(one[:]); err != nil {
			fail(err.Error())
		}
		if <-ch != 1 {
			fail("ChanToNetpollPing: ch delivered a value != 1")
		}
	}
}
