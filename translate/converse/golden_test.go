package converse_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/sse"
)

// The golden cases under testdata/converse. This dialect has no clients,
// so a case's request is a client's request of another dialect (case.json
// names it; messages when it does not), and its replies are only decoded.
// A case folder holds some of:
//
//   - request.json: what a client sent. Its canonical form is pinned in
//     request.canonical.json, the Converse request in request.upstream.json
//     (body) and request.upstream.http.json (method, path, headers,
//     dropped settings), or, for a request this dialect cannot carry, the
//     canonical error in request.error.json. With count.json (a
//     count-tokens reply), the count-tokens request is pinned in
//     count.upstream.json and the count in count.canonical.json.
//   - response.json: a /converse reply, decoded into response.canonical.json.
//   - stream.sse: a /converse-stream reply, one server-sent event per
//     event-stream message (type and payload); an event of type
//     "exception:<name>" stands for an exception message. It is framed as
//     the service frames it (eventstream.Encode), read back through
//     OpenFrames, and its canonical events pinned in stream.canonical.json.
//   - error.json (+ error.headers.json, status in case.json): an error
//     reply, decoded into error.canonical.json.
//
// Every decoded reply and stream must render for a client of every
// dialect, and every stream must keep the canonical order.

const (
	casesDir     = "../../testdata/converse"
	caseModel    = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	caseUpstream = "bedrock"
	// caseKey must not reach the request: the transport signs it.
	caseKey = "key-that-must-not-appear"
)

var target = translate.Target{Upstream: caseUpstream, Model: caseModel, APIKey: caseKey}

func TestGolden(t *testing.T) {
	for _, c := range golden.Cases(t, casesDir) {
		t.Run(c.Name, func(t *testing.T) {
			meta := c.Meta(t)
			ran := false
			if c.Exists("request.json") {
				ran = true
				checkRequest(t, c, meta)
			}
			if c.Exists("response.json") {
				ran = true
				checkResponse(t, c)
			}
			if c.Exists("stream.sse") {
				ran = true
				checkStream(t, c)
			}
			if c.Exists("error.json") {
				ran = true
				checkError(t, c, meta)
			}
			if !ran {
				t.Fatal("the case has no wire file")
			}
		})
	}
}

// clientRequest decodes a case's request.json as its client sent it.
func clientRequest(t *testing.T, c golden.Case, meta golden.Meta) *parleyv1.Request {
	t.Helper()
	from := dialecttest.Named(cmp.Or(meta.Client, "messages"))
	if from == nil {
		t.Fatalf("case.json: unknown client dialect %q", meta.Client)
	}
	req, err := from.Client.DecodeRequest(from.Incoming(c.Headers(t), from.Model, c.Read(t, "request.json")))
	if err != nil {
		t.Fatalf("decode the client's request: %v", err)
	}
	return req
}

// upstreamHTTP is the pinned shape of the HTTP request, apart from its body.
type upstreamHTTP struct {
	Method  string      `json:"method"`
	Path    string      `json:"path"`
	Header  http.Header `json:"header"`
	Stream  bool        `json:"stream,omitempty"`
	Dropped []string    `json:"dropped,omitempty"`
}

func checkRequest(t *testing.T, c golden.Case, meta golden.Meta) {
	req := clientRequest(t, c, meta)
	golden.Proto(t, c.Path("request.canonical.json"), req)
	out, err := converse.Upstream{}.EncodeRequest(req, target)
	if err != nil {
		var uns *translate.UnsupportedError
		if !errors.As(err, &uns) {
			t.Fatalf("encode request: %v (not an UnsupportedError)", err)
		}
		if !c.Exists("request.error.json") {
			t.Fatalf("encode request: %v", err)
		}
		golden.Proto(t, c.Path("request.error.json"), translate.ToProto(err))
		return
	}
	if c.Exists("request.error.json") {
		t.Fatal("the request was encoded, but the case expects an error")
	}
	golden.JSON(t, c.Path("request.upstream.json"), out.Body)
	pin, _ := json.Marshal(upstreamHTTP{Method: out.Method, Path: out.Path, Header: out.Header, Stream: out.Stream, Dropped: out.Dropped})
	golden.JSON(t, c.Path("request.upstream.http.json"), pin)
	noKey(t, out)
	sdkcheck.ConverseRequest(t, out.Path, out.Body, out.Stream)

	if c.Exists("count.json") {
		co, err := converse.Upstream{}.EncodeCountRequest(req, target)
		if err != nil {
			t.Fatalf("encode count request: %v", err)
		}
		noKey(t, co)
		if want := strings.TrimSuffix(out.Path, "/converse") + "/count-tokens"; co.Path != want || co.Method != http.MethodPost {
			t.Errorf("count request %s %s, want POST %s", co.Method, co.Path, want)
		}
		golden.JSON(t, c.Path("count.upstream.json"), co.Body)
		sdkcheck.ConverseCountRequest(t, co.Path, co.Body)
		n, err := converse.Upstream{}.DecodeCount(c.Read(t, "count.json"))
		if err != nil {
			t.Fatalf("decode count: %v", err)
		}
		golden.Proto(t, c.Path("count.canonical.json"), n)
	}
}

