// Package cross_test pins translations between dialects: a client of one
// dialect served by an upstream of another. Each case under
// testdata/cross names the two dialects in case.json and holds some of:
//
//   - request.json (+ request.headers.json): what the client sent. The
//     request the upstream gets is pinned in request.upstream.json (body)
//     and request.upstream.http.json (method, path, query, headers), and
//     the upstream's official SDK must hold it in its request types. A
//     request the upstream cannot honour is pinned instead as the client's
//     error reply in request.error.json, which the client's SDK must read.
//   - response.json / stream.sse / error.json: what the upstream answered,
//     in its dialect. What the client gets is pinned in
//     response.client.json, stream.client.sse and error.client.json, and
//     the client's official SDK must read it: a stream through the SDK's
//     own reader and accumulator, agreeing with the whole reply built from
//     the same canonical response.
package cross_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/sse"
)

const casesDir = "../../testdata/cross"

// TestCross runs every case under testdata/cross as the package comment
// describes. Among them, an upstream's error, whole or inside a stream,
// reaches the client in its own dialect's shape with the upstream's status
// and type, read by the client's official SDK; and PDF documents from a
// messages client reach a content-generation upstream rather than being
// dropped (guide §8 items 9 and 10).
func TestCross(t *testing.T) {
	for _, c := range golden.Cases(t, casesDir) {
		t.Run(c.Name, func(t *testing.T) {
			meta := c.Meta(t)
			from := dialecttest.Named(meta.Client)
			if from == nil {
				t.Fatalf("case.json: unknown client dialect %q", meta.Client)
			}
			to := dialecttest.Named(meta.Upstream)
			if to == nil || meta.Upstream == meta.Client {
				t.Fatalf("case.json: upstream dialect %q is not another known dialect", meta.Upstream)
			}
			if len(meta.Rules) == 0 {
				t.Fatal("case.json: a cross-dialect case names the rules it pins")
			}
			req := &parleyv1.Request{Model: to.Model}
			ran := false
			if c.Exists("request.json") {
				ran = true
				req = checkRequest(t, c, from, to)
			}
			target := translate.Target{Model: to.Model}
			if c.Exists("response.json") {
				ran = true
				checkResponse(t, c, req, from, to, target)
			}
			if c.Exists("stream.sse") {
				ran = true
				checkStream(t, c, req, from, to, target)
			}
			if c.Exists("error.json") {
				ran = true
				checkError(t, c, meta, from, to)
			}
			if !ran {
				t.Fatal("the case has no wire file")
			}
		})
	}
}

// upstreamHTTP is the pinned shape of the HTTP request toward the
// upstream, apart from its body.
type upstreamHTTP struct {
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Query  url.Values  `json:"query,omitempty"`
	Header http.Header `json:"header"`
	// Dropped is what the upstream's dialect cannot carry.
	Dropped []string `json:"dropped,omitempty"`
}

// errorReply is a pinned error reply: its status and body.
type errorReply struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

func checkRequest(t *testing.T, c golden.Case, from, to *dialecttest.Spec) *parleyv1.Request {
	req, err := from.Client.DecodeRequest(from.Incoming(c.Headers(t), from.Model, c.Read(t, "request.json")))
	if err != nil {
		t.Fatalf("decode request: %v", err)
	}
	out, err := to.Upstream.EncodeRequest(req, translate.Target{Model: to.Model, APIKey: "sk-test"})
	if err != nil {
		if !c.Exists("request.error.json") {
			t.Fatalf("encode request: %v", err)
		}
		e := translate.ToProto(err)
		status, body := from.Client.EncodeError(e)
		pin, _ := json.Marshal(errorReply{Status: status, Body: body})
		golden.JSON(t, c.Path("request.error.json"), pin)
		from.SDKError(t, status, body, "", e.GetMessage())
		return req
	}
	if c.Exists("request.error.json") {
		t.Fatalf("the request was sent upstream, but the case expects an error")
	}
	golden.JSON(t, c.Path("request.upstream.json"), out.Body)
	h := out.Header.Clone()
	h.Del("Content-Type")
	pin, _ := json.Marshal(upstreamHTTP{Method: out.Method, Path: out.Path, Query: out.Query, Header: h, Dropped: out.Dropped})
	golden.JSON(t, c.Path("request.upstream.http.json"), pin)
	to.SDKRequest(t, out.Body)
	return req
}

func checkResponse(t *testing.T, c golden.Case, req *parleyv1.Request, from, to *dialecttest.Spec, target translate.Target) {
	resp, err := to.Upstream.DecodeResponse(target, c.Read(t, "response.json"))
	if err != nil {
		t.Fatalf("decode response: %v", err)
	}
	stampID(resp)
	out, err := from.Client.EncodeResponse(req, resp)
	if err != nil {
		t.Fatalf("encode response: %v", err)
	}
	golden.JSON(t, c.Path("response.client.json"), out)
	from.SDKReply(t, out)
}

