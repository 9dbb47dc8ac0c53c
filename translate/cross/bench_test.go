package cross_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// The benchmarks are the shared ones (translate/internal/dialecttest
// says what they measure), for a client of one dialect served by an
// upstream of another.

func BenchmarkRequestMessagesToContentGeneration(b *testing.B) {
	dialecttest.BenchmarkRequest(b, dialecttest.Messages, dialecttest.GenerateContent)
}

func BenchmarkRequestContentGenerationToMessages(b *testing.B) {
	dialecttest.BenchmarkRequest(b, dialecttest.GenerateContent, dialecttest.Messages)
}

func BenchmarkStream500ContentGenerationToMessages(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.Messages, dialecttest.GenerateContent)
}

func BenchmarkStream500MessagesToContentGeneration(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.GenerateContent, dialecttest.Messages)
}
