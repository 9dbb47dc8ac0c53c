package cross_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// The benchmarks are the shared ones (translate/internal/dialecttest
// says what they measure), for a client of one dialect served by an
// upstream of another.

func BenchmarkRequestMessagesToContentGeneration(b *testing.B) {
	dialecttest.BenchmarkRequest(b, dialecttest.Messages, dialecttest.GenerateContent)
}

func BenchmarkRequestContentGenerationToMessages(b *testing.B) {
	dialecttest.BenchmarkRequest(b, dialecttest.GenerateContent, dialecttest.Messages)
}

func BenchmarkStream500ContentGenerationToMessages(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.Messages, dialecttest.GenerateContent)
}

func BenchmarkStream500MessagesToContentGeneration(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.GenerateContent, dialecttest.Messages)
}

// BenchmarkAgentToolsToContentGeneration encodes Claude Code's recorded
// request, 24 tools with full JSON Schemas, for a content-generation
// upstream: the schema form is chosen per tool on every request.
func BenchmarkAgentToolsToContentGeneration(b *testing.B) {
	body, err := os.ReadFile("../../testdata/agent_tools/claude_code/request.json")
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEncode(b, dialecttest.Messages, http.Header{"Anthropic-Beta": {"mid-conversation-system-2026-04-07"}}, body,
		dialecttest.GenerateContent.Upstream, translate.Target{Model: "gemini-2.5-pro", Upstream: "gemini"})
}

// A chat-completions client of a messages upstream: the load benchmark's
// stream chat>messages route.
func BenchmarkStream500MessagesToChatCompletions(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.ChatCompletions, dialecttest.Messages)
}

// The load benchmark's stream chat>messages route on a recorded stream.
func BenchmarkStreamTextMessagesToChatCompletions(b *testing.B) {
	dialecttest.BenchmarkStreamText(b, dialecttest.ChatCompletions, dialecttest.Messages)
}

// The load benchmark's stream messages>chat route on a recorded stream.
func BenchmarkStreamTextChatCompletionsToMessages(b *testing.B) {
	dialecttest.BenchmarkStreamText(b, dialecttest.Messages, dialecttest.ChatCompletions)
}

// The load benchmark's stream responses>messages route on a recorded
// stream: the snapshots, items and parts a responses client is sent.
func BenchmarkStreamTextMessagesToResponses(b *testing.B) {
	dialecttest.BenchmarkStreamText(b, dialecttest.Responses, dialecttest.Messages)
}

// The load benchmark's stream generate>messages route on a recorded
// stream: a content-generation client's text chunks and its last chunk.
func BenchmarkStreamTextMessagesToContentGeneration(b *testing.B) {
	dialecttest.BenchmarkStreamText(b, dialecttest.GenerateContent, dialecttest.Messages)
}

// The load benchmark's stream messages>responses route on a recorded
// stream: the events around the deltas are read by reflection, off the
// stream's stack.
func BenchmarkStreamTextResponsesToMessages(b *testing.B) {
	dialecttest.BenchmarkStreamText(b, dialecttest.Messages, dialecttest.Responses)
}

// The load benchmark's whole generate>messages route.
func BenchmarkReplyMessagesToContentGeneration(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.GenerateContent, dialecttest.Messages)
}

// The load benchmark's whole chat>messages route.
func BenchmarkReplyMessagesToChatCompletions(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.ChatCompletions, dialecttest.Messages)
}

// The load benchmark's whole messages>chat route.
func BenchmarkReplyChatCompletionsToMessages(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.Messages, dialecttest.ChatCompletions)
}

// BenchmarkAgentToolsToMessages encodes Codex's recorded request (a
// responses client, with its tools' JSON Schemas) for a messages upstream:
// each tool's schema is adjusted for the service on every request.
func BenchmarkAgentToolsToMessages(b *testing.B) {
	body, err := os.ReadFile("../../testdata/agent_tools/codex/request.json")
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEncode(b, dialecttest.Responses, http.Header{}, body,
		dialecttest.Messages.Upstream, translate.Target{Model: "claude-sonnet-4-5", Upstream: "anthropic"})
}

// The load benchmark's chat>messages route, a text request.
func BenchmarkRequestTextMessagesToChatCompletions(b *testing.B) {
	dialecttest.BenchmarkRequestText(b, dialecttest.ChatCompletions, dialecttest.Messages, "chat_completions")
}

