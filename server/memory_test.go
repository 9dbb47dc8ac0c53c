package server_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Ten bodies of 200,000 messages at once against a budget that holds two:
// the gateway serves what fits, refuses the rest at once as overloaded
// with Retry-After (in the caller's dialect), and its heap stays within
// what two such requests take, not ten.
func TestBodyBudgetBoundsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("holds several hundred megabytes")
	}
	body := manyMessages(200000) // 6.4 MiB
	g := echoGateway(t, "limits:\n  max_body_bytes: 8388608\n  max_inflight_body_bytes: 16777216\n")
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		refusals []string
	)
	peak := peakHeap(func() {
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, g.url+"/v1/chat/completions", strings.NewReader(string(body)))
				req.Header.Set("Authorization", "Bearer "+clientKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				var b strings.Builder
				buf := make([]byte, 4096)
				n, _ := resp.Body.Read(buf)
				b.Write(buf[:n])
				_ = resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				if resp.StatusCode != http.StatusOK {
					refusals = append(refusals, resp.Header.Get("Retry-After")+" "+b.String())
				}
				mu.Unlock()
			})
		}
		wg.Wait()
	})
	if statuses[http.StatusOK] == 0 || statuses[http.StatusOK]+statuses[http.StatusServiceUnavailable] != 10 {
		t.Errorf("statuses %v: want some served and the rest refused with 503", statuses)
	}
	for _, r := range refusals {
		if !strings.HasPrefix(r, "1 ") || !strings.Contains(r, `"code":"service_unavailable"`) || !strings.Contains(r, "max_inflight_body_bytes") {
			t.Errorf("a refusal is not the dialect's overloaded error with Retry-After: %s", r)
		}
	}
	// Two requests' decoding (about 200 MiB each) and the test's own ten
	// bodies; ten requests at once would take 2 GiB.
	const bound = 600 << 20
	if peak > bound {
		t.Errorf("peak heap %d MiB, want at most %d MiB", peak>>20, bound>>20)
	}
	t.Logf("statuses %v, peak heap %d MiB", statuses, peak>>20)
}

// One request's peak heap is a bounded multiple of its body. The worst
// shape per byte is very many one-word messages: each becomes a canonical
// message, part and text of about 270 bytes against the 32 it took on the
// wire, so the canonical form alone is about 8x such a body; the bound
// leaves room for the body itself and for garbage not yet collected.
// Media cost little more than their decoded bytes.
func TestPeakHeapPerRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a hundred megabytes")
	}
	g := echoGateway(t, "limits:\n  max_body_bytes: 67108864\n")
	for _, c := range []struct {
		name, path string
		body       []byte
		bound      float64
	}{
		{"200,000 messages", "/v1/chat/completions", manyMessages(200000), 14},
		{"a 20 MiB image", "/v1/messages", imageBody(20 << 20), 5},
	} {
		peak := peakHeap(func() {
			if status, out := postBody(t, g.url, c.path, c.body); status != http.StatusOK {
				t.Fatalf("%s: %d %.300s", c.name, status, out)
			}
		})
		x := float64(peak) / float64(len(c.body))
		if x > c.bound {
			t.Errorf("%s: peak heap %.1fx the body, want at most %.0fx", c.name, x, c.bound)
		}
		t.Logf("%s: body %d KiB, peak heap %.1fx", c.name, len(c.body)>>10, x)
	}
}
