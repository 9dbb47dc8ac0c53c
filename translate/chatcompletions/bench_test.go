package chatcompletions_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/sse"
)

// BenchmarkRequest decodes a client request (a tool round trip with a
// strict tool) and encodes it for an upstream.
func BenchmarkRequest(b *testing.B) {
	body, err := os.ReadFile(casesDir + "/tool_round_trip/request.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := chatcompletions.Client{}.DecodeRequest(&translate.Incoming{Body: body})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (chatcompletions.Upstream{}).EncodeRequest(req, translate.Target{Model: "m"}); err != nil {
			b.Fatal(err)
		}
	}
}

// stream500 is an upstream stream of 500 chunks: the role chunk, 497
// content deltas, the finish chunk and the usage chunk, then [DONE].
func stream500() []byte {
	var s strings.Builder
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1","system_fingerprint":"fp_1",`
	s.WriteString("data: " + head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := 0; i < 497; i++ {
		fmt.Fprintf(&s, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word %d \"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", head, i)
	}
	s.WriteString("data: " + head + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	s.WriteString("data: " + head + `"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":994,"total_tokens":1006}}` + "\n\n")
	s.WriteString("data: [DONE]\n\n")
	return []byte(s.String())
}

// BenchmarkStream500 decodes a 500-chunk upstream stream and encodes it
// for a client that asked for usage, as a chat-to-chat route does.
func BenchmarkStream500(b *testing.B) {
	in := stream500()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		w := sse.NewWriter(io.Discard)
		enc := chatcompletions.Client{}.NewStreamEncoder(&parleyv1.Request{StreamUsage: new(true)})
		dec := chatcompletions.Upstream{}.NewStreamDecoder(translate.Target{})
		n := 0
		for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_CHAT_COMPLETIONS, bytes.NewReader(in), dec, translate.StreamLimits{}) {
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
