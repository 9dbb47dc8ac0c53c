package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the writer's goroutine and the
// test to use at once; it counts the writes it was given.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
	gate   chan struct{} // when set, each write waits for it
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	if l.gate != nil {
		<-l.gate
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogWriterKeepsEveryLineInOrder: lines from many goroutines all come
// out, each whole, each goroutine's in its order; and by Close all are.
func TestLogWriterKeepsEveryLineInOrder(t *testing.T) {
	var out lockedBuffer
	w := newLogWriter(&out)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				if _, err := fmt.Fprintf(w, "g=%d i=%d\n", g, i); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, line := range got {
		var g, i int
		if _, err := fmt.Sscanf(line, "g=%d i=%d", &g, &i); err != nil {
			t.Fatalf("a broken line %q: %v", line, err)
		}
		if i != next[g] {
			t.Fatalf("goroutine %d's line %d came where %d was due", g, i, next[g])
		}
		next[g]++
	}
	if len(got) != writers*lines {
		t.Errorf("%d lines, want %d", len(got), writers*lines)
	}
	// Written after Close, a line goes straight out, after the others.
	_, _ = w.Write([]byte("late\n"))
	if all := out.String(); !strings.HasSuffix(all, "\nlate\n") || strings.Count(all, "\n") != writers*lines+1 {
		t.Errorf("the late line is not the last of %d: %q", writers*lines+1, all[max(0, len(all)-40):])
	}
	_ = w.Close()
}

// TestLogWriterBatchesWhileWriting: the lines that come while the output
// is busy go out together in the next write, not one write each; an idle
// writer's line goes out within logGather.
func TestLogWriterBatchesWhileWriting(t *testing.T) {
	out := &lockedBuffer{gate: make(chan struct{})}
	w := newLogWriter(out)
	defer func() { _ = w.Close() }()
	_, _ = w.Write([]byte("first\n"))
	taken(t, w)
	// The first write is held at the gate; ten lines come meanwhile.
	for i := range 10 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	out.gate <- struct{}{} // the first write
	out.gate <- struct{}{} // the ten lines, in one write
	waitForLog(t, func() bool { return strings.Count(out.String(), "\n") == 11 })
	out.mu.Lock()
	writes := out.writes
	out.mu.Unlock()
	if writes != 2 {
		t.Errorf("%d writes for 11 lines, want 2", writes)
	}
	close(out.gate)
	_, _ = w.Write([]byte("alone\n"))
	waitForLog(t, func() bool { return strings.HasSuffix(out.String(), "alone\n") })
}

// TestLogWriterGathersLines: lines that come one by one to an idle writer
// wait for others (logGather, here an hour), and go out in one write once
// logFlushAt bytes wait; Close writes what waits without waiting longer.
func TestLogWriterGathersLines(t *testing.T) {
	out := &lockedBuffer{}
	w := startLogWriter(out, time.Hour)
	for i := range 20 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	time.Sleep(50 * time.Millisecond)
	if s := out.String(); s != "" {
		t.Fatalf("lines went out before logGather or logFlushAt: %q", s)
	}
	big := strings.Repeat("x", logFlushAt) + "\n"
	_, _ = w.Write([]byte(big))
	waitForLog(t, func() bool { return strings.HasSuffix(out.String(), big) })
	out.mu.Lock()
	writes := out.writes
	out.mu.Unlock()
	if writes != 1 {
		t.Errorf("%d writes for 21 lines, want 1", writes)
	}
	_, _ = w.Write([]byte("last\n"))
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for logGather")
	}
	if !strings.HasSuffix(out.String(), big+"last\n") {
		t.Errorf("the log ends %q", out.String()[max(0, len(out.String())-20):])
	}
}

// TestLogWriterBoundsWhatWaits: while the output is stuck, lines wait for
// room once maxLogBuffered bytes are waiting, rather than piling up.
func TestLogWriterBoundsWhatWaits(t *testing.T) {
	out := &lockedBuffer{gate: make(chan struct{})}
	w := newLogWriter(out)
	_, _ = w.Write([]byte("stuck\n")) // taken, and held at the gate
	taken(t, w)
	line := bytes.Repeat([]byte("x"), 64<<10)
	wrote := make(chan int, 100)
	go func() {
		for i := range 40 { // 2.5 MiB, more than the bound
			_, _ = w.Write(line)
			wrote <- i
		}
		close(wrote)
	}()
	time.Sleep(100 * time.Millisecond)
	w.mu.Lock()
	waiting := len(w.buf)
	w.mu.Unlock()
	if waiting > maxLogBuffered {
		t.Errorf("%d bytes waiting, more than %d", waiting, maxLogBuffered)
	}
	if len(wrote) >= 40 {
		t.Error("every line was taken while the output was stuck")
	}
	close(out.gate)
	for range wrote {
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(out.String()); n != 6+40*len(line) {
		t.Errorf("%d bytes written, want %d", n, 6+40*len(line))
	}
}

// taken waits until the writer's goroutine has taken every line waiting.
func taken(t *testing.T, w *logWriter) {
	t.Helper()
	waitForLog(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.buf) == 0 })
}

func waitForLog(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the log writer did not get there within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
