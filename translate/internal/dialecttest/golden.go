package dialecttest

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/sse"
)

// Prepare runs first for each golden case, regenerating what the case
// captures from the dialect's SDK (request.json, say), and returns the
// model the client named, or "" for the spec's CaseModel.
type Prepare func(t *testing.T, c golden.Case) string

// Run runs every golden case under s.Cases. A case folder holds some of:
// request.json (what a client sent), response.json and stream.sse (what
// the service answered), error.json (an error reply, with its status in
// case.json). Each is decoded to canonical form, pinned in the matching
// *.canonical.json, and encoded back; what comes out must be what came
// in, up to null members and pings, unless the case pins the output
// (request.upstream.json, response.client.json, stream.client.sse) and
// says why in case.json. No object in what is encoded may repeat a member
// name, which the comparisons, made with encoding/json, would not see.
// The dialect's official SDK must accept every upstream request and read
// every reply, stream and error.
func Run(t *testing.T, s *Spec) { RunPrepared(t, s, nil) }

// RunPrepared is Run with prepare run first for each case.
func RunPrepared(t *testing.T, s *Spec, prepare Prepare) {
	request, response := s.Schemas(t)
	forwarded, notForwarded = 0, 0
	if _, ok := s.Upstream.(translate.Forwarder); ok {
		defer func() {
			t.Logf("the same-dialect fast path took %d requests and left %d", forwarded, notForwarded)
			if forwarded == 0 && !t.Failed() {
				t.Errorf("the same-dialect fast path took none of the %d requests", notForwarded)
			}
		}()
	}
	for _, c := range golden.Cases(t, s.Cases) {
		t.Run(c.Name, func(t *testing.T) {
			meta := c.Meta(t)
			model := ""
			if prepare != nil {
				model = prepare(t, c)
			}
			if model == "" {
				model = s.CaseModel
			}
			ran := false
			if c.Exists("request.json") {
				ran = true
				if err := request.Validate(c.Read(t, "request.json")); err != nil {
					t.Errorf("request.json does not fit the wire types' schema: %v", err)
				}
				s.request(t, c, model)
			}
			if c.Exists("response.json") {
				ran = true
				if err := response.Validate(c.Read(t, "response.json")); err != nil {
					t.Errorf("response.json does not fit the wire types' schema: %v", err)
				}
				s.response(t, c)
			}
			if c.Exists("stream.sse") {
				ran = true
				s.stream(t, c)
			}
			if c.Exists("error.json") {
				ran = true
				s.error(t, c, meta)
			}
			if !ran {
				t.Fatal("the case has no wire file")
			}
		})
	}
}

func (s *Spec) request(t *testing.T, c golden.Case, model string) {
	body := c.Read(t, "request.json")
	req, err := s.Client.DecodeRequest(s.Incoming(c.Headers(t), model, body))
	if err != nil {
		t.Fatalf("decode request: %v", err)
	}
	golden.Proto(t, c.Path("request.canonical.json"), req)
	out, err := s.Upstream.EncodeRequest(req, upstreamTarget(req))
	if err != nil {
		t.Fatalf("encode request: %v", err)
	}
	checkNames(t, "the upstream request", out.Body)
	if c.Exists("request.upstream.json") {
		golden.JSON(t, c.Path("request.upstream.json"), out.Body)
	} else if diff, err := golden.DiffJSON(body, out.Body, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the request (-in +out):\n%s%v", diff, err)
	}
	s.CheckUpstream(t, req, out, model)
	s.SDKRequest(t, out.Body)
	s.forward(t, req, body, out)
}

// forward checks the same-dialect fast path: where the upstream codec
// sends the client's own body on, that request must be the one the
// encoder builds, up to null members (which the encoder leaves out and a
// service reads as absent), with the same method, path, headers, stream
// flag and nothing dropped.
func (s *Spec) forward(t *testing.T, req *parleyv1.Request, body []byte, encoded *translate.Outgoing) {
	f, ok := s.Upstream.(translate.Forwarder)
	if !ok {
		return
	}
	out, ok, err := f.Forward(req, &translate.Source{Dialect: s.Client.Dialect(), Body: body}, upstreamTarget(req))
	if err != nil {
		t.Fatalf("forward: %v", err)
	}
	if !ok {
		notForwarded++
		return
	}
	forwarded++
	if diff, err := golden.DiffJSON(encoded.Body, out.Body, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the forwarded body is not the encoded one (-encoded +forwarded):\n%s%v", diff, err)
	}
	if out.Method != encoded.Method || out.Path != encoded.Path || out.Stream != encoded.Stream ||
		!reflect.DeepEqual(out.Header, encoded.Header) || !reflect.DeepEqual(out.Query, encoded.Query) {
		t.Errorf("forwarded %s %s %v %v stream %v; encoded %s %s %v %v stream %v",
			out.Method, out.Path, out.Query, out.Header, out.Stream, encoded.Method, encoded.Path, encoded.Query, encoded.Header, encoded.Stream)
	}
	if len(out.Dropped) != 0 || len(encoded.Dropped) != 0 {
		t.Errorf("forwarded although something is dropped: %v / %v", out.Dropped, encoded.Dropped)
	}
}

