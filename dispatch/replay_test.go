package dispatch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// The tests in this file hold the HTTP backend to its handling of an
// upstream that answers a stream request with one whole JSON reply: the
// reply is replayed as a stream, once, and a reply that is not the
// dialect's is a protocol error, never retried.

// jsonUpstream answers every request with body, typed ctype, and counts
// the requests.
type jsonUpstream struct {
	url  string
	hits atomic.Int32
}

func newJSONUpstream(t *testing.T, ctype string, body []byte) *jsonUpstream {
	t.Helper()
	u := &jsonUpstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

// jsonDispatcher is a dispatcher from configuration with one upstream of
// the dialect at url, serving the model "m", with the default retries
// and no wait between them.
func jsonDispatcher(t *testing.T, dialect, url string) *Dispatcher {
	t.Helper()
	c := &config.Config{
		Upstreams: []config.Upstream{{Name: "up", Dialect: dialect, BaseURL: url, APIKey: "sk-upstream-key-0123456789"}},
		Models:    []config.Model{{Name: "m", Upstream: "up"}},
	}
	d, err := FromConfig(c, dialects.All(), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Backoff = func(int) time.Duration { return 0 }
	return d
}

func chatRequest(stream bool) *parleyv1.Request {
	return &parleyv1.Request{Model: "m", Stream: stream, Messages: []*parleyv1.Message{
		{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{translate.TextPart("Hello")}},
	}}
}

// chatUpstreams are the dialects with a chat upstream.
func chatUpstreams() []*translate.Dialect {
	var out []*translate.Dialect
	for _, d := range dialects.All() {
		if d.Upstream != nil {
			out = append(out, d)
		}
	}
	return out
}

func readFixture(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "testdata", "cross_table"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// collect ranges over a stream, accumulating its events, and returns the
// events and the error it ended with.
func collect(t *testing.T, seq func(func(*parleyv1.StreamEvent, error) bool)) ([]*parleyv1.StreamEvent, *translate.Accumulator, error) {
	t.Helper()
	var evs []*parleyv1.StreamEvent
	acc := translate.NewAccumulator()
	for ev, err := range seq {
		if err != nil {
			return evs, acc, err
		}
		evs = append(evs, ev)
		if err := acc.Add(ev); err != nil {
			t.Fatalf("event %d: %v", len(evs)-1, err)
		}
	}
	return evs, acc, nil
}

// TestStreamOfAWholeReply: an upstream that answers a stream request with
// its whole JSON reply gives the stream of that reply, after one request;
// every client dialect renders it; the call is not forwarded even when
// the request was.
func TestStreamOfAWholeReply(t *testing.T) {
	for _, scenario := range []string{"text", "tool", "reasoning", "image", "structured", "usage"} {
		for _, up := range chatUpstreams() {
			t.Run(scenario+"/"+up.Name(), func(t *testing.T) {
				reply := readFixture(t, scenario, up.Name(), "response.json")
				srv := newJSONUpstream(t, "application/json; charset=utf-8", reply)
				d := jsonDispatcher(t, up.Name(), srv.url)
				ctx := context.Background()

				whole, err := d.Generate(ctx, chatRequest(false), &Call{})
				if err != nil {
					t.Fatalf("whole: %v", err)
				}
				srv.hits.Store(0)

				// The client's own request, of the upstream's dialect: it
				// is forwarded as it came, where the dialect forwards it. A
				// dialect that clients do not speak gets another's.
				req := chatRequest(true)
				req.StreamUsage = proto.Bool(true)
				var call Call
				forwards := false
				if up.Client != nil {
					src := readFixture(t, scenario, up.Name(), "request.json")
					req, err = up.Client.DecodeRequest(&translate.Incoming{Model: "m", Stream: true, Body: src})
					if err != nil {
						t.Fatal(err)
					}
					req.Model, req.Stream, req.StreamUsage = "m", true, proto.Bool(true)
					call.Source = translate.Source{Dialect: up.Enum, Body: src}
					if f, ok := up.Upstream.(translate.Forwarder); ok {
						// Whether this request is one the dialect sends on
						// as it came.
						_, forwards, err = f.Forward(req, &call.Source, translate.Target{Model: "m"})
						if err != nil {
							t.Fatal(err)
						}
					}
				}
				sentForwarded := false
				call.Sent = func(string, []byte) { sentForwarded = call.Forwarded }
				evs, acc, err := collect(t, d.Stream(ctx, req, &call))
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				if n := srv.hits.Load(); n != 1 || call.Attempts != 1 || len(call.Failures) != 0 {
					t.Errorf("%d upstream requests, %d attempts, failures %v; want one", n, call.Attempts, call.Failures)
				}
				if sentForwarded != forwards {
					t.Errorf("the request was forwarded: %v; the dialect forwards: %v", sentForwarded, forwards)
				}
				if call.Forwarded || len(call.TakeFrames()) != 0 {
					t.Error("a replayed reply is marked forwarded: the client would get no events")
				}
				if !acc.Ended() {
					t.Fatal("the stream did not end")
				}
				// The same text, finish and usage as the whole reply.
				want := proto.CloneOf(whole)
				for _, c := range want.GetCandidates() {
					c.TokenCount, c.GroundingAttributions, c.Extensions = nil, nil, nil
				}
				if d := cmp.Diff(want, acc.Response(), protocmp.Transform()); d != "" {
					t.Errorf("the stream differs from the whole reply (-whole +stream):\n%s", d)
				}
				// Every client dialect renders the stream.
				for _, cd := range dialects.All() {
					if cd.Client == nil {
						continue
					}
					enc := cd.Client.NewStreamEncoder(chatRequest(true))
					var out strings.Builder
					w := sse.NewWriter(&out)
					for i, ev := range evs {
						if err := enc.Encode(w, ev); err != nil {
							t.Fatalf("the %s client's encoder refuses event %d (%v): %v", cd.Name(), i, ev, err)
						}
					}
					if out.Len() == 0 {
						t.Errorf("the %s client's encoder wrote nothing", cd.Name())
					}
				}
			})
		}
	}
}

// TestStreamOfAReplyThatIsNotTheDialects: a 2xx JSON reply that does not
// decode as the dialect's reply is the upstream's protocol error, given
// after one request, not an overload retried three times.
func TestStreamOfAReplyThatIsNotTheDialects(t *testing.T) {
	bodies := map[string]string{
		"an array":                  `[{"id":"x"}]`,
		"members of the wrong type": `{"id":7,"model":7,"responseId":7,"modelVersion":7}`,
		"not JSON after all":        `data: {"id":"x"}` + "\n\n",
	}
	for _, up := range chatUpstreams() {
		for name, body := range bodies {
			t.Run(up.Name()+"/"+name, func(t *testing.T) {
				srv := newJSONUpstream(t, "application/problem+json", []byte(body))
				d := jsonDispatcher(t, up.Name(), srv.url)
				var call Call
				evs, _, err := collect(t, d.Stream(context.Background(), chatRequest(true), &call))
				if len(evs) != 0 {
					t.Errorf("events before the error: %v", evs)
				}
				var ue *translate.UpstreamError
				if !errors.As(err, &ue) {
					t.Fatalf("error %v (%T), want an upstream protocol error", err, err)
				}
				e := ue.Proto()
				if e.GetHttpStatus() != http.StatusBadGateway || e.GetCode() != parleyv1.Code_CODE_UNKNOWN || e.GetRetry().GetRetryable() ||
					!strings.Contains(e.GetMessage(), "malformed reply") {
					t.Errorf("error %v, want a protocol error that is not retried", e)
				}
				if n := srv.hits.Load(); n != 1 || call.Attempts != 1 {
					t.Errorf("%d upstream requests, %d attempts; want one", n, call.Attempts)
				}
			})
		}
	}
}

// TestStreamOfAWholeReplyIsBounded: a whole reply is bounded as a
// reply to a whole request is.
func TestStreamOfAWholeReplyIsBounded(t *testing.T) {
	up := chatUpstreams()[0]
	srv := newJSONUpstream(t, "application/json", readFixture(t, "text", up.Name(), "response.json"))
	b, err := NewHTTPBackend("up", up.Upstream, srv.url, HTTPOptions{MaxReplyBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = collect(t, b.Stream(context.Background(), chatRequest(true), translate.Target{Model: "m"}, &Call{}))
	var ue *translate.UpstreamError
	if !errors.As(err, &ue) || ue.Proto().GetRetry().GetRetryable() || !strings.Contains(ue.Proto().GetMessage(), "larger than 64 bytes") {
		t.Errorf("error %v, want a protocol error for the size", err)
	}
}

// TestStreamOfAWholeReplyIsScrubbed: the upstream's text in a reply that
// does not decode, or in the error of one that does, loses the keys.
func TestStreamOfAWholeReplyIsScrubbed(t *testing.T) {
	const key = "sk-upstream-key-0123456789"
	cases := map[string]string{
		"responses":        `{"id":"resp_1","object":"response","status":"failed","model":"m","output":[],"error":{"code":"server_error","message":"bad key ` + key + `"}}`,
		"generate_content": `{"error":{"code":500,"message":"bad key ` + key + `","status":"INTERNAL"}}`,
	}
	for dialect, body := range cases {
		t.Run(dialect, func(t *testing.T) {
			srv := newJSONUpstream(t, "application/json", []byte(body))
			d := jsonDispatcher(t, dialect, srv.url)
			evs, _, err := collect(t, d.Stream(context.Background(), chatRequest(true), &Call{}))
			var texts []string
			for _, ev := range evs {
				if e := ev.GetError(); e != nil {
					texts = append(texts, e.GetMessage())
				}
			}
			if err != nil {
				texts = append(texts, err.Error())
			}
			all := strings.Join(texts, "\n")
			if !strings.Contains(all, "bad key") || strings.Contains(all, key) || strings.Contains(all, key[:12]) {
				t.Errorf("the upstream's error text is %q; want it there without the key", all)
			}
		})
	}
}

func TestWholeReply(t *testing.T) {
	for ctype, want := range map[string]bool{
		"application/json":                 true,
		"Application/JSON; charset=utf-8":  true,
		"application/problem+json":         true,
		"text/event-stream":                false,
		"text/event-stream; charset=utf-8": false,
		"application/x-ndjson":             false,
		"application/jsonl":                false,
		"":                                 false,
		"text/plain; charset=utf-8":        false,
	} {
		if got := wholeReply(mediaType(http.Header{"Content-Type": {ctype}})); got != want {
			t.Errorf("wholeReply(%q) = %v, want %v", ctype, got, want)
		}
	}
}
