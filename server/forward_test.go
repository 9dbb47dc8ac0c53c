package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/parleyhq/parley/translate/sse"
)

// sentBody records the body of each request an SDK sends.
type sentBody struct{ bodies [][]byte }

func (s *sentBody) record(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	s.bodies = append(s.bodies, b)
}

// TestSameDialectForward: a request of the upstream's own dialect reaches
// it as the official SDK wrote it, byte for byte but for the model name;
// one that needs rewriting (a chat stream that did not ask for usage,
// which Parley asks for) is built again from the canonical form.
func TestSameDialectForward(t *testing.T) {
	g := startGateway(t, gwExtra{})
	ctx := context.Background()

	t.Run("messages", func(t *testing.T) {
		var sent sentBody
		c := anthropic.NewClient(aoption.WithBaseURL(g.url), aoption.WithAPIKey(clientKey), aoption.WithMaxRetries(0),
			aoption.WithMiddleware(func(r *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
				sent.record(r)
				return next(r)
			}))
		fake := g.fakes["messages"]
		fake.set("text", nil)
		msg, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			Model: "via-messages", MaxTokens: 256,
			System:   []anthropic.TextBlockParam{{Text: "Be brief.", CacheControl: anthropic.NewCacheControlEphemeralParam()}},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
			Metadata: anthropic.MetadataParam{UserID: anthropic.String("u-1")},
		})
		if err != nil || len(msg.Content) == 0 {
			t.Fatalf("reply %v, err %v", msg, err)
		}
		got := fake.requests()
		if len(got) != 1 || len(sent.bodies) != 1 {
			t.Fatalf("%d upstream requests, %d sent", len(got), len(sent.bodies))
		}
		want := bytes.Replace(sent.bodies[0], []byte(`"model":"via-messages"`), []byte(`"model":"`+upstreamModel["messages"]+`"`), 1)
		if !bytes.Equal(got[0].Body, want) {
			t.Errorf("the upstream got\n%s\nnot the client's body with the model swapped\n%s", got[0].Body, want)
		}
	})

	chat := func(t *testing.T, usage bool) (sent, got []byte) {
		var s sentBody
		c := openai.NewClient(ooption.WithBaseURL(g.url+"/v1"), ooption.WithAPIKey(clientKey), ooption.WithMaxRetries(0),
			ooption.WithMiddleware(func(r *http.Request, next ooption.MiddlewareNext) (*http.Response, error) {
				s.record(r)
				return next(r)
			}))
		fake := g.fakes["chat_completions"]
		fake.set("text", nil)
		p := openai.ChatCompletionNewParams{
			Model:    "via-chat_completions",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Say hello.")},
		}
		if usage {
			p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		}
		st := c.Chat.Completions.NewStreaming(ctx, p)
		var acc openai.ChatCompletionAccumulator
		for st.Next() {
			acc.AddChunk(st.Current())
		}
		if err := st.Err(); err != nil || len(acc.Choices) == 0 {
			t.Fatalf("stream err %v, %d choices", err, len(acc.Choices))
		}
		reqs := fake.requests()
		if len(reqs) != 1 || len(s.bodies) != 1 {
			t.Fatalf("%d upstream requests, %d sent", len(reqs), len(s.bodies))
		}
		return s.bodies[0], reqs[0].Body
	}
	swap := func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"model":"via-chat_completions"`), []byte(`"model":"`+upstreamModel["chat_completions"]+`"`), 1)
	}
	t.Run("chat stream with usage", func(t *testing.T) {
		sent, got := chat(t, true)
		if !bytes.Equal(got, swap(sent)) {
			t.Errorf("the upstream got\n%s\nnot the client's body with the model swapped\n%s", got, swap(sent))
		}
	})
	t.Run("chat stream without usage", func(t *testing.T) {
		sent, got := chat(t, false)
		if bytes.Equal(got, swap(sent)) || !bytes.Contains(got, []byte(`"include_usage":true`)) {
			t.Errorf("a stream that did not ask for usage went on as it came:\n%s", got)
		}
	})
}

// postRead posts body with the client key and returns the reply's status
// and body.
func postRead(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// events reads an event stream into its events' types and data.
func events(t *testing.T, b []byte) []string {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(b), 1<<20)
	var out []string
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev.Type+" "+string(ev.Data))
	}
}

// TestSameDialectRelay: the reply to a forwarded request is the upstream's
// own, whole or streamed, decoded only to be observed; an upstream's
// error inside a stream is still rendered by Parley.
func TestSameDialectRelay(t *testing.T) {
	g := startGateway(t, gwExtra{})
	fake := g.fakes["messages"]
	req := withModel(t, fixture(t, "text", "messages", "request.json"), "via-messages", false)

	t.Run("whole", func(t *testing.T) {
		reply := fixture(t, "text", "messages", "response.json")
		fake.set("text", func(w http.ResponseWriter, _ *http.Request, _ int) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(reply)
		})
		status, got := postRead(t, g.url+"/v1/messages", req)
		if status != http.StatusOK || !bytes.Equal(got, reply) {
			t.Errorf("status %d, reply\n%s\nnot the upstream's\n%s", status, got, reply)
		}
	})
	t.Run("stream", func(t *testing.T) {
		stream := fixture(t, "text", "messages", "stream.sse")
		fake.set("text", func(w http.ResponseWriter, _ *http.Request, _ int) { writeStream(w, stream, nil) })
		_, got := postRead(t, g.url+"/v1/messages", withModel(t, fixture(t, "text", "messages", "request.json"), "via-messages", true))
		if w, g := events(t, stream), events(t, got); !slices.Equal(w, g) {
			t.Errorf("the client got the events\n%s\nnot the upstream's\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
	})
	t.Run("error inside a stream", func(t *testing.T) {
		stream := fixture(t, "text", "messages", "stream.sse")
		cut := bytes.Index(stream, []byte("event: content_block_stop"))
		broken := append(slices.Clip(stream[:cut]), []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded sk-ant-leaked\"}}\n\n")...)
		fake.set("text", func(w http.ResponseWriter, _ *http.Request, _ int) { writeStream(w, broken, nil) })
		_, got := postRead(t, g.url+"/v1/messages", withModel(t, fixture(t, "text", "messages", "request.json"), "via-messages", true))
		evs := events(t, got)
		errs := 0
		for _, e := range evs {
			if strings.HasPrefix(e, "error ") {
				errs++
			}
		}
		if last := evs[len(evs)-1]; errs != 1 || !strings.HasPrefix(last, "error ") || !strings.Contains(last, "overloaded_error") {
			t.Errorf("the stream does not end with one overloaded_error event:\n%s", got)
		}
	})
}

// TestSameDialectForwardResponses: a responses request that Parley keeps
// no record of goes on as the SDK wrote it; one that Parley stores is
// built again (the upstream is told to store it too, as before).
func TestSameDialectForwardResponses(t *testing.T) {
	g := startGateway(t, gwExtra{dataDir: t.TempDir()})
	fake := g.fakes["responses"]
	send := func(t *testing.T, store param.Opt[bool]) (sent, got []byte) {
		var s sentBody
		c := openai.NewClient(ooption.WithBaseURL(g.url+"/v1"), ooption.WithAPIKey(clientKey), ooption.WithMaxRetries(0),
			ooption.WithMiddleware(func(r *http.Request, next ooption.MiddlewareNext) (*http.Response, error) {
				s.record(r)
				return next(r)
			}))
		fake.set("text", nil)
		_, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
			Model:        "via-responses",
			Instructions: openai.String("Be brief."),
			Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")},
			Store:        store,
		})
		if err != nil {
			t.Fatal(err)
		}
		reqs := fake.requests()
		if len(reqs) != 1 || len(s.bodies) != 1 {
			t.Fatalf("%d upstream requests, %d sent", len(reqs), len(s.bodies))
		}
		return s.bodies[0], reqs[0].Body
	}
	swap := func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"model":"via-responses"`), []byte(`"model":"`+upstreamModel["responses"]+`"`), 1)
	}
	t.Run("store false", func(t *testing.T) {
		sent, got := send(t, openai.Bool(false))
		if !bytes.Equal(got, swap(sent)) {
			t.Errorf("the upstream got\n%s\nnot the client's body with the model swapped\n%s", got, swap(sent))
		}
	})
	t.Run("stored by Parley", func(t *testing.T) {
		sent, got := send(t, param.Opt[bool]{})
		if bytes.Equal(got, swap(sent)) {
			t.Errorf("a response Parley stores went on as it came:\n%s", got)
		}
	})
}

