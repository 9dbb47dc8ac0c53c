package messages_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/invopop/jsonschema"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/sse"
)

const casesDir = "../../testdata/messages"

// Every golden case holds some of: request.json (what a client sent),
// response.json and stream.sse (what the service answered), error.json (an
// error reply). For each, the test decodes to canonical form (pinned in the
// matching *.canonical.json), encodes back, and requires what came in, up
// to null members and pings; a case whose round trip legitimately differs
// pins the output in request.upstream.json, response.client.json or
// stream.client.sse and says why in case.json.
func TestGolden(t *testing.T) {
	schemas := wireSchemas(t)
	for _, c := range golden.Cases(t, casesDir) {
		t.Run(c.Name, func(t *testing.T) {
			meta := c.Meta(t)
			sdkRequest(t, c)
			ran := false
			if c.Exists("request.json") {
				ran = true
				if err := schemas.request.Validate(c.Read(t, "request.json")); err != nil {
					t.Errorf("request.json does not fit the wire types' schema: %v", err)
				}
				checkRequest(t, c)
			}
			if c.Exists("response.json") {
				ran = true
				if err := schemas.response.Validate(c.Read(t, "response.json")); err != nil {
					t.Errorf("response.json does not fit the wire types' schema: %v", err)
				}
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

type schemaSet struct {
	request, response *golden.Validator
}

// wireSchemas pins the JSON Schemas of the wire types and returns
// validators for them.
func wireSchemas(t *testing.T) schemaSet {
	mappers := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeOf(messages.Block{}.Input): golden.Any(),
	}
	blocks := &jsonschema.Schema{Type: "array", Items: golden.Inline(messages.Block{}, mappers)}
	mappers[reflect.TypeFor[messages.Content]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, blocks}}
	return schemaSet{
		request:  golden.CheckSchema(t, "../../testdata/schemas/messages/request.json", messages.Request{}, mappers),
		response: golden.CheckSchema(t, "../../testdata/schemas/messages/response.json", messages.Response{}, mappers),
	}
}

func checkRequest(t *testing.T, c golden.Case) {
	body := c.Read(t, "request.json")
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Header: c.Headers(t), Body: body})
	if err != nil {
		t.Fatalf("decode request: %v", err)
	}
	golden.Proto(t, c.Path("request.canonical.json"), req)

	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: req.GetModel(), APIKey: "sk-test"})
	if err != nil {
		t.Fatalf("encode request: %v", err)
	}
	if c.Exists("request.upstream.json") {
		golden.JSON(t, c.Path("request.upstream.json"), out.Body)
	} else if diff, err := golden.DiffJSON(body, out.Body, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the request (-in +out):\n%s%v", diff, err)
	}
	if got := out.Header.Get("x-api-key"); got != "sk-test" {
		t.Errorf("x-api-key = %q", got)
	}
	if out.Header.Get("anthropic-version") == "" {
		t.Error("no anthropic-version header toward the upstream")
	}
	sdkcheck.MessagesRequest(t, out.Body)
}

func target() translate.Target { return translate.Target{Model: "claude-test"} }

func checkResponse(t *testing.T, c golden.Case) {
	body := c.Read(t, "response.json")
	resp, err := messages.Upstream{}.DecodeResponse(target(), body)
	if err != nil {
		t.Fatalf("decode response: %v", err)
	}
	golden.Proto(t, c.Path("response.canonical.json"), resp)
	out, err := messages.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatalf("encode response: %v", err)
	}
	if c.Exists("response.client.json") {
		golden.JSON(t, c.Path("response.client.json"), out)
	} else if diff, err := golden.DiffJSON(body, out, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the response (-in +out):\n%s%v", diff, err)
	}
	sdkcheck.MessagesReply(t, out)
}

func checkStream(t *testing.T, c golden.Case) {
	in := c.Read(t, "stream.sse")
	var events []*parleyv1.StreamEvent
	acc := translate.NewAccumulator()
	dec := messages.Upstream{}.NewStreamDecoder(target())
	for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_MESSAGES, bytes.NewReader(in), dec, translate.StreamLimits{}) {
		if err != nil {
			t.Fatalf("decode stream: %v", err)
		}
		if err := acc.Add(ev); err != nil {
			t.Fatalf("the decoded stream is out of order: %v", err)
		}
		events = append(events, ev)
	}
	golden.Messages(t, c.Path("stream.canonical.json"), events)

	out := encodeStream(t, &parleyv1.Request{}, events)
	if c.Exists("stream.client.sse") {
		golden.SSE(t, c.Path("stream.client.sse"), out)
	} else if diff, err := golden.DiffSSE(in, out, golden.IgnoreNullMembers, golden.SkipPings); err != nil || diff != "" {
		t.Errorf("the round trip changed the stream (-in +out):\n%s%v", diff, err)
	}

	// A stream that ends in an error event must reach the SDK as an API
	// error of the same type.
	if last := events[len(events)-1].GetError(); last != nil {
		sdkcheck.MessagesStreamError(t, out, last.GetReason(), last.GetMessage())
		return
	}

	// The SDK's stream reader and accumulator must take the stream and
	// build the same message as the whole reply rendered from the
	// accumulated canonical response.
	got := sdkcheck.MessagesStream(t, out)
	whole, err := messages.Client{}.EncodeResponse(&parleyv1.Request{}, acc.Response())
	if err != nil {
		t.Fatal(err)
	}
	want := sdkcheck.MessagesReply(t, whole)
	sdkcheck.SameMessage(t, want, got)
}

func encodeStream(t *testing.T, req *parleyv1.Request, events []*parleyv1.StreamEvent) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := messages.Client{}.NewStreamEncoder(req)
	for _, ev := range events {
		if err := enc.Encode(w, ev); err != nil {
			t.Fatalf("encode stream: %v", err)
		}
	}
	return buf.Bytes()
}

func checkError(t *testing.T, c golden.Case, meta golden.Meta) {
	body := c.Read(t, "error.json")
	status := meta.Status
	if status == 0 {
		t.Fatal("an error case needs the status in case.json")
	}
	e := messages.Upstream{}.DecodeError(status, http.Header{"Request-Id": {"req_header"}}, body)
	golden.Proto(t, c.Path("error.canonical.json"), e)
	gotStatus, out := messages.Client{}.EncodeError(e)
	if gotStatus != status {
		t.Errorf("status = %d, want %d", gotStatus, status)
	}
	if diff, err := golden.DiffJSON(body, out, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the error (-in +out):\n%s%v", diff, err)
	}
	var probe struct {
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal(out, &probe); err != nil || probe.Error.Type == "" || probe.Error.Message == "" {
		t.Errorf("error body %s", out)
	}
}
