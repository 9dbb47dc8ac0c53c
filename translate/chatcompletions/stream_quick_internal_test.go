package chatcompletions

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
)

// quickVariants are chunks as services other than the recorded ones write
// them: members in another order, extras the decoder does not read,
// nulls, escapes.
var quickVariants = []string{
	`{"choices":[{"delta":{"content":"Hi"},"index":0,"finish_reason":null}],"model":"m","created":1,"object":"chat.completion.chunk","id":"c1"}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"service_tier":"default","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"obfuscation":"x1y2","usage":null}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"content":"a \"q\" \\ \n \u00e9 \ud83c\udf0d"},"native_finish_reason":null,"content_filter_results":{"hate":{"filtered":false}}}]}`,
	`{"id":"c1","choices":[{"index":1,"delta":{"reasoning":"think"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":1}}}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}},{"index":1,"function":{"arguments":"{\"a\":1}"}}]}}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":null,"refusal":"no","annotations":null}}],"error":null}`,
	`{"id":"c1","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
	`{"id":"c1","choices":null,"created":-5}`,
	`{"choices":[{"index":0,"delta":null}]}`,
	// Chunks the quick reader leaves to the reflective one.
	`{"id":"c1","id":"c2","choices":[]}`,
	`{"\u0069d":"c1","choices":[]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"annotations":[{"type":"url_citation","url_citation":{"url":"u","title":"t","start_index":0,"end_index":1}}]}}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{},"logprobs":{"content":[]}}]}`,
	`{"error":{"message":"boom","type":"server_error"}}`,
	`{"id":"c1","created":1.5,"choices":[]}`,
	`{"id":"c1","created":"1","choices":[]}`,
	`{"id":5,"choices":[]}`,
	`{"id":"c1","choices":[null]}`,
	`{"id":"c1","choices":{}}`,
	`{"id":"c1"} {}`,
	`[]`,
	`{"id":"c1","choices":[{"index":99999999999999999999,"delta":{}}]}`,
	"{\"id\":\"\xff\",\"choices\":[]}",
}

// clearUnknown zeroes every Unknown member, which the quick reader never
// fills (the stream decoder does not read them).
func clearUnknown(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			clearUnknown(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			clearUnknown(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).Name == "Unknown" {
				v.Field(i).SetZero()
				continue
			}
			clearUnknown(v.Field(i))
		}
	}
}

// checkQuick holds the quick reader to the reflective decoder on data
// (recorded.Same); head false leaves the header members (read only from
// the first chunk) out of the comparison, and the unknown members, which
// the quick reader never fills, are left out throughout.
func checkQuick(t *testing.T, data []byte, head bool) bool {
	t.Helper()
	var r chunkReader
	return recorded.Same(t, data, func(b []byte) (*chunk, bool) { return r.read(b, head) }, func(c *chunk) {
		clearUnknown(reflect.ValueOf(c))
		if !head {
			c.ID, c.Object, c.Model, c.SystemFingerprint, c.ServiceTier = "", "", "", nil, nil
		}
	})
}

func TestQuickChunkReadsAsTheReflectiveDecoder(t *testing.T) {
	chunks := recorded.DataLines(t, `chat.completion.chunk`)
	if len(chunks) < 50 {
		t.Fatalf("only %d recorded chunks", len(chunks))
	}
	for _, d := range chunks {
		for _, head := range []bool{true, false} {
			// Every recorded chunk but an error is read quickly.
			if !checkQuick(t, d, head) && !bytes.HasPrefix(d, []byte(`{"error":`)) {
				t.Errorf("the quick reader left a recorded chunk to reflection: %s", d)
			}
		}
	}
	left := 0
	for i, v := range quickVariants {
		if !checkQuick(t, []byte(v), true) {
			left++
			if i < 9 {
				t.Errorf("the quick reader left a plain chunk to reflection: %s", v)
			}
		}
	}
	if left != len(quickVariants)-9 {
		t.Errorf("the quick reader read %d chunks it should leave to reflection", len(quickVariants)-9-left)
	}
}

func FuzzQuickChunk(f *testing.F) {
	for _, d := range recorded.DataLines(f, `chat.completion.chunk`) {
		f.Add(d)
	}
	for _, v := range quickVariants {
		f.Add([]byte(v))
	}
	f.Add([]byte(`{"usage":{"0":0}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkQuick(t, data, true)
		checkQuick(t, data, false)
	})
}

// BenchmarkChunk reads a text chunk as OpenAI writes it, with the quick
// reader and with the reflective decoder.
func BenchmarkChunk(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-nano-2025-04-14","service_tier":"default","system_fingerprint":"fp_de604bd877","choices":[{"index":0,"delta":{"content":" Harmony"},"logprobs":null,"finish_reason":null}],"obfuscation":"k3Pq"}`)
	var r chunkReader
	recorded.Bench(b,
		func() bool { _, ok := r.read(data, false); return ok },
		func() error { var w chunk; return jsonx.Unmarshal(data, &w) })
}
