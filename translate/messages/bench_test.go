package messages_test

import (
	"bytes"
	"fmt"
	"io"
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
