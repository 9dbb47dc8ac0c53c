package responses_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/responses"
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

func BenchmarkDecodeStreamText(b *testing.B) {
	dialecttest.BenchmarkDecodeStreamText(b, dialecttest.Responses)
}

// BenchmarkDecodeRequest reads a client's request into its canonical
// form: the load benchmark's short one and Codex's agent turn.
func BenchmarkDecodeRequest(b *testing.B) {
	dialecttest.BenchmarkDecodeRequest(b, responses.Client{},
		dialecttest.DecodeCase{Name: "text", File: "cross_table/text/responses/request.json"},
		dialecttest.DecodeCase{Name: "codex", File: "agent_tools/codex/request.json"})
}
