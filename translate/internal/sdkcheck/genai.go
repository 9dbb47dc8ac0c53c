package sdkcheck

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/parleyhq/parley/translate/golden"
)

// genaiRequestBody is a content-generation request body in the genai
// SDK's own types.
type genaiRequestBody struct {
	Contents          []*genai.Content        `json:"contents,omitempty"`
	SystemInstruction *genai.Content          `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool           `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig,omitempty"`
	SafetySettings    []*genai.SafetySetting  `json:"safetySettings,omitempty"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig,omitempty"`
	CachedContent     string                  `json:"cachedContent,omitempty"`
}

// GenerateContentRequest checks that the genai SDK's types hold every
// member of a request body.
func GenerateContentRequest(t testing.TB, body []byte) {
	t.Helper()
	var r genaiRequestBody
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("the SDK's types cannot read the request: %v", err)
	}
	again, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := golden.DiffJSON(dropEmptyArgs(t, body), again, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the SDK's types do not hold the request (-sent +sdk):\n%s%v", diff, err)
	}
}

// dropEmptyArgs removes "args": {} from function calls: the SDK's types
// leave an empty args map out, which the service reads the same way.
func dropEmptyArgs(t testing.TB, body []byte) []byte {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	contents, _ := m["contents"].([]any)
	for _, c := range contents {
		parts, _ := c.(map[string]any)["parts"].([]any)
		for _, p := range parts {
			if fc, ok := p.(map[string]any)["functionCall"].(map[string]any); ok {
				if a, ok := fc["args"].(map[string]any); ok && len(a) == 0 {
					delete(fc, "args")
				}
			}
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// GenerateContentClient is an SDK client whose every call is answered with body.
func GenerateContentClient(t testing.TB, status int, contentType string, body []byte) *genai.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// GenerateContentReply has the SDK read a whole reply.
func GenerateContentReply(t testing.TB, body []byte) *genai.GenerateContentResponse {
	t.Helper()
	client := GenerateContentClient(t, http.StatusOK, "application/json", body)
	r, err := client.Models.GenerateContent(context.Background(), "gemini-test", genai.Text("x"), nil)
	if err != nil {
		t.Fatalf("the SDK rejected the reply: %v", err)
	}
	return r
}

// Reassembled is what a client makes of a stream: per candidate, the
// text, the thoughts, the function calls, the signatures (in order), the
// finish reason; and the last usage.
type Reassembled struct {
	Text, Thoughts map[int32]string
	Calls          map[int32][]string
	Signatures     map[int32][]string
	Finish         map[int32]genai.FinishReason
	Usage          *genai.GenerateContentResponseUsageMetadata
	Blocked        genai.BlockedReason
}

// Reassemble joins the chunks of a stream (or one whole reply).
func Reassemble(chunks ...*genai.GenerateContentResponse) Reassembled {
	r := Reassembled{Text: map[int32]string{}, Thoughts: map[int32]string{}, Calls: map[int32][]string{}, Signatures: map[int32][]string{}, Finish: map[int32]genai.FinishReason{}}
	// Calls whose arguments come in pieces (Vertex AI's
	// streamFunctionCallArguments), by candidate, until they end.
	pending := map[int32]*genai.FunctionCall{}
	for _, ch := range chunks {
		for pos, c := range ch.Candidates {
			if c.Index == 0 && pos > 0 {
				// A chunk that leaves out the index members names the
				// candidate by its place, as the service's own
				// aggregators read it.
				c.Index = int32(pos)
			}
			if c.Content != nil {
				for _, p := range c.Content.Parts {
					fc := p.FunctionCall
					switch {
					case fc != nil && fc.Name != "" && fc.WillContinue != nil && *fc.WillContinue:
						call := &genai.FunctionCall{Name: fc.Name, Args: map[string]any{}}
						maps.Copy(call.Args, fc.Args)
						pending[c.Index] = call
					case fc != nil && fc.Name == "":
						call := pending[c.Index]
						if call == nil {
							break
						}
						for _, pa := range fc.PartialArgs {
							setPartialArg(call.Args, pa)
						}
						if fc.WillContinue == nil || !*fc.WillContinue {
							args, _ := json.Marshal(call.Args)
							r.Calls[c.Index] = append(r.Calls[c.Index], call.Name+string(args))
							delete(pending, c.Index)
						}
					case p.FunctionCall != nil:
						args, _ := json.Marshal(p.FunctionCall.Args)
						r.Calls[c.Index] = append(r.Calls[c.Index], p.FunctionCall.Name+string(args))
					case p.Thought:
						r.Thoughts[c.Index] += p.Text
					case p.Text != "":
						r.Text[c.Index] += p.Text
					}
					if len(p.ThoughtSignature) > 0 {
						r.Signatures[c.Index] = append(r.Signatures[c.Index], string(p.ThoughtSignature))
					}
				}
			}
			if c.FinishReason != "" {
				r.Finish[c.Index] = c.FinishReason
			}
		}
		if ch.UsageMetadata != nil {
			r.Usage = ch.UsageMetadata
		}
		if ch.PromptFeedback != nil && ch.PromptFeedback.BlockReason != "" {
			r.Blocked = ch.PromptFeedback.BlockReason
		}
	}
	return r
}

var pathStep = regexp.MustCompile(`\.([^.\[]+)|\['([^']*)'\]|\["([^"]*)"\]|\[(\d+)\]`)

// setPartialArg writes one streamed piece of a call's arguments into
// args: a string piece after one that said willContinue extends it.
func setPartialArg(args map[string]any, pa *genai.PartialArg) {
	var cur any = args
	steps := pathStep.FindAllStringSubmatch(strings.TrimPrefix(pa.JsonPath, "$"), -1)
	for i, st := range steps {
		last := i == len(steps)-1
		var value any
		switch {
		case pa.StringValue != "" || pa.NumberValue == nil && pa.BoolValue == nil && pa.NULLValue == "":
			value = pa.StringValue
		case pa.NumberValue != nil:
			value = *pa.NumberValue
		case pa.BoolValue != nil:
			value = *pa.BoolValue
		}
		if st[4] != "" {
			n, _ := strconv.Atoi(st[4])
			arr, _ := cur.(*[]any)
			for len(*arr) <= n {
				*arr = append(*arr, nil)
			}
			if last {
				if s, ok := (*arr)[n].(string); ok && pa.StringValue != "" {
					value = s + pa.StringValue
				}
				(*arr)[n] = value
				return
			}
			if (*arr)[n] == nil {
				(*arr)[n] = nextContainer(steps[i+1])
			}
			cur = (*arr)[n]
			continue
		}
		name := st[1] + st[2] + st[3]
		m, _ := cur.(map[string]any)
		if last {
			if s, ok := m[name].(string); ok && pa.StringValue != "" {
				value = s + pa.StringValue
			}
			m[name] = value
			return
		}
		if m[name] == nil {
			m[name] = nextContainer(steps[i+1])
		}
		cur = m[name]
	}
}

func nextContainer(step []string) any {
	if step[4] != "" {
		return &[]any{}
	}
	return map[string]any{}
}

// GenerateContentStream reads a stream through the SDK's stream reader and
// reassembles it.
func GenerateContentStream(t testing.TB, stream []byte) Reassembled {
	t.Helper()
	client := GenerateContentClient(t, http.StatusOK, "text/event-stream", stream)
	var chunks []*genai.GenerateContentResponse
	for ch, err := range client.Models.GenerateContentStream(context.Background(), "gemini-test", genai.Text("x"), nil) {
		if err != nil {
			t.Fatalf("the SDK's stream reader failed: %v", err)
		}
		chunks = append(chunks, ch)
	}
	return Reassemble(chunks...)
}

// GenerateContentStreamError reads a stream that ends in an error and
// requires an APIError with the code, the status name and the message.
func GenerateContentStreamError(t testing.TB, stream []byte, code int, status, message string) {
	t.Helper()
	client := GenerateContentClient(t, http.StatusOK, "text/event-stream", stream)
	var err error
	for _, err = range client.Models.GenerateContentStream(context.Background(), "gemini-test", genai.Text("x"), nil) {
		if err != nil {
			break
		}
	}
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("the SDK's stream ended with %v, want an APIError", err)
	}
	if apiErr.Code != code || apiErr.Status != status || apiErr.Message != message {
		t.Errorf("the SDK saw %d %s %q, want %d %s %q", apiErr.Code, apiErr.Status, apiErr.Message, code, status, message)
	}
}

// GenerateContentError serves an error reply to the SDK's client and
// requires an APIError with the status, a status name and the message.
func GenerateContentError(t testing.TB, status int, body []byte, message string) {
	t.Helper()
	client := GenerateContentClient(t, status, "application/json", body)
	_, err := client.Models.GenerateContent(context.Background(), "gemini-test", genai.Text("x"), nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != status || apiErr.Status == "" || apiErr.Message != message {
		t.Errorf("the SDK read the error as %#v, want %d with message %q", err, status, message)
	}
}

// SameReassembled requires two reassembled streams to agree.
func SameReassembled(t testing.TB, what string, want, got Reassembled) {
	t.Helper()
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if diff, err := golden.DiffJSON(w, g); err != nil || diff != "" {
		t.Errorf("%s: reassembled differently (-want +got):\n%s%v", what, diff, err)
	}
}
