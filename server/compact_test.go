package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// TestCompaction: the Codex CLI compacts a long session through
// POST /v1/responses/compact and has no fallback. Through openai-go's
// Responses.Compact, every upstream dialect answers with the user's
// messages and exactly one compaction item, its model having written the
// summary from the whole conversation; Codex's next turn, the compaction
// item first, reaches the upstream with the summary as a user turn, and
// the conversation goes on (guide §8 item 13; issue 18, item 7).
func TestCompaction(t *testing.T) {
	g := startGateway(t, gwExtra{})
	ctx := context.Background()
	client := openai.NewClient(option.WithBaseURL(g.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0))
	for _, b := range dialectList {
		t.Run(b.name, func(t *testing.T) {
			fake := g.fakes[b.name]
			fake.set("text", nil)
			history := `[{"role":"user","content":"Fix the bug in main.go."},` +
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The loop in main.go stops one short."}]},` +
				`{"role":"user","content":"Also add a test for it."}]`
			body := `{"model":"via-` + b.name + `","instructions":"You are a coding agent.","input":` + history +
				`,"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`
			c, err := client.Responses.Compact(ctx, responses.ResponseCompactParams{}, option.WithRequestBody("application/json", []byte(body)))
			if err != nil {
				t.Fatal(err)
			}
			if c.Object != "response.compaction" || c.ID == "" || c.CreatedAt == 0 {
				t.Errorf("the compacted response: %s", c.RawJSON())
			}
			var users []string
			compactions := 0
			for i, it := range c.Output {
				switch it.Type {
				case "message":
					if it.Role != "user" {
						t.Errorf("output %d is a %s message; only the user's are kept", i, it.Role)
					}
					users = append(users, it.Content[0].Text)
				case "compaction":
					compactions++
					if i != len(c.Output)-1 || it.EncryptedContent == "" || !strings.HasPrefix(it.ID, "cmp_") {
						t.Errorf("compaction item %d of %d: %s", i, len(c.Output), it.RawJSON())
					}
				default:
					t.Errorf("output %d is a %s item", i, it.Type)
				}
			}
			if compactions != 1 || strings.Join(users, "|") != "Fix the bug in main.go.|Also add a test for it." {
				t.Errorf("%d compaction items, user messages %q", compactions, users)
			}
			if c.Usage.OutputTokens == 0 {
				t.Errorf("usage %s", c.Usage.RawJSON())
			}

			// The upstream wrote the summary from the whole conversation,
			// asked for text alone.
			got := fake.requests()
			if len(got) != 1 {
				t.Fatalf("the upstream got %d requests", len(got))
			}
			asked := decodeAt(t, b, got[0])
			if len(asked.GetTools()) != 0 || asked.GetStream() {
				t.Errorf("the summary was asked for with tools %v, stream %v", asked.GetTools(), asked.GetStream())
			}
			text := allText(asked)
			for _, want := range []string{"You are a coding agent.", "stops one short", "Also add a test", "being compacted"} {
				if !strings.Contains(text, want) {
					t.Errorf("the summary request lacks %q: %s", want, text)
				}
			}

			// Codex's next turn: what it kept, then a new message.
			var kept []any
			for _, it := range c.Output {
				var m map[string]any
				if err := json.Unmarshal([]byte(it.RawJSON()), &m); err != nil {
					t.Fatal(err)
				}
				kept = append(kept, m)
			}
			kept = append(kept, map[string]any{"role": "user", "content": "Now run the tests."})
			input, _ := json.Marshal(kept)
			fake.set("text", nil)
			r, err := client.Responses.New(ctx, responses.ResponseNewParams{}, option.WithRequestBody("application/json",
				[]byte(`{"model":"via-`+b.name+`","input":`+string(input)+`}`)))
			if err != nil {
				t.Fatal(err)
			}
			if r.OutputText() != "Hello there!" {
				t.Errorf("the next turn's answer: %q", r.OutputText())
			}
			next := fake.requests()
			if len(next) != 1 {
				t.Fatalf("the upstream got %d requests for the next turn", len(next))
			}
			text = allText(decodeAt(t, b, next[0]))
			if !strings.Contains(text, "was compacted; this is its summary:\n\nHello there!") || !strings.Contains(text, "Now run the tests.") {
				t.Errorf("the next turn did not carry the summary: %s", text)
			}
			if strings.Contains(string(next[0].Body), "compaction") && b.name != "responses" || strings.Contains(string(next[0].Body), `"type":"compaction"`) {
				t.Errorf("the sealed compaction item itself went upstream: %s", next[0].Body)
			}
		})
	}
}

// allText is the text of a request's instructions and turns.
func allText(req *parleyv1.Request) string {
	var b strings.Builder
	for _, p := range req.GetInstructions() {
		b.WriteString(p.GetText().GetText() + "\n")
	}
	for _, m := range req.GetMessages() {
		for _, p := range m.GetParts() {
			b.WriteString(p.GetText().GetText() + "\n")
		}
	}
	return b.String()
}

// TestCompactionTrigger: the Codex CLI, with its provider named OpenAI,
// compacts by ending a streamed request with a compaction_trigger item,
// and fails the turn unless the response holds exactly one compaction
// item. Through openai-go, streamed (read with its stream reader) and
// whole, every upstream dialect answers so; the upstream was asked for
// the summary, not for an answer (guide §8 item 13).
func TestCompactionTrigger(t *testing.T) {
	g := startGateway(t, gwExtra{})
	ctx := context.Background()
	client := openai.NewClient(option.WithBaseURL(g.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0))
	for _, b := range dialectList {
		for _, stream := range []bool{true, false} {
			t.Run(b.name+map[bool]string{true: "/stream", false: "/whole"}[stream], func(t *testing.T) {
				fake := g.fakes[b.name]
				fake.set("text", nil)
				body := []byte(`{"model":"via-` + b.name + `","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
					`,"input":[{"role":"user","content":"Fix the bug in main.go."},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}]},{"type":"compaction_trigger"}]` +
					`,"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{}}}]}`)
				var r *responses.Response
				if stream {
					s := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{}, option.WithRequestBody("application/json", body))
					for s.Next() {
						if ev := s.Current(); ev.Type == "response.completed" {
							done := ev.Response
							r = &done
						}
					}
					if err := s.Err(); err != nil {
						t.Fatal(err)
					}
				} else {
					whole, err := client.Responses.New(ctx, responses.ResponseNewParams{}, option.WithRequestBody("application/json", body))
					if err != nil {
						t.Fatal(err)
					}
					r = whole
				}
				if r == nil || len(r.Output) != 1 || r.Output[0].Type != "compaction" || r.Output[0].EncryptedContent == "" || r.Status != "completed" {
					t.Fatalf("the response: %v", r)
				}
				got := fake.requests()
				if len(got) != 1 {
					t.Fatalf("the upstream got %d requests", len(got))
				}
				asked := decodeAt(t, b, got[0])
				if text := allText(asked); !strings.Contains(text, "being compacted") || len(asked.GetTools()) != 0 || asked.GetStream() {
					t.Errorf("the upstream was not asked for the summary alone: tools %d, stream %v, %s", len(asked.GetTools()), asked.GetStream(), text)
				}
				if strings.Contains(string(got[0].Body), "compaction_trigger") {
					t.Errorf("the trigger went upstream: %s", got[0].Body)
				}
			})
		}
	}
}
