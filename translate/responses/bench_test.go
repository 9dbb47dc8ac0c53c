package responses_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/responses"
	"github.com/parleyhq/parley/translate/sse"
)

// BenchmarkRequest decodes a client request (reasoning, a function call
// and its output sent back as items) and encodes it for an upstream.
func BenchmarkRequest(b *testing.B) {
	body, err := os.ReadFile(casesDir + "/tool_round_trip_items/request.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := responses.Client{}.DecodeRequest(&translate.Incoming{Body: body})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (responses.Upstream{}).EncodeRequest(req, translate.Target{Model: "m"}); err != nil {
			b.Fatal(err)
		}
	}
}

// stream500 is an upstream stream of 500 events: created, in_progress, a
// message item with one text part of 492 deltas, completed.
func stream500() []byte {
	var s strings.Builder
	resp := `{"id":"resp_1","object":"response","created_at":1741476542,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1","output":[],"usage":null}`
	seq := 0
	ev := func(typ, body string) {
		fmt.Fprintf(&s, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, body)
		seq++
	}
	ev("response.created", `"response":`+resp)
	ev("response.in_progress", `"response":`+resp)
	ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	ev("response.content_part.added", `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`)
	for i := 0; i < 492; i++ {
		ev("response.output_text.delta", fmt.Sprintf(`"item_id":"msg_1","output_index":0,"content_index":0,"delta":"word %d ","logprobs":[]`, i))
	}
	ev("response.output_text.done", `"item_id":"msg_1","output_index":0,"content_index":0,"text":"...","logprobs":[]`)
	ev("response.content_part.done", `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":"..."}`)
	ev("response.output_item.done", `"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"..."}],"role":"assistant"}`)
	ev("response.completed", `"response":{"id":"resp_1","object":"response","created_at":1741476542,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1","output":[],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":984,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":996}}`)
	return []byte(s.String())
}

// BenchmarkStream500 decodes a 500-event upstream stream and encodes it
// for a client, as a responses-to-responses route does.
func BenchmarkStream500(b *testing.B) {
	in := stream500()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		w := sse.NewWriter(io.Discard)
		enc := responses.Client{}.NewStreamEncoder(&parleyv1.Request{})
		dec := responses.Upstream{}.NewStreamDecoder(translate.Target{})
		n := 0
		for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_RESPONSES, bytes.NewReader(in), dec, translate.StreamLimits{}) {
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(w, ev); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n < 495 {
			b.Fatalf("%d events", n)
		}
	}
}
