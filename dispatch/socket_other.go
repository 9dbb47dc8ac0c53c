//go:build !unix

package dispatch

import "net"

// socketReader reads a connection with its own Read: waiting, a read
// into a pooled buffer holds it.
type socketReader struct{}

func (socketReader) readPooled(c net.Conn) (*readBuffer, int, error) {
	b := readBuffers.Get().(*readBuffer)
	n, err := c.Read(b.b[:])
	return b, n, err
}

func (socketReader) readInto(c net.Conn, p []byte) (int, error) { return c.Read(p) }

// alive cannot look at a socket here: an idle connection is taken as
// open, and a request on one the upstream closed fails as it would have.
func (c *upstreamConn) alive() bool { return true }

// newTLSSocket is the connection itself: reading over TLS waits in TLS's
// Read here.
func newTLSSocket(c net.Conn) net.Conn { return c }
