//go:build unix

package dispatch

import (
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
}

func (s *socketReader) init(c net.Conn) {
	s.set = true
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	s.raw = raw
	s.read = func(fd uintptr) bool {
		p := s.into
		if p == nil {
			s.pooled = readBuffers.Get().(*readBuffer)
			p = s.pooled.b[:]
		}
		for {
			n, err := syscall.Read(int(fd), p)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
				if s.into == nil {
					readBuffers.Put(s.pooled)
					s.pooled = nil
				}
				return false
			}
			s.n, s.err = max(n, 0), err
			return true
		}
	}
}

// result is what the last read brought: io.EOF for the end of the
// connection, and a failed read's error as net's would be.
func (s *socketReader) result(c net.Conn) (int, error) {
	n, err := s.n, s.err
	s.n, s.err = 0, nil
	switch {
	case err != nil:
		return n, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", err)}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readPooled waits for bytes and reads them into a buffer from the pool.
func (s *socketReader) readPooled(c net.Conn) (*readBuffer, int, error) {
	if !s.set {
		s.init(c)
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
