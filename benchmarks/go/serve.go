package main

// The -serve mode: the Go twins of gort's example servers, for
// scripts/load-test.sh and scripts/soak.sh. Each is written on package net
// the way examples/http.cc and examples/resp.cc are written on gort::net:
// one goroutine per connection, requests parsed from a buffer and answered
// in order, one write per batch.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

var (
	serve           = flag.String("serve", "", "run a server instead of a benchmark: http or resp")
	serveAddr       = flag.String("addr", "", "-serve: the address to listen on (default 127.0.0.1:8080 or :6380)")
	readTimeoutMs   = flag.Int("read-timeout-ms", 10000, "-serve=http: time to receive each request and to write its response")
	graceMs         = flag.Int("grace-ms", 5000, "-serve=http: how long shutdown waits for busy connections")
	shutdownAfterMs = flag.Int("shutdown-after-ms", 0, "-serve=http: shut down after this long (0: on SIGINT/SIGTERM only)")
)

// serveMain runs the named server until it is shut down; its exit status.
func serveMain(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch name {
	case "http":
		if *shutdownAfterMs > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(*shutdownAfterMs)*time.Millisecond)
			defer cancel()
		}
		return serveHTTP(ctx, orDefault(*serveAddr, "127.0.0.1:8080"))
	case "resp":
		return serveRESP(ctx, orDefault(*serveAddr, "127.0.0.1:6380"))
	}
	fmt.Fprintf(os.Stderr, "gortbench-go: unknown server %q (http or resp)\n", name)
	return 2
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// acceptLoop hands each connection ln accepts to serve on a goroutine of its
// own until ln is closed; other Accept errors are reported and retried
// after a pause (net/http's Server.Serve backs off the same way).
func acceptLoop(name string, ln net.Listener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			fmt.Fprintf(os.Stderr, "%s: accept: %v\n", name, err)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		serve(c)
	}
}
