//go:build unix

package dispatch

import (
	"syscall"
)

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
