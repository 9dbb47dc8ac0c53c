package dispatch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http/httputil"
	"strings"
	"testing"
	"time"
)

// piecesConn serves data in pieces of the sizes a seeded source draws,
// then the end of the connection.
type piecesConn struct {
	net.Conn
	data []byte
	rng  *rand.Rand
}

func (c *piecesConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rng.IntN(40))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// readChunked reads a chunked body from data served in random pieces,
// with reads of random sizes.
func readChunked(data []byte, seed uint64) ([]byte, error) {
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	cr := &connReader{conn: &piecesConn{data: data, rng: rng}}
	body := &chunkedBody{in: cr}
	var out []byte
	for {
		p := make([]byte, 1+rng.IntN(64))
		n, err := body.Read(p)
		out = append(out, p[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// TestChunkedBodyRoundTrip: what net/http's chunked writer writes, with
// extensions, trailers and a bare body, reads back whole however the
// connection and the reader split it.
func TestChunkedBodyRoundTrip(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var want, wire bytes.Buffer
		w := httputil.NewChunkedWriter(&wire)
		for range rng.IntN(8) {
			part := strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(3000))
			want.WriteString(part)
			_, _ = io.WriteString(w, part)
		}
		_ = w.Close()
		switch seed % 3 {
		case 1:
			wire.WriteString("X-Trailer: a\r\nX-Other: b\r\n")
		case 2:
			// An extension on the last chunk's line.
			wire.Truncate(wire.Len() - 3)
			wire.WriteString("0;ext=1 \r\n")
		}
		wire.WriteString("\r\n")
		got, err := readChunked(wire.Bytes(), seed)
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("seed %d: read %d bytes of %d, %v", seed, len(got), want.Len(), err)
		}
	}
}

// TestChunkedBodyRefuses: what net/http's chunked reader refuses, this one
// refuses.
func TestChunkedBodyRefuses(t *testing.T) {
	for _, wire := range []string{
		"5\nhello\r\n0\r\n\r\n",                   // bare LF
		"5\r\r\nhello\r\n0\r\n\r\n",               // a CR inside
		"5\r\nhelloXY0\r\n\r\n",                   // no CRLF after the data
		"\r\nhello\r\n0\r\n\r\n",                  // no size
		"g\r\nhello\r\n0\r\n\r\n",                 // not hex
		"10000000000000000\r\nhello\r\n0\r\n\r\n", // too large
		"5\r\nhel", // cut short
		"1;" + strings.Repeat("x", 5000) + "\r\nh\r\n0\r\n\r\n",
		strings.Repeat("1;"+strings.Repeat("x", 1000)+"\r\nh\r\n", 20) + "0\r\n\r\n", // mostly non-data
		"0\r\n" + strings.Repeat("X-Trailer: "+strings.Repeat("y", 100)+"\r\n", 50) + "\r\n",
	} {
		if _, err := readChunked([]byte(wire), 1); err == nil {
			t.Errorf("%.40q… was read", wire)
		}
		if !strings.HasPrefix(wire, "0\r\n") {
			if _, err := io.ReadAll(httputil.NewChunkedReader(strings.NewReader(wire))); err == nil {
				t.Errorf("net/http reads %.40q…: the case does not test what it says", wire)
			}
		}
	}
}

// FuzzChunkedBody holds the chunked reader to net/http's: what it reads
// without error, net/http reads the same, and what net/http refuses
// before the last chunk, it refuses.
func FuzzChunkedBody(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), uint64(1))
	f.Add([]byte("3;x=y\r\nabc\r\n2 \r\nde\r\n0\r\nT: 1\r\n\r\n"), uint64(2))
	f.Add([]byte("A\r\n0123456789\r\n0\r\n\r\n"), uint64(3))
	f.Fuzz(func(t *testing.T, wire []byte, seed uint64) {
		got, err := readChunked(wire, seed)
		ref, rerr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(wire)))
		if err == nil && (rerr != nil || !bytes.Equal(got, ref)) {
			t.Fatalf("read %q, net/http %q (%v)", got, ref, rerr)
		}
		if rerr != nil && err == nil {
			t.Fatalf("net/http refuses (%v), this reads %q", rerr, got)
		}
	})
}

// blockingConn serves bursts, each only once the last was read and the
// test let the next one go.
type blockingConn struct {
	net.Conn
	bursts chan []byte
	left   []byte
}

func (c *blockingConn) Read(p []byte) (int, error) {
	if len(c.left) == 0 {
		b, ok := <-c.bursts
		if !ok {
			return 0, io.EOF
		}
		c.left = b
	}
	n := copy(p, c.left)
	c.left = c.left[n:]
	return n, nil
}

// TestChunkedBodyReadsWhatIsAtHand: chunks that came in one burst are
// read in one Read, and a Read returns them without waiting for the next
// burst; the reader then holds no buffer while it waits.
func TestChunkedBodyReadsWhatIsAtHand(t *testing.T) {
	conn := &blockingConn{bursts: make(chan []byte, 1)}
	cr := &connReader{conn: conn}
	body := &chunkedBody{in: cr}
	var burst strings.Builder
	for i := range 10 {
		fmt.Fprintf(&burst, "%x\r\nevent %d\r\n", len(fmt.Sprintf("event %d", i)), i)
	}
	conn.bursts <- []byte(burst.String())
	p := make([]byte, 4096)
	n, err := body.Read(p)
	if err != nil || n != 10*len("event 0") {
		t.Fatalf("the first Read returned %d bytes (%q), %v; want all ten chunks", n, p[:n], err)
	}
	if cr.buf != nil {
		t.Error("the reader holds a buffer with nothing in it")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, err = body.Read(p)
	}()
	select {
	case <-done:
		t.Fatal("a Read with nothing at hand returned before the next burst")
	case <-time.After(20 * time.Millisecond):
	}
	conn.bursts <- []byte("4\r\nlast\r\n0\r\n\r\n")
	<-done
	if string(p[:n]) != "last" || !errors.Is(err, io.EOF) {
		t.Fatalf("%q, %v; want the last chunk with the end", p[:n], err)
	}
}
