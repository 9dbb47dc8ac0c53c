package messages_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/messages"
)

// TestCountTokensThroughTheSDK: the SDK's count_tokens call decodes, goes
// back to an upstream of this dialect as it came, and the SDK reads the
// count Parley renders.
func TestCountTokensThroughTheSDK(t *testing.T) {
	var sent []byte
	var path string
	answer := func(w http.ResponseWriter) {
		body, err := messages.Client{}.EncodeCount(&parleyv1.TokenCount{InputTokens: 2095, CachedTokens: 1800})
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent, _ = io.ReadAll(r.Body)
		path = r.URL.Path
		answer(w)
	}))
	defer srv.Close()
	c := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	got, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model:    "claude-sonnet-4-5",
		System:   anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String("You are a scientist")},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello, Claude"))},
		Tools: []anthropic.MessageCountTokensToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: "get_weather", Description: anthropic.String("Get the current weather in a given location"),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"location": map[string]any{"type": "string"}}, Required: []string{"location"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.InputTokens != 2095 {
		t.Errorf("the SDK read %d input tokens", got.InputTokens)
	}
	if path != "/v1/messages/count_tokens" {
		t.Errorf("the SDK called %s", path)
	}

	req, err := messages.Client{}.DecodeCountRequest(&translate.Incoming{Body: sent})
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := messages.Upstream{}.EncodeCountRequest(req, translate.Target{Model: "claude-sonnet-4-5", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != "/v1/messages/count_tokens" {
		t.Errorf("upstream path %s", out.Path)
	}
	if diff, err := golden.DiffJSON(sent, out.Body, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the count request changed on its way (-client +upstream):\n%s%v", diff, err)
	}
	if strings.Contains(string(out.Body), "max_tokens") {
		t.Error("a count request carries no max_tokens")
	}
}

// A count_tokens reply, and one the decoder must refuse.
func TestDecodeCount(t *testing.T) {
	c, err := messages.Upstream{}.DecodeCount([]byte(`{"input_tokens": 2095}`))
	if err != nil || c.GetInputTokens() != 2095 {
		t.Fatalf("count %v, %v", c, err)
	}
	if _, err := (messages.Upstream{}).DecodeCount([]byte(`{"input_tokens": "many"}`)); err == nil {
		t.Error("a malformed count was accepted")
	}
	var probe map[string]any
	body, _ := messages.Client{}.EncodeCount(c)
	if err := json.Unmarshal(body, &probe); err != nil || probe["input_tokens"] != float64(2095) {
		t.Errorf("rendered %s", body)
	}
}
