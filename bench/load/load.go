package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The load generator: c workers in a closed loop, each sending the next
// request as soon as the last one's body has been read to its end, over
// kept-alive connections, for a fixed time or a fixed number of requests.

// call is a request bound to a target, and what a good reply ends with.
type call struct {
	url string
	req request
	// end must be among the reply's last bytes: the stream's own end, or
	// the end of the text in a whole reply.
	end []byte
}

// plan is how long a run lasts: count requests when count > 0, else for
// duration.
type plan struct {
	duration time.Duration
	count    int
}

// runResult is what one run measured, as seen from the client.
type runResult struct {
	requests int // good replies
	errors   int
	firstErr string
	elapsed  time.Duration
	ttfb     []time.Duration // of good replies, sorted
	total    []time.Duration // of good replies, sorted
}

// newClient returns a client that keeps up to conns connections to a host
// alive, and asks for no compression (neither a target nor the mock
// compresses, and a real SSE client does not get compressed streams).
func newClient(conns int, roots *x509.CertPool) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	if roots != nil {
		// The direct call to mocks that serve HTTPS.
		tr.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		tr.ForceAttemptHTTP2 = true
	}
	return &http.Client{Transport: tr}
}

// warmUp sends a few requests per worker before a run is measured, so
// that connections are open and pools are filled on both sides.
func warmUp(ctx context.Context, client *http.Client, c call, conc int) {
	runLoad(ctx, client, c, conc, plan{count: 4 * conc})
}

// runLoad runs conc workers sending c until the plan is done.
func runLoad(ctx context.Context, client *http.Client, c call, conc int, p plan) runResult {
	var (
		issued   atomic.Int64
		deadline = time.Now().Add(p.duration)
		mu       sync.Mutex
		all      runResult
		wg       sync.WaitGroup
	)
	more := func() bool {
		if ctx.Err() != nil {
			return false
		}
		if p.count > 0 {
			return issued.Add(1) <= int64(p.count)
		}
		return time.Now().Before(deadline)
	}
	start := time.Now()
	for range conc {
		wg.Go(func() {
			r := work(ctx, client, c, more)
			mu.Lock()
			defer mu.Unlock()
			all.merge(r)
		})
	}
	wg.Wait()
	all.elapsed = time.Since(start)
	slices.Sort(all.ttfb)
	slices.Sort(all.total)
	return all
}

// work is one worker's loop.
func work(ctx context.Context, client *http.Client, c call, more func() bool) runResult {
	var r runResult
	buf := make([]byte, 32<<10)
	for more() {
		ttfb, total, err := c.do(ctx, client, buf)
		if err != nil {
			r.errors++
			if r.firstErr == "" {
				r.firstErr = err.Error()
			}
			continue
		}
		r.requests++
		r.ttfb = append(r.ttfb, ttfb)
		r.total = append(r.total, total)
	}
	return r
}

func (r *runResult) merge(o runResult) {
	r.requests += o.requests
	r.errors += o.errors
	if r.firstErr == "" {
		r.firstErr = o.firstErr
	}
	r.ttfb = append(r.ttfb, o.ttfb...)
	r.total = append(r.total, o.total...)
}

// tailSize is how much of a reply's end is kept to check it.
const tailSize = 2048

// do sends the call once and reads the reply to its end. ttfb is the time
// to the first byte of the body (for a stream, its first event), total to
// the body's end.
func (c call) do(ctx context.Context, client *http.Client, buf []byte) (ttfb, total time.Duration, err error) {
	start := time.Now()
	resp, err := c.send(ctx, client)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		n, _ := io.ReadFull(resp.Body, buf[:min(len(buf), 300)])
		return 0, 0, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(buf[:n]))
	}
	var tail []byte
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if ttfb == 0 {
				ttfb = time.Since(start)
			}
			tail = keepTail(tail, buf[:n])
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return 0, 0, fmt.Errorf("reading the reply: %w", rerr)
		}
	}
	total = time.Since(start)
	if !bytes.Contains(tail, c.end) {
		return 0, 0, fmt.Errorf("the reply does not end with %q: ...%s", c.end, tail[max(0, len(tail)-200):])
	}
	return ttfb, total, nil
}

// send posts the call's body.
func (c call) send(ctx context.Context, client *http.Client) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.req.body))
	if err != nil {
		return nil, err
	}
	req.Header = c.req.header.Clone()
	return client.Do(req)
}

// keepTail appends b to tail and keeps the last tailSize bytes.
func keepTail(tail, b []byte) []byte {
	tail = append(tail, b...)
	if len(tail) > tailSize {
		tail = append(tail[:0], tail[len(tail)-tailSize:]...)
	}
	return tail
}

// quantile returns the q-quantile of sorted durations (nearest rank), or
// 0 for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