// upstreamTarget is what a decoded golden request is encoded for: the
// model the client asked for, with a key the upstream request must carry.
func upstreamTarget(req *parleyv1.Request) translate.Target {
	return translate.Target{Model: req.GetModel(), APIKey: "sk-test"}
}

// forwarded and notForwarded count the cases the fast path took and
// left in one Run, which insists that it takes some.
var forwarded, notForwarded int

func (s *Spec) response(t *testing.T, c golden.Case) {
	body := c.Read(t, "response.json")
	resp, err := s.Upstream.DecodeResponse(translate.Target{Model: s.CaseModel}, body)
	if err != nil {
		t.Fatalf("decode response: %v", err)
	}
	golden.Proto(t, c.Path("response.canonical.json"), resp)
	out, err := s.Client.EncodeResponse(s.ClientRequest, resp)
	if err != nil {
		t.Fatalf("encode response: %v", err)
	}
	checkNames(t, "the client's reply", out)
	if c.Exists("response.client.json") {
		golden.JSON(t, c.Path("response.client.json"), out)
	} else if diff, err := golden.DiffJSON(body, out, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the response (-in +out):\n%s%v", diff, err)
	}
	s.SDKReply(t, out)
}

func (s *Spec) stream(t *testing.T, c golden.Case) {
	in := c.Read(t, "stream.sse")
	var events []*parleyv1.StreamEvent
	acc := translate.NewAccumulator()
	for ev, err := range translate.DecodeStream(s.Upstream.Dialect(), bytes.NewReader(in), s.Upstream.NewStreamDecoder(translate.Target{Model: s.CaseModel}), translate.StreamLimits{}) {
		if err != nil {
			t.Fatalf("decode stream: %v", err)
		}
		if err := acc.Add(ev); err != nil {
			t.Fatalf("the decoded stream is out of order: %v", err)
		}
		events = append(events, ev)
	}
	golden.Messages(t, c.Path("stream.canonical.json"), events)

	out := EncodeStream(t, s.Client, s.ClientRequest, events)
	if s.PinStreams || c.Exists("stream.client.sse") {
		golden.SSE(t, c.Path("stream.client.sse"), out)
	} else if diff, err := golden.DiffSSE(in, out, golden.IgnoreNullMembers, golden.SkipPings); err != nil || diff != "" {
		t.Errorf("the round trip changed the stream (-in +out):\n%s%v", diff, err)
	}

	// A stream that ends in an error must reach the SDK as its typed
	// error; any other must build, through the SDK's own reader, what
	// the whole reply of the accumulated response holds.
	if last := events[len(events)-1].GetError(); last != nil {
		s.SDKStreamError(t, out, int(last.GetHttpStatus()), last.GetReason(), last.GetMessage())
		return
	}
	whole, err := s.Client.EncodeResponse(s.ClientRequest, acc.Response())
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, "the client's reply of the accumulated stream", whole)
	if s.SDKSameStream != nil {
		s.SDKSameStream(t, in, out)
	}
	s.SDKStream(t, out, whole)
}

func (s *Spec) error(t *testing.T, c golden.Case, meta golden.Meta) {
	body := c.Read(t, "error.json")
	if meta.Status == 0 {
		t.Fatal("an error case needs the status in case.json")
	}
	e := s.Upstream.DecodeError(meta.Status, http.Header{"Request-Id": {"req_header"}}, body)
	golden.Proto(t, c.Path("error.canonical.json"), e)
	status, out := s.Client.EncodeError(e)
	checkNames(t, "the client's error", out)
	if status != meta.Status {
		t.Errorf("status = %d, want %d", status, meta.Status)
	}
	if diff, err := golden.DiffJSON(body, out, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the error (-in +out):\n%s%v", diff, err)
	}
	s.SDKError(t, status, out, e.GetReason(), e.GetMessage())
}

// EncodeStream renders canonical events as the client's stream for req,
// and checks that no event's data repeats a member name.
func EncodeStream(t testing.TB, c translate.Client, req *parleyv1.Request, events []*parleyv1.StreamEvent) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := c.NewStreamEncoder(req)
	for _, ev := range events {
		if err := enc.Encode(w, ev); err != nil {
			t.Fatalf("encode stream: %v", err)
		}
	}
	checkStreamNames(t, buf.Bytes())
	return buf.Bytes()
}
