package generatecontent

import (
	"encoding/base64"
	"strconv"
	"testing"
)

// TestStdBase64 holds stdBase64 to the encoder: every string up to six
// bytes over digits of both alphabets, padding and a line break is in the
// written form exactly when it decodes and the encoder writes it back as
// it came.
func TestStdBase64(t *testing.T) {
	const alphabet = "A/+0wx=-_\n"
	var walk func(s []byte)
	n := 0
	walk = func(s []byte) {
		raw := []byte(strconv.Quote(string(s)))
		data, err := decodeBase64(string(s))
		want := err == nil && base64.StdEncoding.EncodeToString(data) == string(s)
		if got := stdBase64(raw); got != want {
			t.Fatalf("stdBase64(%s) = %v, want %v", raw, got, want)
		}
		if want {
			n++
		}
		if len(s) == 6 {
			return
		}
		for i := range len(alphabet) {
			walk(append(s, alphabet[i]))
		}
	}
	walk(nil)
	if n < 1000 {
		t.Fatalf("only %d strings in the written form: the test reaches too few", n)
	}
}
