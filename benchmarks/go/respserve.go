package main

// The Go twin of examples/resp.cc: PING, ECHO, SET and GET in RESP on
// package net, with the same parsing, limits and batching.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
)

const (
	maxBulk   = 1 << 20
	maxArgs   = 1 << 10
	maxInline = 64 << 10
)

type respStore struct {
	mu sync.Mutex
	m  map[string]string
}

type respCommand struct {
	args   [][]byte
	length int
	err    string
}

// parseLength reads the CRLF-terminated count after buf[*pos] ('*' or '$'),
// which must lie in [0, max]; what names it in the error otherwise.
func parseLength(buf []byte, pos *int, cmd *respCommand, max int64, what string) (int64, parseResult) {
	eol := bytes.Index(buf[*pos:], crlf2[:2])
	if eol < 0 {
		if len(buf)-*pos > 32 {
			cmd.err = "Protocol error: too big count"
			return 0, badRequest
		}
		return 0, needMore
	}
	n, err := strconv.ParseInt(string(buf[*pos+1:*pos+eol]), 10, 64)
	if err != nil {
		cmd.err = "Protocol error: invalid count"
		return 0, badRequest
	}
	if n < 0 || n > max {
		cmd.err = "Protocol error: invalid " + what + " length"
		return 0, badRequest
	}
	*pos += eol + 2
	return n, parsedOK
}

// parseArray parses "*N\r\n" and N bulk strings.
func parseArray(buf []byte, cmd *respCommand) parseResult {
	pos := 0
	n, p := parseLength(buf, &pos, cmd, maxArgs, "multibulk")
	if p != parsedOK {
		return p
	}
	cmd.args = cmd.args[:0]
	for i := int64(0); i < n; i++ {
		if pos >= len(buf) {
			return needMore
		}
		if buf[pos] != '$' {
			cmd.err = "Protocol error: expected '$'"
			return badRequest
		}
		l, p := parseLength(buf, &pos, cmd, maxBulk, "bulk")
		if p != parsedOK {
			return p
		}
		if int64(len(buf)-pos) < l+2 {
			return needMore
		}
		cmd.args = append(cmd.args, buf[pos:pos+int(l)])
		pos += int(l) + 2
	}
	cmd.length = pos
	return parsedOK
}

// parseInline parses words separated by spaces, ending in LF.
func parseInline(buf []byte, cmd *respCommand) parseResult {
	eol := bytes.IndexByte(buf, '\n')
	if eol < 0 {
		if len(buf) > maxInline {
			cmd.err = "Protocol error: too big inline request"
			return badRequest
		}
		return needMore
	}
	line := buf[:eol]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	cmd.args = cmd.args[:0]
	for len(line) > 0 {
		sp := bytes.IndexByte(line, ' ')
		if sp != 0 {
			if sp < 0 {
				cmd.args = append(cmd.args, line)
				break
			}
			cmd.args = append(cmd.args, line[:sp])
		}
		line = line[sp+1:]
	}
	cmd.length = eol + 1
	return parsedOK
}

func parseCommand(buf []byte, cmd *respCommand) parseResult {
	if len(buf) == 0 {
		return needMore
	}
	if buf[0] == '*' {
		return parseArray(buf, cmd)
	}
	return parseInline(buf, cmd)
}

// is reports whether a equals the upper-case word b, ignoring ASCII case.
func is(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i]&^0x20 != b[i] {
			return false
		}
	}
	return true
}

func appendBulk(out, v []byte) []byte {
	out = append(out, '$')
	out = strconv.AppendInt(out, int64(len(v)), 10)
	out = append(out, "\r\n"...)
	out = append(out, v...)
	return append(out, "\r\n"...)
}

func appendArity(out []byte, name string) []byte {
	return append(out, "-ERR wrong number of arguments for '"+name+"' command\r\n"...)
}

// execute runs one command, appending its reply to out.
func (st *respStore) execute(cmd *respCommand, out []byte) []byte {
	a := cmd.args
	if len(a) == 0 {
		return out
	}
	switch {
	case is(a[0], "PING"):
		if len(a) > 2 {
			return appendArity(out, "ping")
		}
		if len(a) == 2 {
			return appendBulk(out, a[1])
		}
		return append(out, "+PONG\r\n"...)
	case is(a[0], "ECHO"):
		if len(a) != 2 {
			return appendArity(out, "echo")
		}
		return appendBulk(out, a[1])
	case is(a[0], "SET"):
		if len(a) != 3 {
			return appendArity(out, "set")
		}
		st.mu.Lock()
		st.m[string(a[1])] = string(a[2])
		st.mu.Unlock()
		return append(out, "+OK\r\n"...)
	case is(a[0], "GET"):
		if len(a) != 2 {
			return appendArity(out, "get")
		}
		st.mu.Lock()
		v, ok := st.m[string(a[1])]
		st.mu.Unlock()
		if !ok {
			return append(out, "$-1\r\n"...)
		}
		return appendBulk(out, []byte(v))
	}
	out = append(out, "-ERR unknown command '"...)
	out = append(out, a[0]...)
	return append(out, "'\r\n"...)
}

// serveRESPConn serves one connection until EOF or an error.
func (st *respStore) serveConn(c net.Conn) {
	defer c.Close()
	buf := make([]byte, readChunk)
	lo, hi := 0, 0
	var out []byte
	var cmd respCommand
	for {
		switch parseCommand(buf[lo:hi], &cmd) {
		case parsedOK:
			out = st.execute(&cmd, out)
			lo += cmd.length
			continue
		case badRequest:
			out = append(out, "-ERR "+cmd.err+"\r\n"...)
			c.Write(out)
			return
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
		hi = copy(buf, buf[lo:hi])
		lo = 0
		if hi == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		n, err := c.Read(buf[hi:])
		if err != nil {
			return
		}
		hi += n
	}
}

// serveRESP runs the RESP server until ctx is done.
func serveRESP(ctx context.Context, addr string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st := &respStore{m: map[string]string{}}
	go acceptLoop("resp", ln, func(c net.Conn) { go st.serveConn(c) })
	fmt.Printf("resp: listening on %s\n", ln.Addr())
	<-ctx.Done()
	ln.Close()
	fmt.Println("resp: shutting down")
	return 0
}