// The load benchmark's messages>chat route, a text request.
func BenchmarkRequestTextChatCompletionsToMessages(b *testing.B) {
	dialecttest.BenchmarkRequestText(b, dialecttest.Messages, dialecttest.ChatCompletions, "messages")
}

// BenchmarkAgentStreamFromMessages: a messages upstream's text stream for
// Codex's recorded request (a responses client, with its instructions and
// tools): every snapshot of the response echoes them.
func BenchmarkAgentStreamFromMessages(b *testing.B) {
	body, err := os.ReadFile("../../testdata/agent_tools/codex/request.json")
	if err != nil {
		b.Fatal(err)
	}
	client := *dialecttest.Responses
	client.ClientRequest, err = client.Client.DecodeRequest(client.Incoming(http.Header{}, client.Model, body))
	if err != nil {
		b.Fatal(err)
	}
	dialecttest.BenchmarkStreamText(b, &client, dialecttest.Messages)
}

// BenchmarkAgentConversationToChatCompletions encodes an agent's long
// conversation from a messages client (60 rounds of a question, a tool
// call and its result) for a chat-completions upstream: the per-turn
// costs of a request that is sent again, one round longer, on every step.
func BenchmarkAgentConversationToChatCompletions(b *testing.B) {
	benchmarkEncode(b, dialecttest.Messages, http.Header{}, agentConversation(),
		dialecttest.ChatCompletions.Upstream, translate.Target{Model: "gpt-4.1", Upstream: "openai"})
}

// BenchmarkAgentConversationFromMessages decodes that conversation from
// the messages client that sent it.
func BenchmarkAgentConversationFromMessages(b *testing.B) {
	benchmarkDecode(b, dialecttest.Messages, agentConversation())
}

// benchmarkDecode decodes body from a client of s.
func benchmarkDecode(b *testing.B, s *dialecttest.Spec, body []byte) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Client.DecodeRequest(s.Incoming(http.Header{}, s.Model, body)); err != nil {
			b.Fatal(err)
		}
	}
}

