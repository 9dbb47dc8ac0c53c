package cross_test

import (
	"bytes"
	"encoding/json"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/sse"
)

// TestTable crosses every pair of the four dialects (a client of A served
// by an upstream of B) on each scenario under testdata/cross_table: text,
// a tool round trip, reasoning, an image, structured output, usage with
// cached tokens, and an error. Each scenario holds, per dialect, the
// client request, the upstream's whole reply, its stream and its error, in
// that dialect's wire form.
//
// For each pair: A's request goes to B (B's SDK must hold it, and B's own
// decoder must find the scenario's content in it); B's reply and stream go
// to A (A's SDK must read them, the stream through its accumulator, and
// A's own decoder must find the scenario's answer in them); B's error
// reaches A with its status, in A's shape, read by A's SDK
// (guide §8 item 9).
func TestTable(t *testing.T) {
	root := "../../testdata/cross_table"
	scenarios, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) < 7 {
		t.Fatalf("%d scenarios, want 7", len(scenarios))
	}
	for _, sc := range scenarios {
		for _, a := range dialecttest.All {
			for _, b := range dialecttest.All {
				if a == b {
					continue
				}
				t.Run(sc.Name()+"/"+a.Name()+"_to_"+b.Name(), func(t *testing.T) {
					c := tableCase{t: t, scenario: sc.Name(), dir: filepath.Join(root, sc.Name()), a: a, b: chatUpstream(b), aName: a.Name(), bName: b.Name()}
					c.run()
				})
			}
		}
	}
}

type tableCase struct {
	t            *testing.T
	scenario     string
	dir          string
	a            *dialecttest.Spec
	b            *upstreamSide
	aName, bName string
}

// upstreamSide is what the table needs of the upstream's dialect: its
// codec and model, its SDK's check of a request, a reader of the request
// Parley made back into the canonical model (its own client decoder,
// where it has clients), the headers its errors come with, and the
// decoder of its recorded stream.
type upstreamSide struct {
	Upstream    translate.Upstream
	Model       string
	SDKRequest  func(t testing.TB, out *translate.Outgoing)
	ReadRequest func(t testing.TB, out *translate.Outgoing) (*parleyv1.Request, error)
	ErrorHeader http.Header
	Stream      func(t testing.TB, recorded []byte, dec translate.StreamDecoder) iter.Seq2[*parleyv1.StreamEvent, error]
}

// chatUpstream is the upstream side of a dialect that clients speak too.
func chatUpstream(s *dialecttest.Spec) *upstreamSide {
	return &upstreamSide{
		Upstream:   s.Upstream,
		Model:      s.Model,
		SDKRequest: func(t testing.TB, out *translate.Outgoing) { s.SDKRequest(t, out.Body) },
		ReadRequest: func(_ testing.TB, out *translate.Outgoing) (*parleyv1.Request, error) {
			return s.Client.DecodeRequest(incoming(s, out.Body))
		},
		Stream: func(_ testing.TB, recorded []byte, dec translate.StreamDecoder) iter.Seq2[*parleyv1.StreamEvent, error] {
			return translate.DecodeStream(s.Upstream.Dialect(), bytes.NewReader(recorded), dec, translate.StreamLimits{})
		},
	}
}

func (c *tableCase) read(d, name string) []byte {
	c.t.Helper()
	body, err := os.ReadFile(filepath.Join(c.dir, d, name))
	if err != nil {
		c.t.Fatal(err)
	}
	return body
}

func incoming(d *dialecttest.Spec, body []byte) *translate.Incoming {
	return d.Incoming(http.Header{}, d.Model, body)
}