func checkStream(t *testing.T, c golden.Case, req *parleyv1.Request, from, to *dialecttest.Spec, target translate.Target) {
	acc := translate.NewAccumulator()
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := from.Client.NewStreamEncoder(req)
	var last *parleyv1.StreamEvent
	for ev, err := range translate.DecodeStream(to.Upstream.Dialect(), bytes.NewReader(c.Read(t, "stream.sse")), to.Upstream.NewStreamDecoder(target), translate.StreamLimits{}) {
		if err != nil {
			t.Fatalf("decode stream: %v", err)
		}
		stampID(ev.GetStart().GetResponse())
		if err := acc.Add(ev); err != nil {
			t.Fatalf("the decoded stream is out of order: %v", err)
		}
		if err := enc.Encode(w, ev); err != nil {
			t.Fatalf("encode stream event %s: %v", protojson.Format(ev), err)
		}
		last = ev
	}
	golden.SSE(t, c.Path("stream.client.sse"), buf.Bytes())
	if e := last.GetError(); e != nil {
		// The client's SDK must see the error the client's dialect
		// makes of it, as a whole error reply would carry it.
		status, body := from.Client.EncodeError(e)
		from.SDKStreamError(t, buf.Bytes(), status, replyReason(body), e.GetMessage())
		return
	}
	whole, err := from.Client.EncodeResponse(req, acc.Response())
	if err != nil {
		t.Fatal(err)
	}
	from.SDKStream(t, buf.Bytes(), whole)
}

func checkError(t *testing.T, c golden.Case, meta golden.Meta, from, to *dialecttest.Spec) {
	if meta.Status == 0 {
		t.Fatal("an error case needs the upstream's status in case.json")
	}
	e := to.Upstream.DecodeError(meta.Status, http.Header{}, c.Read(t, "error.json"))
	status, body := from.Client.EncodeError(e)
	pin, _ := json.Marshal(errorReply{Status: status, Body: body})
	golden.JSON(t, c.Path("error.client.json"), pin)
	from.SDKError(t, status, body, "", e.GetMessage())
}

// replyReason is the reason an error reply of a client's dialect gives:
// its error's type (messages, and the OpenAI dialects, whose SDK checks
// do not ask for it), or its status name (content generation).
func replyReason(body []byte) string {
	var b struct{ Error struct{ Type, Status string } }
	_ = json.Unmarshal(body, &b)
	return cmp.Or(b.Error.Type, b.Error.Status)
}

// stampID names a response its upstream left unnamed, as the gateway does
// with its request id, so that what a client gets is the same on every run.
func stampID(resp *parleyv1.Response) {
	if resp != nil && resp.GetId() == "" {
		resp.Id = "resp_cross_test"
	}
}

// TestFinishReasonsAcrossDialects pins how every finish reason of one
// dialect reaches a client of the other, for a text turn and for a turn
// that ends in a tool call: a content-generation call turn that ends with
// a plain STOP reaches a messages client as tool_use (guide §8 item 1).
func TestFinishReasonsAcrossDialects(t *testing.T) {
	target := translate.Target{Model: "m"}
	gcToMessages := map[string][2]string{ // finishReason: stop_reason for text, for a call
		"STOP":                    {"end_turn", "tool_use"},
		"MAX_TOKENS":              {"max_tokens", "max_tokens"},
		"SAFETY":                  {"refusal", "refusal"},
		"RECITATION":              {"refusal", "refusal"},
		"LANGUAGE":                {"end_turn", "end_turn"},
		"OTHER":                   {"end_turn", "tool_use"},
		"BLOCKLIST":               {"refusal", "refusal"},
		"PROHIBITED_CONTENT":      {"refusal", "refusal"},
		"SPII":                    {"refusal", "refusal"},
		"MALFORMED_FUNCTION_CALL": {"end_turn", "end_turn"},
		"IMAGE_SAFETY":            {"refusal", "refusal"},
		"UNEXPECTED_TOOL_CALL":    {"end_turn", "end_turn"},
		"TOO_MANY_TOOL_CALLS":     {"end_turn", "end_turn"},
		"A_WORD_FROM_LATER":       {"end_turn", "tool_use"},
	}
	for word, want := range gcToMessages {
		for i, part := range []string{`{"text":"Hi"}`, `{"functionCall":{"name":"f","args":{}}}`} {
			body := `{"candidates":[{"content":{"role":"model","parts":[` + part + `]},"finishReason":"` + word + `","index":0}],"responseId":"r"}`
			resp, err := generatecontent.Upstream{}.DecodeResponse(target, []byte(body))
			if err != nil {
				t.Fatalf("%s: %v", word, err)
			}
			out, err := messages.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
			if err != nil {
				t.Fatal(err)
			}
			m := sdkcheck.MessagesReply(t, out)
			if string(m.StopReason) != want[i] {
				t.Errorf("finishReason %s (%s) reaches a messages client as %q, want %q", word, part, m.StopReason, want[i])
			}
		}
	}

	messagesToGC := map[string]string{
		"end_turn":                      "STOP",
		"stop_sequence":                 "STOP",
		"tool_use":                      "STOP",
		"max_tokens":                    "MAX_TOKENS",
		"pause_turn":                    "MAX_TOKENS",
		"refusal":                       "SAFETY",
		"model_context_window_exceeded": "MAX_TOKENS",
	}
	for reason, want := range messagesToGC {
		content := `[{"type":"text","text":"Hi"}]`
		if reason == "tool_use" {
			content = `[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]`
		}
		body := `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":` + content + `,"stop_reason":"` + reason + `","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
		resp, err := messages.Upstream{}.DecodeResponse(target, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", reason, err)
		}
		out, err := generatecontent.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
		if err != nil {
			t.Fatal(err)
		}
		r := sdkcheck.GenerateContentReply(t, out)
		if got := string(r.Candidates[0].FinishReason); got != want {
			t.Errorf("stop_reason %s reaches a content-generation client as %q, want %q", reason, got, want)
		}
	}
}
