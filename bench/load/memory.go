package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Memory per held stream: many streams opened through a target and held
// open by the mock after their first events, as streams are held while a
// model thinks. The target's resident memory with them open, less its
// memory before, divided by their number, is what a stream costs while
// it waits: its connections, buffers and goroutines on both sides.

// maxOpening bounds the streams being opened at once, so that the
// target's listen backlog never overflows (a dropped SYN costs a second
// and tells nothing about memory).
const maxOpening = 256

// heldTimeout bounds how long the streams may take to end once released.
const heldTimeout = time.Minute

// heldOn starts a fresh target process for the route, warms it up, and
// measures its held streams. A fresh process starts every measurement
// from the same place: memory an earlier run left in the heap would
// otherwise hide part of the cost.
func (h *harness) heldOn(ctx context.Context, r route, kind targetKind, label string) (memStats, error) {
	var p *process
	var err error
	if kind == parley {
		p, err = startParley(ctx, h.bin, h.tmp, label, h.mocks)
	} else {
		p, err = startProxy(ctx, h.tmp, h.mocks.url(r.upstream), label, h.mocks.trustEnv())
	}
	if err != nil {
		return memStats{}, err
	}
	defer p.stop()
	client := newClient(8, nil)
	warmUp(ctx, client, callFor(r, true, false, kind, p.url, h.opts.promptKB), 8)
	client.CloseIdleConnections()
	return holdStreams(ctx, p.pid(), callFor(r, true, true, kind, p.url, h.opts.promptKB), h.opts.streams, h.opts.settle, h.opts.openTimeout, h.mocks.gate)
}

// holdStreams opens n held streams of c through the target pid, waits
// until each has its first bytes and then settle, reads the target's
// memory, and releases the streams. Streams that have no first bytes
// within openTimeout make the measurement void, not the run: they are
// counted as failed, with the reason, and every stream is cut.
func holdStreams(ctx context.Context, pid int, c call, n int, settle, openTimeout time.Duration, g *gate) (memStats, error) {
	before, err := processRSS(pid)
	if err != nil {
		return memStats{}, err
	}
	streams, cancel := context.WithCancel(ctx)
	defer cancel()
	client := newClient(n, nil)
	defer client.CloseIdleConnections()
	started, ended := make(chan error, n), make(chan error, n)
	opening := make(chan struct{}, maxOpening)
	arrived := g.arrived.Load()
	for range n {
		go func() {
			opening <- struct{}{}
			ended <- c.hold(streams, client, func(err error) {
				switch {
				case !g.beforeHead:
					<-opening
				case err != nil:
					// Held before its head, a stream gives its place up
					// when the mock has it (collectArrivals), or here
					// when it fails first; never twice.
					select {
					case <-opening:
					default:
					}
				}
				started <- err
			})
		}()
	}
	s := memStats{Streams: n, BeforeKB: before}
	var got, failed int
	var first string
	if g.beforeHead {
		got, failed, first = collectArrivals(ctx, g, arrived, opening, started, n, openTimeout)
	} else {
		got, failed, first = collect(ctx, started, n, openTimeout)
	}
	s.Failed, s.FirstError = failed+n-got, first
	if got < n {
		s.FirstError = fmt.Sprintf("%d of %d streams had no first byte within %s (held streams must get their first events at once)", n-got, n, openTimeout)
		// The measurement is void: the streams are cut, not released.
		cancel()
	}
	if s.Failed == 0 {
		if err := sleep(ctx, settle); err != nil {
			return s, err
		}
		if s.AfterKB, err = processRSS(pid); err != nil {
			return s, err
		}
		kb := float64(s.AfterKB-s.BeforeKB) / float64(n)
		s.KBPerStream = &kb
	}
	g.release()
	got, failed, first = collect(ctx, ended, n, heldTimeout)
	if s.FirstError == "" {
		s.FirstError = first
	}
	s.Failed = max(s.Failed, failed+n-got)
	return s, ctx.Err()
}

// collectArrivals waits, for at most timeout, until n streams held before
// their replies' heads have reached the mock (arrived counts them from
// since), letting another stream open as each arrives; a stream that
// failed before it arrived counts as failed. The streams' first bytes come
// only once they are released.
func collectArrivals(ctx context.Context, g *gate, since int64, opening <-chan struct{}, started <-chan error, n int, timeout time.Duration) (got, failed int, first string) {
	deadline := time.After(timeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	let := 0
	for {
		for a := int(g.arrived.Load() - since); let < a; let++ {
			select {
			case <-opening:
			default: // a stream that failed since gave its place up
			}
		}
		if let+failed >= n {
			return n, failed, first
		}
		select {
		case err := <-started:
			// Before its arrival only a failure comes.
			if err != nil {
				failed++
				if first == "" {
					first = err.Error()
				}
			}
		case <-tick.C:
		case <-deadline:
			return min(let+failed, n), failed, first
		case <-ctx.Done():
			return min(let+failed, n), failed, first
		}
	}
}

// collect receives up to n outcomes for at most timeout, and counts them
// and the failures among them.
func collect(ctx context.Context, outcomes <-chan error, n int, timeout time.Duration) (got, failed int, first string) {
	deadline := time.After(timeout)
	for got < n {
		select {
		case err := <-outcomes:
			got++
			if err != nil {
				failed++
				if first == "" {
					first = err.Error()
				}
			}
		case <-deadline:
			return got, failed, first
		case <-ctx.Done():
			return got, failed, first
		}
	}
	return got, failed, first
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hold sends the call and tells started once the first bytes of the body
// have come (or the call failed before them); it then reads the stream to
// its end, which comes once the mock is released.
func (c call) hold(ctx context.Context, client *http.Client, started func(error)) error {
	resp, err := c.send(ctx, client)
	if err != nil {
		started(err)
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("status %d", resp.StatusCode)
		started(err)
		return err
	}
	buf := make([]byte, 4096)
	n, err := resp.Body.Read(buf)
	for n == 0 && err == nil {
		n, err = resp.Body.Read(buf)
	}
	if n == 0 {
		err = fmt.Errorf("the stream ended before its first bytes: %w", err)
		started(err)
		return err
	}
	started(nil)
	var tail bytes.Buffer
	tail.Write(buf[:n])
	if _, err := io.Copy(&tail, resp.Body); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the stream: %w", err)
	}
	if !bytes.Contains(tail.Bytes(), c.end) {
		return fmt.Errorf("the stream does not end with %q", c.end)
	}
	return nil
}