// recordingTransport records the body of each request an SDK sends
// through it.
type recordingTransport struct{ sent sentBody }

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.sent.record(r)
	return http.DefaultTransport.RoundTrip(r)
}

// TestSameDialectForwardGenerateContent: a content-generation request
// the official SDK writes goes on to an upstream of that dialect as it
// came (the model in the path the upstream's), whole and streamed, and
// the reply is the upstream's own; one in a spelling Parley writes
// otherwise (snake_case, as the service's REST examples have it) is built
// again from the canonical form.
func TestSameDialectForwardGenerateContent(t *testing.T) {
	g := startGateway(t, gwExtra{})
	fake := g.fakes["generate_content"]
	rt := &recordingTransport{}
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: clientKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: g.url}, HTTPClient: &http.Client{Transport: rt},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "get_weather", Description: "The weather in a city.",
			ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		}}}},
		Temperature: genai.Ptr[float32](0.2),
	}
	contents := genai.Text("Say hello.")
	check := func(t *testing.T, stream bool) {
		t.Helper()
		got := fake.requests()
		if len(got) != 1 || len(rt.sent.bodies) != 1 {
			t.Fatalf("%d upstream requests, %d sent", len(got), len(rt.sent.bodies))
		}
		method := ":generateContent"
		if stream {
			method = ":streamGenerateContent"
		}
		if want := "/v1beta/models/" + upstreamModel["generate_content"] + method; got[0].Path != want {
			t.Errorf("the upstream was asked at %s, not %s", got[0].Path, want)
		}
		if !bytes.Equal(got[0].Body, rt.sent.bodies[0]) {
			t.Errorf("the upstream got\n%s\nnot the client's body\n%s", got[0].Body, rt.sent.bodies[0])
		}
		rt.sent.bodies = nil
	}
	t.Run("whole", func(t *testing.T) {
		fake.set("text", nil)
		r, err := c.Models.GenerateContent(context.Background(), "via-generate_content", contents, cfg)
		if err != nil || r.Text() == "" {
			t.Fatalf("reply %v, err %v", r, err)
		}
		check(t, false)
	})
	t.Run("stream", func(t *testing.T) {
		fake.set("text", nil)
		text := ""
		for ch, err := range c.Models.GenerateContentStream(context.Background(), "via-generate_content", contents, cfg) {
			if err != nil {
				t.Fatal(err)
			}
			text += ch.Text()
		}
		if text == "" {
			t.Fatal("no text streamed")
		}
		check(t, true)
	})
	t.Run("relayed stream", func(t *testing.T) {
		stream := fixture(t, "text", "generate_content", "stream.sse")
		fake.set("text", func(w http.ResponseWriter, _ *http.Request, _ int) { writeStream(w, stream, nil) })
		body := []byte(`{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]}`)
		_, got := postRead(t, g.url+"/v1beta/models/via-generate_content:streamGenerateContent?alt=sse", body)
		if w, g := events(t, stream), events(t, got); !slices.Equal(w, g) {
			t.Errorf("the client got the events\n%s\nnot the upstream's\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
		if reqs := fake.requests(); len(reqs) != 1 || !bytes.Equal(reqs[0].Body, body) {
			t.Errorf("the upstream got %d requests, not the client's body", len(reqs))
		}
	})
	t.Run("relayed stream as one array", func(t *testing.T) {
		// Without alt=sse the client gets the chunks as the elements of
		// one JSON array, the upstream's own chunks all the same.
		stream := fixture(t, "text", "generate_content", "stream.sse")
		fake.set("text", func(w http.ResponseWriter, _ *http.Request, _ int) { writeStream(w, stream, nil) })
		body := []byte(`{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]}`)
		status, got := postRead(t, g.url+"/v1beta/models/via-generate_content:streamGenerateContent", body)
		var chunks []json.RawMessage
		if err := json.Unmarshal(got, &chunks); status != http.StatusOK || err != nil {
			t.Fatalf("status %d, not a JSON array (%v):\n%s", status, err, got)
		}
		var want []string
		for _, e := range events(t, stream) {
			want = append(want, strings.TrimSpace(e))
		}
		var have []string
		for _, c := range chunks {
			var compact bytes.Buffer
			if err := json.Compact(&compact, c); err != nil {
				t.Fatal(err)
			}
			have = append(have, compact.String())
		}
		if !slices.Equal(want, have) {
			t.Errorf("the client got the chunks\n%s\nnot the upstream's\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("snake_case", func(t *testing.T) {
		fake.set("text", nil)
		body := []byte(`{"system_instruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]}`)
		status, _ := postRead(t, g.url+"/v1beta/models/via-generate_content:generateContent", body)
		reqs := fake.requests()
		if status != http.StatusOK || len(reqs) != 1 {
			t.Fatalf("status %d, %d upstream requests", status, len(reqs))
		}
		if bytes.Equal(reqs[0].Body, body) || !bytes.Contains(reqs[0].Body, []byte(`"systemInstruction"`)) {
			t.Errorf("a snake_case body went on as it came:\n%s", reqs[0].Body)
		}
	})
}

// TestSameDialectRetryEncodes: a request of the upstream's own dialect
// goes on as it came once; an attempt after a refusal encodes the
// canonical request, and says the same to the upstream (the client's body
// is not held for it: TestWaitingRequestsHoldOneConversation).
func TestSameDialectRetryEncodes(t *testing.T) {
	var mu sync.Mutex
	var got [][]byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		n := len(got)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(529)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hello."}],`+
			`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":2}}`)
	}))
	defer up.Close()
	g := startGateway(t, gwExtra{
		upstreams: fmt.Sprintf("  - {name: busy, dialect: messages, base_url: %q, api_key: up-key-busy, max_retries: 1}\n", up.URL),
		models:    "  - {name: busy, upstream: busy, upstream_model: m}\n",
	})
	body := `{"model":"busy","max_tokens":256,"temperature":0.5,` +
		`"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],` +
		`"metadata":{"user_id":"u-1"},"future_option":{"a":[1,2]},"messages":[{"role":"user","content":[{"type":"text","text":"Say hello."}]},` +
		`{"role":"assistant","content":"Hello?"},{"role":"user","content":"Once more."}]}`
	status, reply := postRead(t, g.url+"/v1/messages", []byte(body))
	if status != http.StatusOK || !strings.Contains(string(reply), "Hello.") {
		t.Fatalf("status %d, reply %s", status, reply)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(got))
	}
	if want := strings.Replace(body, `"model":"busy"`, `"model":"m"`, 1); string(got[0]) != want {
		t.Errorf("the first attempt sent\n%s\nnot the client's body with the model swapped\n%s", got[0], want)
	}
	var first, second any
	if err := json.Unmarshal(got[0], &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got[1], &second); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the second attempt sent\n%s\nwhich says other than the first\n%s", got[1], got[0])
	}
}