func (c *tableCase) run() {
	t := c.t
	req, err := c.a.Client.DecodeRequest(incoming(c.a, c.read(c.aName, "request.json")))
	if err != nil {
		t.Fatalf("decode %s request: %v", c.aName, err)
	}
	target := translate.Target{Model: c.b.Model, APIKey: "sk-test", Upstream: "up-" + c.bName}
	out, err := c.b.Upstream.EncodeRequest(req, target)
	if err != nil {
		t.Fatalf("encode %s request: %v", c.bName, err)
	}
	c.b.SDKRequest(t, out)
	seen, err := c.b.ReadRequest(t, out)
	if err != nil {
		t.Fatalf("the %s request Parley made does not decode as %s: %v", c.bName, c.bName, err)
	}
	c.checkRequest(seen)

	if c.scenario == "errors" {
		h := c.b.ErrorHeader.Clone()
		if h == nil {
			h = http.Header{}
		}
		h.Set("Retry-After", "7")
		e := c.b.Upstream.DecodeError(http.StatusTooManyRequests, h, c.read(c.bName, "error.json"))
		status, body := c.a.Client.EncodeError(e)
		if status != http.StatusTooManyRequests {
			t.Errorf("the client got status %d, want 429", status)
		}
		if !e.GetRetry().GetRetryable() || e.GetRetry().GetRetryAfter().AsDuration().Seconds() != 7 {
			t.Errorf("retry advice = %v", e.GetRetry())
		}
		c.a.SDKError(t, status, body, "", e.GetMessage())
		return
	}

	resp, err := c.b.Upstream.DecodeResponse(target, c.read(c.bName, "response.json"))
	if err != nil {
		t.Fatalf("decode %s reply: %v", c.bName, err)
	}
	stampID(resp)
	whole, err := c.a.Client.EncodeResponse(req, resp)
	if err != nil {
		t.Fatalf("encode %s reply: %v", c.aName, err)
	}
	c.a.SDKReply(t, whole)
	got, err := c.a.Upstream.DecodeResponse(translate.Target{}, whole)
	if err != nil {
		t.Fatalf("the %s reply Parley made does not decode as %s: %v", c.aName, c.aName, err)
	}
	c.checkAnswer("reply", got)

	// The stream answers the same request sent with streaming on, usage
	// asked for where the dialect makes that optional.
	streamReq := proto.CloneOf(req)
	streamReq.Stream, streamReq.StreamUsage = true, new(true)
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := c.a.Client.NewStreamEncoder(streamReq)
	acc := translate.NewAccumulator()
	for ev, err := range c.b.Stream(t, c.read(c.bName, "stream.sse"), c.b.Upstream.NewStreamDecoder(target)) {
		if err != nil {
			t.Fatalf("decode %s stream: %v", c.bName, err)
		}
		stampID(ev.GetStart().GetResponse())
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(w, ev); err != nil {
			t.Fatalf("encode %s stream: %v", c.aName, err)
		}
	}
	streamWhole, err := c.a.Client.EncodeResponse(streamReq, acc.Response())
	if err != nil {
		t.Fatal(err)
	}
	c.a.SDKStream(t, buf.Bytes(), streamWhole)
	back := translate.NewAccumulator()
	for ev, err := range translate.DecodeStream(c.a.Upstream.Dialect(), bytes.NewReader(buf.Bytes()), c.a.Upstream.NewStreamDecoder(translate.Target{}), translate.StreamLimits{}) {
		if err != nil {
			t.Fatalf("the %s stream Parley made does not decode as %s: %v", c.aName, c.aName, err)
		}
		if err := back.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	c.checkAnswer("stream", back.Response())
}

// texts returns the text of every text part of the turns (and the
// instructions) of a request.
func texts(req *parleyv1.Request) string {
	var b strings.Builder
	for _, p := range req.GetInstructions() {
		b.WriteString(p.GetText().GetText() + "|")
	}
	for _, m := range req.GetMessages() {
		for _, p := range m.GetParts() {
			b.WriteString(p.GetText().GetText() + "|")
			for _, r := range p.GetToolResult().GetContent() {
				b.WriteString(r.GetText().GetText() + "|")
			}
		}
	}
	return b.String()
}

func (c *tableCase) checkRequest(req *parleyv1.Request) {
	t := c.t
	all := texts(req)
	switch c.scenario {
	case "text", "usage", "errors":
		if !strings.Contains(all, "Be brief.") || !strings.Contains(all, "Say hello.") {
			t.Errorf("the upstream request lost the system prompt or the question: %q", all)
		}
	case "tool":
		var call *parleyv1.ToolCall
		var result *parleyv1.ToolResult
		for _, m := range req.GetMessages() {
			for _, p := range m.GetParts() {
				if p.GetToolCall() != nil {
					call = p.GetToolCall()
				}
				if p.GetToolResult() != nil {
					result = p.GetToolResult()
				}
			}
		}
		if len(req.GetTools()) != 1 || req.GetTools()[0].GetFunction().GetName() != "get_weather" {
			t.Errorf("the upstream request's tools = %v", req.GetTools())
		}
		if call == nil || call.GetName() != "get_weather" || !sameJSON(call.GetArguments(), `{"city":"Paris"}`) {
			t.Fatalf("the upstream request's call = %v", call)
		}
		if result == nil || !strings.Contains(all, "18C") {
			t.Fatalf("the upstream request lost the tool result: %q", all)
		}
		if call.GetId() != "" && result.GetCallId() != "" && call.GetId() != result.GetCallId() {
			t.Errorf("the result answers %q, the call is %q", result.GetCallId(), call.GetId())
		}
	case "reasoning":
		rc := req.GetReasoning()
		if rc == nil || rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_DISABLED || rc.GetEffort() == parleyv1.ReasoningEffort_REASONING_EFFORT_NONE ||
			rc.BudgetTokens == nil && rc.GetEffort() == parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED && rc.GetMode() != parleyv1.ReasoningMode_REASONING_MODE_ENABLED {
			t.Errorf("the upstream request does not ask for reasoning: %v", rc)
		}
	case "image":
		found := false
		for _, m := range req.GetMessages() {
			for _, p := range m.GetParts() {
				if md := p.GetMedia(); md != nil && md.GetMimeType() == "image/png" && len(md.GetData()) == 33 {
					found = true
				}
			}
		}
		if !found {
			t.Error("the upstream request lost the image bytes")
		}
	case "structured":
		rf := req.GetResponseFormat()
		if rf.GetKind() != parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA || !strings.Contains(rf.GetSchema(), "city_name") {
			t.Errorf("the upstream request's answer format = %v", rf)
		}
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// checkAnswer checks what the client's own decoder reads in the reply or
// stream Parley rendered for it.
func (c *tableCase) checkAnswer(what string, resp *parleyv1.Response) {
	t := c.t
	if len(resp.GetCandidates()) == 0 {
		t.Fatalf("%s: no candidate", what)
	}
	cand := resp.GetCandidates()[0]
	var text, reasoning strings.Builder
	var call *parleyv1.ToolCall
	for _, p := range cand.GetParts() {
		text.WriteString(p.GetText().GetText())
		if r := p.GetReasoning(); r != nil {
			reasoning.WriteString(r.GetText() + strings.Join(r.GetSummary(), ""))
		}
		if p.GetToolCall() != nil {
			call = p.GetToolCall()
		}
	}
	want := map[string]string{"text": "Hello there!", "usage": "Hello there!", "image": "A single red pixel.", "structured": `{"city_name":"Paris"}`, "reasoning": "4"}[c.scenario]
	if c.scenario != "tool" && text.String() != want {
		t.Errorf("%s: text %q, want %q", what, text.String(), want)
	}
	switch c.scenario {
	case "tool":
		if call == nil || call.GetName() != "get_weather" || !sameJSON(call.GetArguments(), `{"city":"Paris"}`) {
			t.Errorf("%s: call = %v", what, call)
		}
		// A content-generation turn with calls ends STOP: its clients
		// see the calls themselves.
		gcStop := c.aName == "generate_content" && cand.GetFinishReason() == parleyv1.FinishReason_FINISH_REASON_STOP
		if f := cand.GetFinishReason(); f != parleyv1.FinishReason_FINISH_REASON_TOOL_USE && !gcStop {
			t.Errorf("%s: finish %v, want tool use", what, f)
		}
	case "reasoning":
		if !strings.Contains(reasoning.String(), "2 and 2 make 4.") {
			t.Errorf("%s: reasoning %q", what, reasoning.String())
		}
	case "usage":
		u := resp.GetUsage()
		if u.GetInputTokens() != 100 || u.GetOutputTokens() != 20 || u.GetCacheReadTokens() != 60 {
			t.Errorf("%s: usage in %d out %d cached %d, want 100 20 60", what, u.GetInputTokens(), u.GetOutputTokens(), u.GetCacheReadTokens())
		}
	}
}
