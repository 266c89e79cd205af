package main

// The Go twin of examples/http.cc: a minimal HTTP/1.1 keep-alive server on
// package net (not net/http), with the same parsing, limits, deadlines,
// responses and graceful shutdown.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	maxHeaderBytes = 8 << 10
	maxBodyBytes   = 1 << 20
	readChunk      = 16 << 10
)

type parseResult int

const (
	needMore parseResult = iota
	parsedOK
	badRequest
	headerTooLarge
	bodyTooLarge
	unsupported
)

type httpRequest struct {
	target    []byte
	keepAlive bool
	http10    bool
	headerLen int
	bodyLen   int
}

type httpConn struct {
	c    net.Conn
	idle atomic.Bool
}

type httpServer struct {
	readTimeout time.Duration
	grace       time.Duration
	shutting    atomic.Bool
	accepted    atomic.Int64
	wg          sync.WaitGroup
	mu          sync.Mutex
	conns       map[*httpConn]struct{}
}

var crlf2 = []byte("\r\n\r\n")

// hasToken reports whether the comma-separated list v holds token.
func hasToken(v []byte, token string) bool {
	for _, t := range bytes.Split(v, []byte(",")) {
		if strings.EqualFold(string(bytes.Trim(t, " \t")), token) {
			return true
		}
	}
	return false
}

// parseRequestLine parses "METHOD SP TARGET SP HTTP/1.x" into r.
func parseRequestLine(line []byte, r *httpRequest) bool {
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return false
	}
	sp2 := bytes.IndexByte(line[sp1+1:], ' ')
	if sp2 <= 0 {
		return false
	}
	r.target = line[sp1+1 : sp1+1+sp2]
	switch string(line[sp1+1+sp2+1:]) {
	case "HTTP/1.1":
		r.http10 = false
	case "HTTP/1.0":
		r.http10 = true
	default:
		return false
	}
	for _, ch := range line[:sp1] {
		if ch <= ' ' || ch >= 0x7f {
			return false
		}
	}
	return true
}

// parseHeader applies one "Name: value" line to r.
func parseHeader(line []byte, r *httpRequest, seenLength *bool) parseResult {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return badRequest
	}
	name := line[:colon]
	if bytes.ContainsAny(name, " \t") {
		return badRequest
	}
	value := bytes.Trim(line[colon+1:], " \t")
	switch {
	case strings.EqualFold(string(name), "content-length"):
		n, err := strconv.ParseUint(string(value), 10, 63)
		if err != nil {
			return badRequest
		}
		if *seenLength && int(n) != r.bodyLen {
			return badRequest
		}
		if n > maxBodyBytes {
			return bodyTooLarge
		}
		r.bodyLen = int(n)
		*seenLength = true
	case strings.EqualFold(string(name), "transfer-encoding"):
		return unsupported
	case strings.EqualFold(string(name), "connection"):
		if hasToken(value, "close") {
			r.keepAlive = false
		}
		if r.http10 && hasToken(value, "keep-alive") {
			r.keepAlive = true
		}
	}
	return parsedOK
}

// parseRequest parses the request header at the start of buf.
func parseRequest(buf []byte, r *httpRequest) parseResult {
	limit := buf
	if len(limit) > maxHeaderBytes+4 {
		limit = limit[:maxHeaderBytes+4]
	}
	end := bytes.Index(limit, crlf2)
	if end < 0 {
		if len(buf) >= maxHeaderBytes+4 {
			return headerTooLarge
		}
		return needMore
	}
	*r = httpRequest{headerLen: end + 4}
	head := buf[:end+2]
	eol := bytes.Index(head, crlf2[:2])
	if !parseRequestLine(head[:eol], r) {
		return badRequest
	}
	r.keepAlive = !r.http10
	seenLength := false
	for head = head[eol+2:]; len(head) > 0; head = head[eol+2:] {
		eol = bytes.Index(head, crlf2[:2])
		if p := parseHeader(head[:eol], r, &seenLength); p != parsedOK {
			return p
		}
	}
	return parsedOK
}

// appendResponse appends a response with body to out.
func appendResponse(out []byte, status string, body []byte, keepAlive, http10 bool) []byte {
	out = append(out, "HTTP/1.1 "...)
	out = append(out, status...)
	out = append(out, "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	if !keepAlive {
		out = append(out, "\r\nConnection: close"...)
	} else if http10 {
		out = append(out, "\r\nConnection: keep-alive"...)
	}
	out = append(out, "\r\n\r\n"...)
	return append(out, body...)
}

var helloBody = []byte("Hello, World!\n")

// debugText is what /debug answers.
func (s *httpServer) debugText() []byte {
	s.mu.Lock()
	open := len(s.conns)
	s.mu.Unlock()
	return []byte(fmt.Sprintf("goroutines %d\nthreads %d\nconnections %d\naccepted %d\n",
		runtime.NumGoroutine(), threadCount(), open, s.accepted.Load()))
}

// threadCount is the process's OS thread count (/proc/self/status).
func threadCount() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte("Threads:"))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+len("Threads:"):])
	n, _ := strconv.Atoi(string(f[0]))
	return n
}