// noKey checks that the target's key is nowhere in a request: the
// transport signs it.
func noKey(t *testing.T, out *translate.Outgoing) {
	t.Helper()
	if bytes.Contains(out.Body, []byte(caseKey)) {
		t.Error("the key is in the body")
	}
	for k, vs := range out.Header {
		for _, v := range vs {
			if strings.Contains(v, caseKey) || strings.EqualFold(k, "Authorization") {
				t.Errorf("header %s carries a credential", k)
			}
		}
	}
}

func checkResponse(t *testing.T, c golden.Case) {
	resp, err := converse.Upstream{}.DecodeResponse(target, c.Read(t, "response.json"))
	if err != nil {
		t.Fatalf("decode response: %v", err)
	}
	golden.Proto(t, c.Path("response.canonical.json"), resp)
	// A client of every dialect is given it, and its official SDK reads it.
	for _, s := range dialecttest.All {
		out, err := s.Client.EncodeResponse(s.ClientRequest, resp)
		if err != nil {
			t.Fatalf("a %s client cannot be given the response: %v", s.Name(), err)
		}
		s.SDKReply(t, out)
	}
}

// frame frames a case's stream as the service does: each event as an
// event-stream message of its type, "exception:<name>" as an exception.
func frame(t testing.TB, stream []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	r := sse.NewReader(bytes.NewReader(stream), 0)
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out.Bytes()
		}
		if err != nil {
			t.Fatalf("stream.sse: %v", err)
		}
		if name, ok := strings.CutPrefix(ev.Type, "exception:"); ok {
			var m struct{ Message string }
			if err := json.Unmarshal(ev.Data, &m); err != nil {
				t.Fatal(err)
			}
			err = eventstream.EncodeException(&out, name, m.Message)
		} else {
			err = eventstream.Encode(&out, ev.Type, ev.Data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// decodeFramed decodes an event-stream body as the gateway does, the
// error that ends it as a last error event; it checks the order of the
// canonical stream on the way and returns what it accumulates to.
func decodeFramed(t testing.TB, body []byte) ([]*parleyv1.StreamEvent, *parleyv1.Response) {
	t.Helper()
	var (
		events []*parleyv1.StreamEvent
		check  translate.StreamChecker
	)
	acc := translate.NewAccumulator()
	for ev, err := range translate.DecodeFramed(parleyv1.Dialect_DIALECT_CONVERSE, bytes.NewReader(body), converse.OpenFrames,
		converse.Upstream{}.NewStreamDecoder(target), translate.StreamLimits{}, nil, nil) {
		if err != nil {
			ev = &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: translate.ToProto(err)}}
		}
		if err := check.Check(ev); err != nil {
			t.Fatalf("the decoded stream is out of order: %v", err)
		}
		if ev.GetError() == nil {
			if err := acc.Add(ev); err != nil {
				t.Fatalf("the accumulator refuses the stream: %v", err)
			}
		}
		events = append(events, ev)
	}
	if !check.Ended() {
		t.Fatal("the stream did not end")
	}
	return events, acc.Response()
}

func checkStream(t *testing.T, c golden.Case) {
	in := c.Read(t, "stream.sse")
	events, acc := decodeFramed(t, frame(t, in))
	golden.Messages(t, c.Path("stream.canonical.json"), events)

	// The decoder does not depend on the framing: the same events as
	// server-sent events decode the same (but for the exception, which
	// only the framing knows).
	if last := events[len(events)-1]; last.GetError() == nil {
		text, err := decodeText(string(in))
		if err != nil {
			t.Fatal(err)
		}
		golden.Messages(t, c.Path("stream.canonical.json"), text)
	}

	// A client of every dialect is given the stream, and its official
	// SDK reads it as it reads the whole reply of the same response, or
	// as the error the client's dialect makes of the one that ended it.
	// The service names no response; the gateway names it with its
	// request id, the test with a fixed one.
	if r := events[0].GetStart().GetResponse(); r != nil {
		r.Id, acc.Id = "resp_converse_test", "resp_converse_test"
	}
	for _, s := range dialecttest.All {
		req := s.ClientRequest
		out := dialecttest.EncodeStream(t, s.Client, req, events)
		if e := events[len(events)-1].GetError(); e != nil {
			status, body := s.Client.EncodeError(e)
			var b struct{ Error struct{ Type, Status string } }
			_ = json.Unmarshal(body, &b)
			s.SDKStreamError(t, out, status, cmp.Or(b.Error.Type, b.Error.Status), e.GetMessage())
			continue
		}
		whole, err := s.Client.EncodeResponse(req, acc)
		if err != nil {
			t.Fatal(err)
		}
		s.SDKStream(t, out, whole)
	}
}

func checkError(t *testing.T, c golden.Case, meta golden.Meta) {
	if meta.Status == 0 {
		t.Fatal("an error case needs the status in case.json")
	}
	h := http.Header{}
	if c.Exists("error.headers.json") {
		var m map[string][]string
		if err := json.Unmarshal(c.Read(t, "error.headers.json"), &m); err != nil {
			t.Fatal(err)
		}
		for k, vs := range m {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
	}
	e := converse.Upstream{}.DecodeError(meta.Status, h, c.Read(t, "error.json"))
	golden.Proto(t, c.Path("error.canonical.json"), e)
	if int(e.GetHttpStatus()) != meta.Status {
		t.Errorf("status %d, want the upstream's %d", e.GetHttpStatus(), meta.Status)
	}
}
