package responses_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// The benchmarks are the shared ones (translate/internal/dialecttest
// says what they measure) for a same-dialect route.

func BenchmarkRequest(b *testing.B) {
	dialecttest.BenchmarkRequest(b, dialecttest.Responses, dialecttest.Responses)
}

func BenchmarkReply(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.Responses, dialecttest.Responses)
}

func BenchmarkStream500(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.Responses, dialecttest.Responses)
}

func BenchmarkStreamText(b *testing.B) {
	dialecttest.BenchmarkStreamText(b, dialecttest.Responses, dialecttest.Responses)
}