// handle answers one complete request into out.
func (s *httpServer) handle(r *httpRequest, body, out []byte) []byte {
	path := r.target
	if q := bytes.IndexByte(path, '?'); q >= 0 {
		path = path[:q]
	}
	switch string(path) {
	case "/":
		return appendResponse(out, "200 OK", helloBody, r.keepAlive, r.http10)
	case "/echo":
		return appendResponse(out, "200 OK", body, r.keepAlive, r.http10)
	case "/debug":
		return appendResponse(out, "200 OK", s.debugText(), r.keepAlive, r.http10)
	}
	return appendResponse(out, "404 Not Found", []byte("404 page not found\n"), r.keepAlive, r.http10)
}

func errorStatus(p parseResult) string {
	switch p {
	case headerTooLarge:
		return "431 Request Header Fields Too Large"
	case bodyTooLarge:
		return "413 Request Entity Too Large"
	case unsupported:
		return "501 Not Implemented"
	}
	return "400 Bad Request"
}

// flush writes out within the server's timeout.
func (s *httpServer) flush(c net.Conn, out []byte) ([]byte, error) {
	if len(out) == 0 {
		return out, nil
	}
	c.SetWriteDeadline(time.Now().Add(s.readTimeout))
	_, err := c.Write(out)
	return out[:0], err
}

// closeWriteAndDrain lets the client read an error response before the close.
func closeWriteAndDrain(c net.Conn) {
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	var sink [4096]byte
	for total := 0; total < 256<<10; {
		n, err := c.Read(sink[:])
		if err != nil {
			return
		}
		total += n
	}
}

// enterIdle marks hc idle and reports whether to go on serving.
func (s *httpServer) enterIdle(hc *httpConn) bool {
	hc.c.SetReadDeadline(time.Now().Add(s.readTimeout))
	hc.idle.Store(true)
	return !s.shutting.Load()
}

// serveRequests serves hc until the client closes, an error or shutdown.
func (s *httpServer) serveRequests(hc *httpConn) error {
	buf := make([]byte, readChunk)
	lo, hi := 0, 0
	var out []byte
	var err error
	for {
		var r httpRequest
		p := parseRequest(buf[lo:hi], &r)
		if p == parsedOK && hi-lo >= r.headerLen+r.bodyLen {
			out = s.handle(&r, buf[lo+r.headerLen:lo+r.headerLen+r.bodyLen], out)
			lo += r.headerLen + r.bodyLen
			if !r.keepAlive {
				_, err = s.flush(hc.c, out)
				return err
			}
			continue
		}
		if p != parsedOK && p != needMore {
			out = appendResponse(out, errorStatus(p), nil, false, false)
			if _, err = s.flush(hc.c, out); err != nil {
				return err
			}
			closeWriteAndDrain(hc.c)
			return nil
		}
		if out, err = s.flush(hc.c, out); err != nil {
			return err
		}
		if lo == hi {
			lo, hi = 0, 0
			if !s.enterIdle(hc) {
				return nil
			}
		}
		if lo > 0 {
			hi = copy(buf, buf[lo:hi])
			lo = 0
		}
		if hi == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		n, err := hc.c.Read(buf[hi:])
		if err != nil {
			return err
		}
		hi += n
		hc.idle.Store(false)
	}
}

func (s *httpServer) serveConn(c net.Conn) {
	defer s.wg.Done()
	hc := &httpConn{c: c}
	s.mu.Lock()
	s.conns[hc] = struct{}{}
	s.mu.Unlock()
	s.serveRequests(hc) // Errors end the connection quietly.
	c.Close()
	s.mu.Lock()
	delete(s.conns, hc)
	s.mu.Unlock()
}

func (s *httpServer) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	acceptLoop("http", ln, func(c net.Conn) {
		s.accepted.Add(1)
		s.wg.Add(1)
		go s.serveConn(c)
	})
}

// shutdown closes ln, idle connections now, the rest after the grace period.
func (s *httpServer) shutdown(ctx context.Context, ln net.Listener) {
	<-ctx.Done()
	fmt.Printf("http: shutting down (%v)\n", ctx.Err())
	ln.Close()
	s.shutting.Store(true)
	s.mu.Lock()
	for hc := range s.conns {
		if hc.idle.Load() {
			hc.c.SetReadDeadline(time.Now())
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(s.grace):
		s.mu.Lock()
		for hc := range s.conns {
			hc.c.Close()
		}
		s.mu.Unlock()
		<-done
	}
	fmt.Printf("http: shut down after %d connections\n", s.accepted.Load())
}

// serveHTTP runs the HTTP server until ctx is done.
func serveHTTP(ctx context.Context, addr string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := &httpServer{
		readTimeout: time.Duration(*readTimeoutMs) * time.Millisecond,
		grace:       time.Duration(*graceMs) * time.Millisecond,
		conns:       map[*httpConn]struct{}{},
	}
	fmt.Printf("http: listening on %s\n", ln.Addr())
	s.wg.Add(1)
	go s.acceptLoop(ln)
	s.shutdown(ctx, ln)
	return 0
}
