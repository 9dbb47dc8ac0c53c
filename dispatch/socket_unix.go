//go:build unix

package dispatch

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// socketReader reads a connection's socket directly, so that waiting for
// bytes holds no buffer: the read is tried, and a buffer taken from the
// pool for it given back when there is nothing to read yet, before the
// wait. A connection without a socket of its own (a test's wrapper) is
// read with its Read.
type socketReader struct {
	set bool
	raw syscall.RawConn
	// read is the function the socket is read with, made once; into is
	// where it reads (nil: a pooled buffer, left in pooled), n and err
	// what it read.
	read   func(fd uintptr) bool
	into   []byte
	pooled *readBuffer
	n      int
	err    error
	// tls and sock are set for a connection over TLS: it is read
	// through tls, which reads sock without waiting (tlsSocket).
	tls  *tls.Conn
	sock *tlsSocket
}

func (s *socketReader) init(c net.Conn) {
	s.set = true
	if tc, ok := c.(*tls.Conn); ok {
		if ts, ok := tc.NetConn().(*tlsSocket); ok && ts.raw != nil {
			s.tls, s.sock = tc, ts
		}
		return
	}
	s.raw = rawConn(c)
	if s.raw == nil {
		return
	}
	s.read = func(fd uintptr) bool {
		p := s.into
		if p == nil {
			s.pooled = readBuffers.Get().(*readBuffer)
			p = s.pooled.b[:]
		}
		n, err, again := readFD(fd, p)
		if again {
			if s.into == nil {
				readBuffers.Put(s.pooled)
				s.pooled = nil
			}
			return false
		}
		s.n, s.err = n, err
		return true
	}
}

// rawConn is c's socket, nil when it has none to read directly (a test's
// wrapper).
func rawConn(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

// readFD reads the socket fd into p once (again after a signal); again
// reports that it had nothing to read yet.
func readFD(fd uintptr, p []byte) (n int, err error, again bool) {
	for {
		n, err := syscall.Read(int(fd), p)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
			return 0, nil, true
		}
		return max(n, 0), err, false
	}
}

