package messages_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/messages"
)

// The benchmarks BenchmarkRequest, BenchmarkStream500 and
// BenchmarkStreamText are the shared ones (translate/internal/dialecttest
// says what they measure) for a same-dialect route.

func BenchmarkRequest(b *testing.B) {
	dialecttest.BenchmarkRequest(b, dialecttest.Messages, dialecttest.Messages)
}

func BenchmarkReply(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.Messages, dialecttest.Messages)
}

func BenchmarkStream500(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.Messages, dialecttest.Messages)
}

func BenchmarkStreamText(b *testing.B) {
	dialecttest.BenchmarkStreamText(b, dialecttest.Messages, dialecttest.Messages)
}

// BenchmarkDecodeStreamText reads the recorded text stream and encodes
// nothing, as a same-dialect stream, relayed, is read.
func BenchmarkDecodeStreamText(b *testing.B) {
	dialecttest.BenchmarkDecodeStreamText(b, dialecttest.Messages)
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
	small, err := os.ReadFile(filepath.Join(dialecttest.Messages.Cases, dialecttest.Messages.BenchRequest))
	if err != nil {
		b.Fatal(err)
	}
	// The headers a coding agent sends with every request.
	agent := http.Header{
		"Anthropic-Version": {"2023-06-01"},
		"Anthropic-Beta":    {"claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14,context-management-2025-06-27"},
	}
	for _, body := range []struct {
		name   string
		b      []byte
		header http.Header
	}{{"2KB", small, http.Header{}}, {"2KB+betas", small, agent}, {"agent130KB", agentRequest(), agent}} {
		req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Header: body.header, Body: body.b})
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

// BenchmarkDecodeRequest reads a client's request into its canonical
// form, with the headers it came with: the load benchmark's short one
// with the version header, and Claude Code's agent turn with its version
// and beta headers.
func BenchmarkDecodeRequest(b *testing.B) {
	dialecttest.BenchmarkDecodeRequest(b, messages.Client{},
		dialecttest.DecodeCase{Name: "text", File: "cross_table/text/messages/request.json", Header: http.Header{"Anthropic-Version": {"2023-06-01"}}},
		dialecttest.DecodeCase{Name: "claude_code", File: "agent_tools/claude_code/request.json", Header: http.Header{
			"Anthropic-Version": {"2023-06-01"},
			"Anthropic-Beta":    {"claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14,context-management-2025-06-27"},
		}})
}
