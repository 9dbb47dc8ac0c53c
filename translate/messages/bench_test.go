package messages_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/sse"
)

// BenchmarkRequest decodes a client request of about 2 KB (tools, a tool
// round trip and thinking history) and encodes it for an upstream.
func BenchmarkRequest(b *testing.B) {
	body, err := os.ReadFile(casesDir + "/sdk_thinking_history/request.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: body})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (messages.Upstream{}).EncodeRequest(req, translate.Target{Model: "m"}); err != nil {
			b.Fatal(err)
		}
	}
}

// agentRequest is a coding agent's request of about 130 KB: a system
// prompt, three tools and 40 turns of tool calls and results.
func agentRequest() []byte {
	var s strings.Builder
	s.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"system":[{"type":"text","text":"You are a coding agent.","cache_control":{"type":"ephemeral"}}],`)
	s.WriteString(`"tools":[`)
	for i, name := range []string{"Bash", "Read", "Edit"} {
		if i > 0 {
			s.WriteString(",")
		}
		fmt.Fprintf(&s, `{"name":%q,"description":"Runs %s.","input_schema":{"type":"object","properties":{"command":{"type":"string"},"path":{"type":"string"}},"required":["command"]}}`, name, name)
	}
	s.WriteString(`],"messages":[{"role":"user","content":"Fix the failing test."}`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&s, `,{"role":"assistant","content":[{"type":"text","text":"Looking at step %d."},{"type":"tool_use","id":"toolu_%02d","name":"Bash","input":{"command":"go test ./... -run Test%d"}}]}`, i, i, i)
		fmt.Fprintf(&s, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%02d","content":%q}]}`, i, strings.Repeat("ok  \tgithub.com/example/pkg\t0.012s\n", 80))
	}
	s.WriteString(`]}`)
	return []byte(s.String())
}

// BenchmarkUpstreamRequest builds the upstream request of a decoded
// same-dialect request both ways: encoded from the canonical form, and
// forwarded as it came with the model swapped (the fast path).
func BenchmarkUpstreamRequest(b *testing.B) {
	small, err := os.ReadFile(casesDir + "/sdk_thinking_history/request.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, body := range []struct {
		name string
		b    []byte
	}{{"2KB", small}, {"agent130KB", agentRequest()}} {
		req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Header: http.Header{}, Body: body.b})
		if err != nil {
			b.Fatal(err)
		}
		t := translate.Target{Model: "claude-sonnet-4-5-20250929", APIKey: "k"}
		b.Run(body.name+"/encode", func(b *testing.B) {
			b.SetBytes(int64(len(body.b)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (messages.Upstream{}).EncodeRequest(req, t); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(body.name+"/forward", func(b *testing.B) {
			b.SetBytes(int64(len(body.b)))
			b.ReportAllocs()
			src := &translate.Source{Dialect: req.GetExtensions().GetDialect(), Body: body.b}
			for b.Loop() {
				if _, ok, err := (messages.Upstream{}).Forward(req, src, t); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// stream500 is an upstream stream of 500 events: start, a text block of
// 495 deltas, the end.
func stream500() []byte {
	var s strings.Builder
	s.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n")
	s.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; i < 495; i++ {
		fmt.Fprintf(&s, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d \"}}\n\n", i)
	}
	s.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	s.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":990}}\n\n")
	s.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return []byte(s.String())
}

// BenchmarkStream500 decodes a 500-event upstream stream and encodes it
// for a client, as a messages-to-messages route does.
func BenchmarkStream500(b *testing.B) {
	in := stream500()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		w := sse.NewWriter(io.Discard)
		enc := messages.Client{}.NewStreamEncoder(&parleyv1.Request{})
		dec := messages.Upstream{}.NewStreamDecoder(translate.Target{})
		n := 0
		for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_MESSAGES, bytes.NewReader(in), dec, translate.StreamLimits{}) {
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(w, ev); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n < 500 {
			b.Fatalf("%d events", n)
		}
	}
}