// readResult is what a read of c's socket brought: io.EOF for the end of
// the connection, and a failed read's error as net's would be.
func readResult(c net.Conn, n int, err error) (int, error) {
	switch {
	case err != nil:
		return n, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", err)}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// result is what the last read brought (readResult).
func (s *socketReader) result(c net.Conn) (int, error) {
	n, err := s.n, s.err
	s.n, s.err = 0, nil
	return readResult(c, n, err)
}

// readPooled waits for bytes and reads them into a buffer from the pool.
func (s *socketReader) readPooled(c net.Conn) (*readBuffer, int, error) {
	if !s.set {
		s.init(c)
	}
	if s.tls != nil {
		for {
			b := readBuffers.Get().(*readBuffer)
			n, err := s.sock.poll(s.tls, b.b[:])
			if !errors.Is(err, errNothingYet) {
				return b, n, err
			}
			readBuffers.Put(b)
			if err := s.sock.wait(); err != nil {
				return nil, 0, err
			}
		}
	}
	if s.raw == nil {
		b := readBuffers.Get().(*readBuffer)
		n, err := c.Read(b.b[:])
		return b, n, err
	}
	s.into = nil
	if err := s.raw.Read(s.read); err != nil {
		return nil, 0, err
	}
	b := s.pooled
	s.pooled = nil
	n, err := s.result(c)
	return b, n, err
}

// readInto waits for bytes and reads them into p.
func (s *socketReader) readInto(c net.Conn, p []byte) (int, error) {
	if !s.set {
		s.init(c)
	}
	if s.tls != nil {
		for {
			n, err := s.sock.poll(s.tls, p)
			if !errors.Is(err, errNothingYet) {
				return n, err
			}
			if err := s.sock.wait(); err != nil {
				return 0, err
			}
		}
	}
	if s.raw == nil {
		return c.Read(p)
	}
	s.into = p
	err := s.raw.Read(s.read)
	s.into = nil
	if err != nil {
		return 0, err
	}
	return s.result(c)
}

// alive reports whether an idle connection is still open: that its peer
// has neither closed it nor sent anything (an idle connection has nothing
// to read; bytes there are a reply to nothing, and the connection is not
// to be trusted). It looks without waiting and without taking any byte.
func (c *upstreamConn) alive() bool {
	if c.secure {
		return c.in.aliveTLS()
	}
	if c.peek == nil {
		sc, ok := c.conn.(syscall.Conn)
		if !ok {
			return true
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return false
		}
		// Made once for the connection, as the closure below is.
		c.raw = raw
		c.peek = func(fd uintptr) bool {
			var b [1]byte
			_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			c.open = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
			return true
		}
	}
	c.open = false
	err := c.raw.Read(c.peek)
	return err == nil && c.open
}

// aliveTLS reports whether an idle connection over TLS is still open: a
// read that does not wait finds nothing, neither bytes (TLS may hold some
// already read from the socket) nor the upstream's close. What TLS does
// between requests (a new session ticket) is taken in passing.
func (cr *connReader) aliveTLS() bool {
	s := &cr.sock
	if !s.set {
		s.init(cr.conn)
	}
	if s.tls == nil {
		return true
	}
	var b [1]byte
	_, err := s.sock.poll(s.tls, b[:])
	return errors.Is(err, errNothingYet)
}

// tlsSocket is the TCP connection under an upstream's TLS connection.
// Polled (poll), its Read does not wait: with nothing to read, it returns
// errNothingYet, which TLS passes on as a temporary error, keeping what it
// has of a record for the next read. So a TLS connection is read without
// waiting in its Read: the wait is on the socket, holding no buffer
// (wait), and shallow on the stack, where a wait in TLS's Read would be
// deep enough to double a held stream's stack.
type tlsSocket struct {
	net.Conn
	raw    syscall.RawConn
	polled bool
	// read and peek are the functions the socket is read and looked at
	// with, made once; p is where read reads, n, err and none what it
	// found (none: nothing to read yet).
	read, peek func(fd uintptr) bool
	p          []byte
	n          int
	err        error
	none       bool
}

func newTLSSocket(c net.Conn) net.Conn {
	s := &tlsSocket{Conn: c, raw: rawConn(c)}
	if s.raw == nil {
		return s
	}
	s.read = func(fd uintptr) bool {
		s.n, s.err, s.none = readFD(fd, s.p)
		return true
	}
	s.peek = func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
	}
	return s
}

// errNothingYet is a polled read's error when the socket has nothing.
var errNothingYet error = nothingYet{}

type nothingYet struct{}

func (nothingYet) Error() string   { return "nothing to read yet" }
func (nothingYet) Timeout() bool   { return false }
func (nothingYet) Temporary() bool { return true }

func (s *tlsSocket) Read(p []byte) (int, error) {
	if !s.polled {
		return s.Conn.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	s.p = p
	err := s.raw.Read(s.read)
	s.p = nil
	n, rerr, none := s.n, s.err, s.none
	s.n, s.err, s.none = 0, nil, false
	switch {
	case err != nil:
		return 0, err
	case none:
		return 0, errNothingYet
	}
	return readResult(s, n, rerr)
}

// poll reads tc into p without waiting: errNothingYet when neither TLS nor
// the socket has anything.
func (s *tlsSocket) poll(tc *tls.Conn, p []byte) (int, error) {
	s.polled = true
	n, err := tc.Read(p)
	s.polled = false
	if errors.Is(err, errNothingYet) {
		return 0, errNothingYet
	}
	return n, err
}

// wait waits until the socket has bytes, or is closed, or its deadline
// passes (a cancellation sets one in the past).
func (s *tlsSocket) wait() error { return s.raw.Read(s.peek) }
