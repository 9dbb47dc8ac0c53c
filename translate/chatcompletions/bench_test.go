package chatcompletions_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// The benchmarks are the shared ones (translate/internal/dialecttest
// says what they measure) for a same-dialect route.

func BenchmarkRequest(b *testing.B) {
	dialecttest.BenchmarkRequest(b, dialecttest.ChatCompletions, dialecttest.ChatCompletions)
}

func BenchmarkReply(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.ChatCompletions, dialecttest.ChatCompletions)
}

func BenchmarkStream500(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.ChatCompletions, dialecttest.ChatCompletions)
}

func BenchmarkStreamText(b *testing.B) {
	dialecttest.BenchmarkStreamText(b, dialecttest.ChatCompletions, dialecttest.ChatCompletions)
}

// BenchmarkDecodeStreamText reads the recorded text stream and encodes
// nothing, as a same-dialect stream, relayed, is read.
func BenchmarkDecodeStreamText(b *testing.B) {
	dialecttest.BenchmarkDecodeStreamText(b, dialecttest.ChatCompletions)
}
