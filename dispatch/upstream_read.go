package dispatch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// connReader reads an upstream connection. It holds a buffer only while
// bytes it has read wait in it: a stream held open while its model thinks
// waits on its connection with no buffer of its own, where net/http's
// reader kept 4 KB for the connection's life. The buffer comes from a pool
// when bytes come (readInto), and goes back once they have been read.
type connReader struct {
	conn net.Conn
	// buf holds the bytes read and not yet taken, buf.b[r:w]; nil when
	// there are none.
	buf  *readBuffer
	r, w int
	err  error
	// sock is the connection's socket, when it has one to read without a
	// buffer while waiting (socket_unix.go).
	sock socketReader
}

// readBuffer is a connReader's buffer, shared by the connections in turn.
type readBuffer struct{ b [readBufferSize]byte }

// readBufferSize is the most a connection reads at once.
const readBufferSize = 4 << 10

var readBuffers = sync.Pool{New: func() any { return new(readBuffer) }}

// Buffered is how many bytes are at hand, read and not yet taken.
func (cr *connReader) Buffered() int { return cr.w - cr.r }

// pending returns the bytes at hand.
func (cr *connReader) pending() []byte {
	if cr.buf == nil {
		return nil
	}
	return cr.buf.b[cr.r:cr.w]
}

// take consumes n bytes at hand, giving the buffer back once it is empty.
func (cr *connReader) take(n int) {
	cr.r += n
	if cr.r == cr.w && cr.buf != nil {
		readBuffers.Put(cr.buf)
		cr.buf, cr.r, cr.w = nil, 0, 0
	}
}

// fill waits for bytes and reads them into a pooled buffer; it is called
// with none at hand.
func (cr *connReader) fill() error {
	if cr.err != nil {
		return cr.err
	}
	b, n, err := cr.sock.readPooled(cr.conn)
	if n > 0 {
		cr.buf, cr.r, cr.w = b, 0, n
	} else if b != nil {
		readBuffers.Put(b)
	}
	if err != nil {
		cr.err = err
		if n > 0 {
			return nil
		}
	}
	return err
}

// Read reads what is at hand, or, with nothing at hand, waits for bytes:
// into p itself when it is large, so that a head's reader takes them
// without a copy in between.
func (cr *connReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if cr.Buffered() == 0 {
		if cr.err != nil {
			return 0, cr.err
		}
		if len(p) >= readBufferSize/2 {
			n, err := cr.sock.readInto(cr.conn, p)
			if err != nil {
				cr.err = err
			}
			return n, err
		}
		if err := cr.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, cr.pending())
	cr.take(n)
	return n, nil
}

// unread puts back, before what is at hand, bytes a reader took and did
// not use (what follows a reply's head in its reader's buffer).
func (cr *connReader) unread(p []byte) {
	if len(p) == 0 {
		return
	}
	rest := cr.pending()
	if cr.buf != nil && cr.r >= len(p) {
		cr.r -= copy(cr.buf.b[cr.r-len(p):cr.r], p)
		return
	}
	if len(p)+len(rest) > readBufferSize {
		// More than a buffer: a head's reader takes all there is at
		// hand in its first read, so that none is left here when it
		// leaves bytes; should it not, the reply is not read wrong.
		cr.err = errors.New("upstream reply: read past the read buffer")
		return
	}
	b := readBuffers.Get().(*readBuffer)
	n := copy(b.b[:], p)
	n += copy(b.b[n:], rest)
	if cr.buf != nil {
		readBuffers.Put(cr.buf)
	}
	cr.buf, cr.r, cr.w = b, 0, n
}

// headReaders read replies' heads (http.ReadResponse reads through a
// bufio.Reader), shared by the connections: what a head's reader read
// past the head goes back to the connection's reader (unread).
var headReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// lineLimit bounds a chunk's size line, as net/http does.
const lineLimit = 4096

// trailerLimit bounds the trailer of a chunked body, as net/http bounds
// it by its reader's buffer.
const trailerLimit = 4 << 10

var (
	errLineTooLong    = errors.New("upstream reply: chunk size line too long")
	errMalformedChunk = errors.New("upstream reply: malformed chunked encoding")
)

// The states of a chunked body.
const (
	chunkSize    = iota // before a chunk's size line
	chunkData           // in a chunk's data
	chunkEnd            // after a chunk's data, before its CRLF
	chunkTrailer        // after the last chunk, in the trailer
	chunkDone           // the body has ended
)

// chunkedBody reads a body sent in chunks. Where net/http's reader
// returns what it has rather than wait for the next chunk when that
// chunk's size line is not whole in its buffer, this one looks at what
// the connection has at hand: a burst of chunks that came together is
// read in one Read, as one burst of events.
type chunkedBody struct {
	in    *connReader
	n     uint64 // what is left of the chunk's data
	state int
	// line holds a size line or a trailer line as it is read, in
	// lineBuf while it fits.
	line    []byte
	lineBuf [24]byte
	trailer int
	// excess is the overhead read beyond what the data allows.
	excess int64
	err    error
}

