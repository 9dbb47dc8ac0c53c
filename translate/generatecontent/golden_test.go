package generatecontent_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
	"google.golang.org/genai"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/sse"
)

const casesDir = "../../testdata/generate_content"

// Every golden case holds some of request.json, response.json, stream.sse
// and error.json. Each is decoded to canonical form (pinned in
// *.canonical.json) and encoded back; requests and replies must come back
// as they came in (up to null members), or as request.upstream.json /
// response.client.json pin with the reason in case.json. Streams are
// always pinned in stream.client.sse: this dialect's chunking is the
// encoder's choice; what must not change is what a client reassembles,
// which the genai SDK checks.
func TestGolden(t *testing.T) {
	schemas := wireSchemas(t)
	for _, c := range golden.Cases(t, casesDir) {
		t.Run(c.Name, func(t *testing.T) {
			meta := c.Meta(t)
			model := sdkRequest(t, c)
			if model == "" {
				model = "gemini-test"
			}
			ran := false
			if c.Exists("request.json") {
				ran = true
				if err := schemas.request.Validate(c.Read(t, "request.json")); err != nil {
					t.Errorf("request.json does not fit the wire types' schema: %v", err)
				}
				checkRequest(t, c, model)
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

type schemaSet struct{ request, response *golden.Validator }

func wireSchemas(t *testing.T) schemaSet {
	mappers := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeOf(generatecontent.FunctionCall{}.Args): golden.Any(),
	}
	parts := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Part{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.PartList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{parts, parts.Items}}
	tools := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Tool{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.ToolList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{tools, tools.Items}}
	contents := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Content{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.ContentList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{contents, contents.Items}}
	return schemaSet{
		request:  golden.CheckSchema(t, "../../testdata/schemas/generate_content/request.json", generatecontent.Request{}, mappers),
		response: golden.CheckSchema(t, "../../testdata/schemas/generate_content/response.json", generatecontent.Response{}, mappers),
	}
}

func checkRequest(t *testing.T, c golden.Case, model string) {
	body := c.Read(t, "request.json")
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "models/" + model, Body: body})
	if err != nil {
		t.Fatalf("decode request: %v", err)
	}
	golden.Proto(t, c.Path("request.canonical.json"), req)
	out, err := generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: model, APIKey: "k"})
	if err != nil {
		t.Fatalf("encode request: %v", err)
	}
	if out.Path != "/v1beta/models/"+model+":generateContent" || out.Header.Get("x-goog-api-key") != "k" {
		t.Errorf("upstream request %s %v", out.Path, out.Header)
	}
	if c.Exists("request.upstream.json") {
		golden.JSON(t, c.Path("request.upstream.json"), out.Body)
	} else if diff, err := golden.DiffJSON(body, out.Body, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the request (-in +out):\n%s%v", diff, err)
	}
	sdkcheck.GenerateContentRequest(t, out.Body)

	req.Stream = true
	out, err = generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: model})
	if err != nil || out.Path != "/v1beta/models/"+model+":streamGenerateContent" || out.Query.Get("alt") != "sse" {
		t.Errorf("stream request %v %v: %v", out.Path, out.Query, err)
	}
}

func target() translate.Target { return translate.Target{Model: "gemini-test"} }

func checkResponse(t *testing.T, c golden.Case) {
	body := c.Read(t, "response.json")
	resp, err := generatecontent.Upstream{}.DecodeResponse(target(), body)
	if err != nil {
		t.Fatalf("decode response: %v", err)
	}
	golden.Proto(t, c.Path("response.canonical.json"), resp)
	out, err := generatecontent.Client{}.EncodeResponse(&parleyv1.Request{Model: "gemini-test"}, resp)
	if err != nil {
		t.Fatalf("encode response: %v", err)
	}
	if c.Exists("response.client.json") {
		golden.JSON(t, c.Path("response.client.json"), out)
	} else if diff, err := golden.DiffJSON(body, out, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the response (-in +out):\n%s%v", diff, err)
	}
	sdkcheck.GenerateContentReply(t, out)
}

func checkStream(t *testing.T, c golden.Case) {
	in := c.Read(t, "stream.sse")
	var events []*parleyv1.StreamEvent
	acc := translate.NewAccumulator()
	dec := generatecontent.Upstream{}.NewStreamDecoder(target())
	for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_GENERATE_CONTENT, bytes.NewReader(in), dec, translate.StreamLimits{}) {
		if err != nil {
			t.Fatalf("decode stream: %v", err)
		}
		if err := acc.Add(ev); err != nil {
			t.Fatalf("the decoded stream is out of order: %v", err)
		}
		events = append(events, ev)
	}
	golden.Messages(t, c.Path("stream.canonical.json"), events)
	out := encodeStream(t, events)
	golden.SSE(t, c.Path("stream.client.sse"), out)

	// A stream that ends in an error must reach the SDK as an APIError
	// with the error's code, status and message.
	if last := events[len(events)-1].GetError(); last != nil {
		sdkcheck.GenerateContentStreamError(t, out, int(last.GetHttpStatus()), last.GetReason(), last.GetMessage())
		return
	}

	// The genai SDK reads the stream; reassembled, it must hold what the
	// upstream's stream held, and what the whole reply of the accumulated
	// response holds.
	got := sdkcheck.GenerateContentStream(t, out)
	inAgain := sdkcheck.GenerateContentStream(t, in)
	sdkcheck.SameReassembled(t, "re-encoded stream vs upstream stream", inAgain, got)
	whole, err := generatecontent.Client{}.EncodeResponse(&parleyv1.Request{}, acc.Response())
	if err != nil {
		t.Fatal(err)
	}
	sdkcheck.SameReassembled(t, "stream vs whole reply", sdkcheck.Reassemble(sdkcheck.GenerateContentReply(t, whole)), got)
}

func encodeStream(t *testing.T, events []*parleyv1.StreamEvent) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := generatecontent.Client{}.NewStreamEncoder(&parleyv1.Request{Model: "gemini-test"})
	for _, ev := range events {
		if err := enc.Encode(w, ev); err != nil {
			t.Fatalf("encode stream: %v", err)
		}
	}
	return buf.Bytes()
}

func checkError(t *testing.T, c golden.Case, meta golden.Meta) {
	body := c.Read(t, "error.json")
	e := generatecontent.Upstream{}.DecodeError(meta.Status, http.Header{}, body)
	golden.Proto(t, c.Path("error.canonical.json"), e)
	status, out := generatecontent.Client{}.EncodeError(e)
	if status != meta.Status {
		t.Errorf("status %d, want %d", status, meta.Status)
	}
	if diff, err := golden.DiffJSON(body, out, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the round trip changed the error (-in +out):\n%s%v", diff, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	client, _ := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	_, err := client.Models.GenerateContent(t.Context(), "gemini-test", genai.Text("x"), nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != status || apiErr.Status == "" || !strings.Contains(apiErr.Message, e.GetMessage()[:10]) {
		t.Errorf("the SDK read the error as %#v", err)
	}
}
