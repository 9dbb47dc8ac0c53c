package server_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// peakHeap samples the heap's live objects while f runs and returns the
// highest reading above the level before it.
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// manyMessages is a chat-completions body of n one-word messages.
func manyMessages(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"echo","messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `{"role":%q,"content":"w%d"}`, role, i%10)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// imageBody is a messages body with one image of n bytes.
func imageBody(n int) []byte {
	data := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, n/4))
	return []byte(`{"model":"echo","max_tokens":16,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` +
		data + `"}},{"type":"text","text":"what is it?"}]}]}`)
}

func echoGateway(b testing.TB, top string) *gateway {
	return startGateway(b, gwExtra{
		upstreams: "  - {name: e, dialect: echo}\n",
		models:    "  - {name: echo, upstream: e}\n",
		top:       top,
	})
}

// clientPost is a JSON POST with the client key where every dialect
// looks for it.
func clientPost(url string, body io.Reader) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, body)
	req.Header.Set("Authorization", "Bearer "+clientKey)
	req.Header.Set("x-api-key", clientKey)
	req.Header.Set("Content-Type", "application/json")
	return req
}

func postBody(t testing.TB, url, path string, body []byte) (int, []byte) {
	resp, err := http.DefaultClient.Do(clientPost(url+path, bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// BenchmarkPeakHeap reports the heap one request holds at its peak, per
// byte of its body (peak-x), for the two bodies that cost most per byte:
// 200,000 one-word messages, and one 20 MiB image.
func BenchmarkPeakHeap(b *testing.B) {
	g := echoGateway(b, "limits:\n  max_body_bytes: 67108864\n")
	for _, c := range []struct {
		name, path string
		body       []byte
	}{
		{"messages200k", "/v1/chat/completions", manyMessages(200000)},
		{"image20MiB", "/v1/messages", imageBody(20 << 20)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var worst uint64
			for b.Loop() {
				p := peakHeap(func() {
					if status, out := postBody(b, g.url, c.path, c.body); status != http.StatusOK {
						b.Fatalf("%d %.300s", status, out)
					}
				})
				worst = max(worst, p)
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-MiB")
			b.ReportMetric(float64(worst)/float64(len(c.body)), "peak-x")
			b.ReportMetric(float64(len(c.body))/(1<<20), "body-MiB")
		})
	}
}