func (c *chunkedBody) Read(p []byte) (int, error) {
	total := 0
	for c.err == nil && len(p) > 0 {
		switch c.state {
		case chunkSize:
			line, ok := c.readLine(total > 0, lineLimit)
			if !ok {
				return total, c.err
			}
			n, err := parseChunkLine(line)
			if err != nil {
				c.err = err
				break
			}
			// Overhead beyond 16 bytes a chunk and twice its data is
			// refused past 16 KB, as net/http refuses it: a chunk
			// extension may not make a body mostly non-data.
			c.excess = max(c.excess+int64(len(line))+1-16-2*int64(min(n, 1<<40)), 0)
			if c.excess > 16<<10 {
				c.err = errors.New("upstream reply: chunked encoding contains too much non-data")
				break
			}
			c.n = n
			if n == 0 {
				c.state = chunkTrailer
			} else {
				c.state = chunkData
			}
		case chunkData:
			if total > 0 && c.in.Buffered() == 0 {
				return total, nil
			}
			want := p
			if uint64(len(want)) > c.n {
				want = want[:c.n]
			}
			m, err := c.in.Read(want)
			total += m
			p = p[m:]
			c.n -= uint64(m)
			if c.n == 0 {
				c.state = chunkEnd
			}
			if err != nil {
				c.err = unexpected(err)
			}
		case chunkEnd:
			if total > 0 && c.in.Buffered() < 2 {
				return total, nil
			}
			c.endChunk()
		case chunkTrailer:
			line, ok := c.readLine(total > 0, trailerLimit)
			if !ok {
				return total, c.err
			}
			c.trailer += len(line) + 1
			if c.trailer > trailerLimit {
				c.err = errors.New("upstream reply: trailer too large")
				break
			}
			if len(bytes.TrimSuffix(line, []byte("\r"))) == 0 {
				c.state, c.err = chunkDone, io.EOF
			}
		case chunkDone:
			c.err = io.EOF
		}
	}
	// What ends a chunk, and the body's end, are taken with the last
	// bytes when they are at hand: the connection's buffer goes back
	// while the stream waits, and at the end the connection goes back to
	// the pool at once.
	if c.err == nil && c.state == chunkEnd && c.in.Buffered() >= 2 {
		c.endChunk()
	}
	if c.err == nil && c.state == chunkSize && bytes.HasPrefix(c.in.pending(), []byte("0\r\n\r\n")) {
		c.in.take(5)
		c.state, c.err = chunkDone, io.EOF
	}
	if total > 0 && c.err != nil && !errors.Is(c.err, io.EOF) {
		return total, nil
	}
	return total, c.err
}

// endChunk reads the CRLF after a chunk's data.
func (c *chunkedBody) endChunk() {
	var crlf [2]byte
	if _, err := io.ReadFull(c.in, crlf[:]); err != nil {
		c.err = unexpected(err)
		return
	}
	if crlf != [2]byte{'\r', '\n'} {
		c.err = errMalformedChunk
		return
	}
	c.state = chunkSize
}

// readLine reads a line ending in LF, returned without it. With atHand
// set it reads only a line whole at hand, and reports false otherwise, as
// it does when the line cannot be read (c.err says why). The line is held
// in c.line, good until the next line is read.
func (c *chunkedBody) readLine(atHand bool, limit int) ([]byte, bool) {
	for {
		at := c.in.pending()
		if i := bytes.IndexByte(at, '\n'); i >= 0 {
			// Copied out: taking the line's bytes may give the
			// connection's buffer back to the pool, for another
			// connection to read into.
			line := append(c.line, at[:i]...)
			if len(line) > limit {
				c.err = errLineTooLong
				return nil, false
			}
			c.line = line[:0]
			c.in.take(i + 1)
			return line, true
		}
		if atHand {
			return nil, false
		}
		c.line = append(c.line, at...)
		c.in.take(len(at))
		if len(c.line) > limit {
			c.err = errLineTooLong
			return nil, false
		}
		if err := c.in.fill(); err != nil {
			c.err = unexpected(err)
			return nil, false
		}
	}
}

// parseChunkLine reads a chunk's size line (without its LF): a size in
// hex, then perhaps an extension, which is dropped. As net/http, it wants
// the line to end in CRLF with no other CR, and drops the spaces and tabs
// before the CRLF.
func parseChunkLine(line []byte) (uint64, error) {
	switch i := bytes.IndexByte(line, '\r'); {
	case i < 0:
		return 0, errors.New("upstream reply: chunked line ends with bare LF")
	case i != len(line)-1:
		return 0, errors.New("upstream reply: invalid CR in chunked line")
	}
	line = bytes.TrimRight(line[:len(line)-1], " \t")
	line, _, _ = bytes.Cut(line, []byte(";")) // what is before ';' is not trimmed again
	return parseChunkSize(line)
}

// parseChunkSize reads a chunk's size, in hex.
func parseChunkSize(line []byte) (uint64, error) {
	if len(line) == 0 {
		return 0, errors.New("upstream reply: empty chunk size")
	}
	var n uint64
	for i, b := range line {
		var d byte
		switch {
		case '0' <= b && b <= '9':
			d = b - '0'
		case 'a' <= b && b <= 'f':
			d = b - 'a' + 10
		case 'A' <= b && b <= 'F':
			d = b - 'A' + 10
		default:
			return 0, fmt.Errorf("upstream reply: invalid byte in chunk size: %q", b)
		}
		if i == 16 {
			return 0, errors.New("upstream reply: chunk size too large")
		}
		n = n<<4 | uint64(d)
	}
	return n, nil
}

// unexpected makes an end of the connection inside a body the error it is.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// lengthBody reads a body of a known length.
type lengthBody struct {
	in *connReader
	n  int64
}

func (l *lengthBody) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	m, err := l.in.Read(p)
	l.n -= int64(m)
	switch {
	case l.n == 0:
		// The end comes with the last bytes.
		return m, io.EOF
	case err != nil:
		return m, unexpected(err)
	}
	return m, nil
}

// untilCloseBody reads a body that ends with the connection.
type untilCloseBody struct{ in *connReader }

func (u untilCloseBody) Read(p []byte) (int, error) { return u.in.Read(p) }
