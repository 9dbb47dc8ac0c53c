package cross_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
)

// sharedCase is a dialect whose service makes opaque reasoning, with a
// reply of that service and the way its client sends the reply back.
type sharedCase struct {
	name     string
	client   translate.Client
	upstream translate.Upstream
	reply    string // fixture, a whole reply of the service
	raw      string // the opaque value in it, as the service made it
	// next is the client's next request carrying back the reply it got.
	next func(t *testing.T, reply map[string]any) []byte
}

func sharedCases(t *testing.T) []sharedCase {
	t.Helper()
	rawOf := func(path, field string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(b), `"`+field+`": "`)
		v, _, _ := strings.Cut(rest, `"`)
		if !ok || v == "" {
			t.Fatalf("%s holds no %s", path, field)
		}
		return v
	}
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const (
		msgs = "../../testdata/messages/response_thinking_tool_call/response.json"
		resp = "../../testdata/responses/function_call_response/response.json"
		gc   = "../../testdata/generate_content/response_text_signature/response.json"
	)
	return []sharedCase{
		{"messages", messages.Client{}, messages.Upstream{}, msgs, rawOf(msgs, "signature"), func(t *testing.T, r map[string]any) []byte {
			return marshal(map[string]any{"model": "m", "max_tokens": 64, "messages": []any{
				map[string]any{"role": "user", "content": "q"},
				map[string]any{"role": "assistant", "content": r["content"]},
				map[string]any{"role": "user", "content": "next"},
			}})
		}},
		{"responses", responses.Client{}, responses.Upstream{}, resp, rawOf(resp, "encrypted_content"), func(t *testing.T, r map[string]any) []byte {
			input := []any{map[string]any{"role": "user", "content": "q"}}
			for _, it := range r["output"].([]any) {
				input = append(input, it)
				if it.(map[string]any)["type"] == "function_call" {
					input = append(input, map[string]any{"type": "function_call_output", "call_id": it.(map[string]any)["call_id"], "output": "sunny"})
				}
			}
			return marshal(map[string]any{"model": "m", "input": input})
		}},
		{"generate_content", generatecontent.Client{}, generatecontent.Upstream{}, gc, rawOf(gc, "thoughtSignature"), func(t *testing.T, r map[string]any) []byte {
			content := r["candidates"].([]any)[0].(map[string]any)["content"]
			return marshal(map[string]any{"contents": []any{
				map[string]any{"role": "user", "parts": []any{map[string]any{"text": "q"}}},
				content,
				map[string]any{"role": "user", "parts": []any{map[string]any{"text": "next"}}},
			}})
		}},
	}
}

// With two upstreams of one dialect configured (two accounts, two
// regions), a client of that dialect gets the opaque values of either
// sealed with the name of its maker, so that they go back to it and never
// to the other, which would refuse them (issue 23). With one upstream of
// the dialect the value goes out as the service made it, as before.
func TestSharedDialectSealsNameTheMaker(t *testing.T) {
	for _, c := range sharedCases(t) {
		t.Run(c.name, func(t *testing.T) {
			body, err := os.ReadFile(c.reply)
			if err != nil {
				t.Fatal(err)
			}
			for _, shared := range []bool{false, true} {
				resp, err := c.upstream.DecodeResponse(translate.Target{Upstream: "acct-a", Model: "m", Shared: shared}, body)
				if err != nil {
					t.Fatal(err)
				}
				req := &parleyv1.Request{Model: "m"}
				out, err := c.client.EncodeResponse(req, resp)
				if err != nil {
					t.Fatal(err)
				}
				if bare := strings.Contains(string(out), c.raw); bare == shared {
					t.Errorf("shared=%v: the client got the value bare: %v", shared, bare)
				}
				var reply map[string]any
				if err := json.Unmarshal(out, &reply); err != nil {
					t.Fatal(err)
				}
				next, err := c.client.DecodeRequest(&translate.Incoming{Body: c.next(t, reply), Model: "m"})
				if err != nil {
					t.Fatal(err)
				}
				toMaker, err := c.upstream.EncodeRequest(next, translate.Target{Upstream: "acct-a", Model: "m"})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(toMaker.Body), c.raw) {
					t.Errorf("shared=%v: the maker did not get its value back:\n%s", shared, toMaker.Body)
				}
				toOther, err := c.upstream.EncodeRequest(next, translate.Target{Upstream: "acct-b", Model: "m"})
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Contains(string(toOther.Body), c.raw); got == shared {
					// Unshared, the maker is unknown and the value goes to
					// any service of its dialect (the refusal retry covers
					// a wrong guess); shared, never to another.
					t.Errorf("shared=%v: the other upstream got the value: %v", shared, got)
				}
				if shared && strings.Contains(string(toMaker.Body), "UFJMWQ") {
					t.Errorf("a seal went to the upstream:\n%s", toMaker.Body)
				}
			}
		})
	}
}
