package server_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/songgen"
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

// Connect and gRPC calls count against the same budget of bodies held at
// once: with one large call in flight, a second is refused as unavailable
// with the wait advised, and the first still completes.
func TestConnectBodyBudget(t *testing.T) {
	g := startGateway(t, gwExtra{top: "limits:\n  max_body_bytes: 6291456\n  max_inflight_body_bytes: 8388608\n"})
	big := func() *connect.Request[parleyv1.GenerateRequest] {
		req := canonicalRequest(t, "text", "via-chat_completions")
		req.Messages[len(req.Messages)-1].Parts = []*parleyv1.Part{translate.TextPart(strings.Repeat("word ", 1<<20))} // 5 MiB
		return connect.NewRequest(&parleyv1.GenerateRequest{Request: req})
	}
	for _, protocol := range []string{"connect", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			arrived, release := make(chan struct{}), make(chan struct{})
			g.fakes["chat_completions"].set("text", func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					close(arrived)
					<-release
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(fixture(t, "text", "chat_completions", "response.json"))
			})
			c := newRPC(t, g.url, clientKey, protocol)
			first := make(chan error, 1)
			go func() {
				_, err := c.gen.Generate(t.Context(), big())
				first <- err
			}()
			<-arrived
			_, err := c.gen.Generate(t.Context(), big())
			if connect.CodeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), "max_inflight_body_bytes") {
				t.Errorf("a second large call while one is held: %v, want unavailable naming the limit", err)
			}
			var ce *connect.Error
			if errors.As(err, &ce) && ce.Meta().Get("Retry-After") != "1" {
				t.Errorf("the refusal advises Retry-After %q, want 1", ce.Meta().Get("Retry-After"))
			}
			close(release)
			if err := <-first; err != nil {
				t.Errorf("the call held first: %v", err)
			}
			// What the first held is given back: the next call is served.
			if _, err := c.gen.Generate(t.Context(), big()); err != nil {
				t.Errorf("a call after the first ended: %v", err)
			}
		})
	}
}

// Music task bodies count against the budget of bodies held at once too:
// while a chat body that declared most of the budget is still arriving, a
// large submit is refused as overloaded with Retry-After, and once it is
// gone the same submit is served.
func TestMusicBodyBudget(t *testing.T) {
	const limit = 1 << 20
	g := startMusic(t, musicOpts{maxBody: limit})
	slow, err := net.Dial("tcp", strings.TrimPrefix(g.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(slow, "POST /v1/chat/completions HTTP/1.1\r\nHost: parley\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"model\":", aliceKey, limit-1000)
	submit := `{"ai_description_prompt":"` + strings.Repeat("la ", 100000) + `"}` // 300 KB
	deadline := time.Now().Add(10 * time.Second)
	var r reply
	for {
		// The slow body's share is taken once its headers are read.
		if r = g.call(t, http.MethodPost, songgen.PathMusic, aliceKey, submit); r.Status != http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" || !strings.Contains(r.Message, "max_inflight_body_bytes") {
		t.Errorf("a submit while the budget is held: %d %s %q (Retry-After %q)", r.Status, r.Code, r.Message, r.Header.Get("Retry-After"))
	}
	_ = slow.Close()
	deadline = time.Now().Add(10 * time.Second)
	for r = g.call(t, http.MethodPost, songgen.PathMusic, aliceKey, submit); r.Status != http.StatusOK && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		r = g.call(t, http.MethodPost, songgen.PathMusic, aliceKey, submit)
	}
	if r.Status != http.StatusOK {
		t.Errorf("a submit once the budget is free: %d %s %q", r.Status, r.Code, r.Message)
	}
}
