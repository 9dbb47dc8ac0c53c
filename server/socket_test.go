package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestResponsesOverWebSocket: the responses dialect over a WebSocket, as
// the Codex CLI speaks it to a provider that supports WebSockets, through
// openai-go's own connection (client.Beta.Responses.Connect). On one
// connection, a response.create event is answered with the response's
// stream events, one message each, for an upstream of every dialect; a
// second request follows on the same connection; a bad event and a model
// that is not served are answered with error events, the connection left
// open; a wrong key is refused at the upgrade (guide §8 item 12's
// transport; issue 18, item 12).
func TestResponsesOverWebSocket(t *testing.T) {
	g := startGateway(t, gwExtra{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(g.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0))
	conn, err := client.Beta.Responses.Connect(ctx, openai.BetaResponseConnectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()

	// receive reads the events of one request up to its last.
	receive := func(t *testing.T) (types []string, text string, last map[string]any) {
		t.Helper()
		for {
			raw, err := conn.RecvRaw(ctx)
			if err != nil {
				t.Fatalf("after %v: %v", types, err)
			}
			var ev map[string]any
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			typ, _ := ev["type"].(string)
			types = append(types, typ)
			if typ == "response.output_text.delta" {
				text += ev["delta"].(string)
			}
			if typ == "response.completed" || typ == "response.failed" || typ == "error" {
				return types, text, ev
			}
		}
	}
	for _, b := range dialectList {
		for turn := 0; turn < 2; turn++ {
			fake := g.fakes[b.name]
			fake.set("text", nil)
			if err := conn.SendRaw(ctx, json.RawMessage(`{"type":"response.create","model":"via-`+b.name+`","instructions":"Be brief.","input":"Say hello."}`)); err != nil {
				t.Fatal(err)
			}
			types, text, last := receive(t)
			if types[0] != "response.created" || last["type"] != "response.completed" || text != "Hello there!" {
				t.Errorf("%s, request %d: events %v, text %q", b.name, turn, types, text)
			}
			if got := fake.requests(); len(got) != 1 || !decodeAt(t, b, got[0]).GetStream() {
				t.Errorf("%s: the upstream got %d requests, or no stream", b.name, len(got))
			}
		}
	}

	// Errors: an event that is no request, and a model not served.
	for _, c := range []struct{ msg, want string }{
		{`{"type":"response.cancel"}`, `"status":400`},
		{`{"type":"response.create","model":"no-such-model","input":"hi"}`, `"status":404`},
	} {
		if err := conn.SendRaw(ctx, json.RawMessage(c.msg)); err != nil {
			t.Fatal(err)
		}
		raw, err := conn.RecvRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(raw); !strings.Contains(s, `"type":"error"`) || !strings.Contains(s, c.want) || !strings.Contains(s, `"error":{`) {
			t.Errorf("%s answered %s", c.msg, s)
		}
	}
	// The connection still serves.
	if err := conn.SendRaw(ctx, json.RawMessage(`{"type":"response.create","model":"via-messages","input":"Say hello."}`)); err != nil {
		t.Fatal(err)
	}
	if _, text, _ := receive(t); text != "Hello there!" {
		t.Errorf("after the errors: %q", text)
	}

	// A wrong key: the upgrade is allowed, every request refused with 401.
	bad := openai.NewClient(option.WithBaseURL(g.url+"/v1"), option.WithAPIKey("sk-wrong"), option.WithMaxRetries(0))
	if c2, err := bad.Beta.Responses.Connect(ctx, openai.BetaResponseConnectionOptions{}); err == nil {
		defer func() { _ = c2.Close() }()
		_ = c2.SendRaw(ctx, json.RawMessage(`{"type":"response.create","model":"via-messages","input":"hi"}`))
		raw, err := c2.RecvRaw(ctx)
		if err != nil || !strings.Contains(string(raw), `"status":401`) {
			t.Errorf("a wrong key: %s %v", raw, err)
		}
	} else if !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong key: %v", err)
	}
	// A plain GET is no upgrade.
	resp, err := http.Get(g.url + "/v1/responses")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Errorf("a plain GET /v1/responses answered %d", resp.StatusCode)
	}
}
