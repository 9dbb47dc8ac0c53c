package generatecontent_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/sse"
)

// BenchmarkRequest decodes a client request of about 2 KB (a declaration
// in the Schema form, calls and their responses) and encodes it for an
// upstream.
func BenchmarkRequest(b *testing.B) {
	body, err := os.ReadFile(casesDir + "/sdk_function_calling/request.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "m", Body: body})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (generatecontent.Upstream{}).EncodeRequest(req, translate.Target{Model: "m"}); err != nil {
			b.Fatal(err)
		}
	}
}

// stream500 is an upstream stream of 500 chunks of text, the last with
// the finish reason.
func stream500() []byte {
	var s strings.Builder
	for i := 0; i < 499; i++ {
		fmt.Fprintf(&s, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"word %d \"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":%d,\"totalTokenCount\":%d},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"abc\"}\r\n\r\n", i, i, i+9)
	}
	s.WriteString("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"end\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":500,\"totalTokenCount\":509},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"abc\"}\r\n\r\n")
	return []byte(s.String())
}

// BenchmarkStream500 decodes a 500-chunk upstream stream and encodes it
// for a client.
func BenchmarkStream500(b *testing.B) {
	in := stream500()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		w := sse.NewWriter(io.Discard)
		enc := generatecontent.Client{}.NewStreamEncoder(&parleyv1.Request{})
		dec := generatecontent.Upstream{}.NewStreamDecoder(translate.Target{})
		for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_GENERATE_CONTENT, bytes.NewReader(in), dec, translate.StreamLimits{}) {
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(w, ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}