// agentConversation is a messages request of 60 rounds of a question, a
// tool call and its result.
func agentConversation() []byte {
	var msgs []string
	for i := range 60 {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"Step %d: read the next file and say what it does."}]}`, i),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":"toolu_%d","name":"read_file","input":{"path":"src/file_%d.go"}}]}`, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"package main\n\nfunc main() {}\n"}]}`, i),
		)
	}
	return []byte(`{"model":"m","max_tokens":1024,"system":"You are a coding agent.","tools":[{"name":"read_file","description":"Reads a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],"messages":[` + strings.Join(msgs, ",") + `]}`)
}

// BenchmarkAgentConversationToMessages encodes the same agent loop, from
// a chat-completions client, for a messages upstream: the turns are
// normalised (tool messages become user turns) and each part encoded.
func BenchmarkAgentConversationToMessages(b *testing.B) {
	var msgs []string
	for i := range 60 {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"user","content":"Step %d: read the next file and say what it does."}`, i),
			fmt.Sprintf(`{"role":"assistant","content":"Reading it.","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"src/file_%d.go\"}"}}]}`, i, i),
			fmt.Sprintf(`{"role":"tool","tool_call_id":"call_%d","content":"package main\n\nfunc main() {}\n"}`, i),
		)
	}
	body := []byte(`{"model":"m","messages":[{"role":"system","content":"You are a coding agent."},` + strings.Join(msgs, ",") + `],"tools":[{"type":"function","function":{"name":"read_file","description":"Reads a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]}`)
	benchmarkEncode(b, dialecttest.ChatCompletions, http.Header{}, body,
		dialecttest.Messages.Upstream, translate.Target{Model: "claude-sonnet-4-5", Upstream: "anthropic"})
}

// BenchmarkAgentLoopToContentGeneration encodes a messages client's
// agent loop (a question, then 60 rounds of a tool call and its result,
// turns alternating as Claude Code sends them) for a content-generation
// upstream: the turns are in normal form already, and go through as they
// are.
func BenchmarkAgentLoopToContentGeneration(b *testing.B) {
	benchmarkAgentLoop(b, dialecttest.GenerateContent.Upstream, translate.Target{Model: "gemini-2.5-pro", Upstream: "google"})
}

// BenchmarkAgentLoopToConverse encodes that loop for Bedrock's Converse
// API.
func BenchmarkAgentLoopToConverse(b *testing.B) {
	benchmarkAgentLoop(b, converse.Upstream{}, translate.Target{Model: "anthropic.claude-sonnet-4-5", Upstream: "bedrock"})
}

func benchmarkAgentLoop(b *testing.B, up translate.Upstream, target translate.Target) {
	msgs := []string{`{"role":"user","content":"Read the files one by one and say what each does."}`}
	for i := range 60 {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Reading file %d."},{"type":"tool_use","id":"toolu_%d","name":"read_file","input":{"path":"src/file_%d.go"}}]}`, i, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"package main\n\nfunc main() {}\n"}]}`, i),
		)
	}
	body := []byte(`{"model":"m","max_tokens":1024,"messages":[` + strings.Join(msgs, ",") + `]}`)
	benchmarkEncode(b, dialecttest.Messages, http.Header{}, body, up, target)
}

// benchmarkEncode decodes body from a client of the dialect s once, and
// encodes the request for up.
func benchmarkEncode(b *testing.B, s *dialecttest.Spec, h http.Header, body []byte, up translate.Upstream, target translate.Target) {
	req, err := s.Client.DecodeRequest(s.Incoming(h, s.Model, body))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := up.EncodeRequest(req, target); err != nil {
			b.Fatal(err)
		}
	}
}

// The load benchmark's messages>responses route, a text request.
func BenchmarkRequestTextMessagesToResponses(b *testing.B) {
	dialecttest.BenchmarkRequestText(b, dialecttest.Messages, dialecttest.Responses, "messages")
}

// The load benchmark's responses>messages route, a text request.
func BenchmarkRequestTextResponsesToMessages(b *testing.B) {
	dialecttest.BenchmarkRequestText(b, dialecttest.Responses, dialecttest.Messages, "responses")
}

// The load benchmark's whole messages>responses route.
func BenchmarkReplyResponsesToMessages(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.Messages, dialecttest.Responses)
}

// The load benchmark's whole responses>messages route.
func BenchmarkReplyMessagesToResponses(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.Responses, dialecttest.Messages)
}

// The load benchmark's generate>messages route, a text request.
func BenchmarkRequestTextContentGenerationToMessages(b *testing.B) {
	dialecttest.BenchmarkRequestText(b, dialecttest.GenerateContent, dialecttest.Messages, "generate_content")
}

// The load benchmark's whole messages>generate route.
func BenchmarkReplyContentGenerationToMessages(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.Messages, dialecttest.GenerateContent)
}

// The load benchmark's messages>generate route, a text request.
func BenchmarkRequestTextMessagesToContentGeneration(b *testing.B) {
	dialecttest.BenchmarkRequestText(b, dialecttest.Messages, dialecttest.GenerateContent, "messages")
}

// BenchmarkLongTurn decodes a messages request as long as an agent's (a
// 20 KB system prompt, a 64 KB turn with a line break every few dozen
// bytes, as the load benchmark's -prompt-kb 64 pads it) and encodes it
// for an upstream of each other dialect.
func BenchmarkLongTurn(b *testing.B) {
	line := "Revenue for the quarter was $48.2 million, up 12% on the year; costs were $31.5 million.\n"
	system, turn := strings.Repeat(line, 20<<10/len(line)), strings.Repeat(line, 64<<10/len(line))
	body, err := json.Marshal(map[string]any{"model": "m", "max_tokens": 1024, "system": system,
		"messages": []map[string]any{{"role": "user", "content": turn}, {"role": "assistant", "content": "Noted."}, {"role": "user", "content": "Sum it up."}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Decode", func(b *testing.B) { benchmarkDecode(b, dialecttest.Messages, body) })
	for _, up := range []*dialecttest.Spec{dialecttest.ChatCompletions, dialecttest.Responses, dialecttest.GenerateContent} {
		b.Run(up.Name(), func(b *testing.B) {
			benchmarkEncode(b, dialecttest.Messages, http.Header{}, body, up.Upstream, translate.Target{Model: up.Model, Upstream: "up"})
		})
	}
}
