package cross_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// benchRequest decodes a client request of about 2 KB and encodes it for
// an upstream of the other dialect.
func benchRequest(b *testing.B, file, from, to string) {
	body, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	f, u := dialects[from], dialects[to]
	in := &translate.Incoming{Model: "models/m", Body: body}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := f.client.DecodeRequest(in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := u.upstream.EncodeRequest(req, translate.Target{Model: u.model}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequestMessagesToContentGeneration(b *testing.B) {
	benchRequest(b, "../../testdata/messages/parallel_tool_results/request.json", "messages", "generate_content")
}

func BenchmarkRequestContentGenerationToMessages(b *testing.B) {
	benchRequest(b, "../../testdata/generate_content/sdk_function_calling/request.json", "generate_content", "messages")
}

// benchStream decodes a 500-event upstream stream and encodes it for a
// client of the other dialect.
func benchStream(b *testing.B, in []byte, from, to string) {
	f, u := dialects[from], dialects[to]
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		w := sse.NewWriter(io.Discard)
		enc := f.client.NewStreamEncoder(&parleyv1.Request{})
		for ev, err := range translate.DecodeStream(u.upstream.Dialect(), bytes.NewReader(in), u.upstream.NewStreamDecoder(translate.Target{Model: u.model}), translate.StreamLimits{}) {
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(w, ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// A content-generation stream of 500 text chunks, each with usage, as the
// service sends them.
func BenchmarkStream500ContentGenerationToMessages(b *testing.B) {
	var s strings.Builder
	for i := range 499 {
		fmt.Fprintf(&s, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"word %d \"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":%d,\"totalTokenCount\":%d},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"abc\"}\r\n\r\n", i, i, i+9)
	}
	s.WriteString("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"end\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":500,\"totalTokenCount\":509},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"abc\"}\r\n\r\n")
	benchStream(b, []byte(s.String()), "messages", "generate_content")
}

// A messages stream of one text block with 496 deltas: 500 events in all
// besides the closing ones.
func BenchmarkStream500MessagesToContentGeneration(b *testing.B) {
	var s strings.Builder
	s.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n")
	s.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range 496 {
		fmt.Fprintf(&s, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d \"}}\n\n", i)
	}
	s.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	s.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":500}}\n\n")
	s.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	benchStream(b, []byte(s.String()), "generate_content", "messages")
}
