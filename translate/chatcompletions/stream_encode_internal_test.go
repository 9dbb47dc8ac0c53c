package chatcompletions

import (
	"bytes"
	"testing"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// TestTextChunkIsTheMarshalledChunk: the chunk textChunk writes without
// reflection is, byte for byte, the one jsonx.Marshal writes, whatever the
// text (quotes, line breaks, HTML, control characters, non-ASCII) and the
// stream's head (service tier and fingerprint after the choices).
func TestTextChunkIsTheMarshalledChunk(t *testing.T) {
	tier, fp := "default", "fp_7e2b"
	heads := []chunk{
		{ID: "chatcmpl-1", Object: "chat.completion.chunk", Created: 1764000000, Model: "m"},
		{ID: `id"with\quotes`, Object: "chat.completion.chunk", Created: 0, Model: "<m&m>", ServiceTier: &tier, SystemFingerprint: &fp},
	}
	texts := []string{"", "Hello", "a \"quoted\" \\ line\nbreak\ttab", "<script>&amp;</script>", "\u0000\u001f\u2028\u2029", "héllo 世界 🌍"}
	for _, h := range heads {
		s := &streamEncoder{head: h}
		for _, text := range texts {
			for _, reasoning := range []bool{false, true} {
				c := chunkChoice{Index: 2, Delta: delta{Content: &text}}
				if reasoning {
					c.Delta = delta{ReasoningContent: &text}
				}
				got, ok := s.textChunk(&c)
				if !ok {
					t.Fatalf("no text chunk for %q", text)
				}
				want := h
				want.Choices = []chunkChoice{c}
				wantBytes, err := jsonx.Marshal(want)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, wantBytes) {
					t.Errorf("text %q:\n got %s\nwant %s", text, got, wantBytes)
				}
			}
		}
		// Any other chunk is not a text chunk.
		role := delta{Role: "assistant", Content: new("x")}
		finish := "stop"
		for _, c := range []chunkChoice{{Delta: role}, {Delta: delta{Content: new("x")}, FinishReason: &finish}, {Delta: delta{}}} {
			if _, ok := s.textChunk(&c); ok {
				t.Errorf("%+v was written as a text chunk", c)
			}
		}
	}
}
