package secrets_test

import (
	"strings"
	"testing"

	_ "github.com/parleyhq/parley/translate/golden"

	"github.com/parleyhq/parley/secrets"
)

func TestString(t *testing.T) {
	const up = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"
	s := secrets.New(up, "short-key", "")
	for in, want := range map[string]string{
		"Incorrect API key provided: " + up + ".":                "Incorrect API key provided: [redacted].",
		"Incorrect API key provided: " + up[:20] + "...":         "Incorrect API key provided: [redacted]...",
		"key " + up + " and again " + up:                         "key [redacted] and again [redacted]",
		"the tail " + up[len(up)-14:]:                            "the tail [redacted]",
		"sk-proj-****************************************Mno345": "sk-proj-****************************************Mno345",
		"a short-key here":                                       "a [redacted] here",
		"nothing to see":                                         "nothing to see",
		"":                                                       "",
	} {
		if got := s.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	var none *secrets.Scrubber
	if got := none.String("x " + up); got != "x "+up {
		t.Errorf("a nil scrubber changed the text: %q", got)
	}
}

func BenchmarkString(b *testing.B) {
	s := secrets.New("sk-proj-Abc123Def456Ghi789Jkl012Mno345", "sk-ant-api03-0123456789abcdef0123456789abcdef", "g-key-0123456789abcdefghij")
	clean := strings.Repeat("The model is overloaded; please retry the request later. ", 4)
	leaky := "Incorrect API key provided: sk-proj-Abc123Def456Ghi789Jkl012Mno345. You can find your API key at https://platform.example/account/api-keys."
	b.Run("no-match", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.String(clean)
		}
	})
	b.Run("match", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.String(leaky)
		}
	})
}
