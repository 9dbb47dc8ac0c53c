package generatecontent_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// The benchmarks are the shared ones (translate/internal/dialecttest
// says what they measure) for a same-dialect route.

func BenchmarkRequest(b *testing.B) {
	dialecttest.BenchmarkRequest(b, dialecttest.GenerateContent, dialecttest.GenerateContent)
}

func BenchmarkReply(b *testing.B) {
	dialecttest.BenchmarkReply(b, dialecttest.GenerateContent, dialecttest.GenerateContent)
}

func BenchmarkStream500(b *testing.B) {
	dialecttest.BenchmarkStream500(b, dialecttest.GenerateContent, dialecttest.GenerateContent)
}

// BenchmarkDecodeStream500 reads Stream500 and encodes nothing, as a
// same-dialect stream, relayed, is read: 500 chunks of text, each with
// its usage.
func BenchmarkDecodeStream500(b *testing.B) {
	dialecttest.BenchmarkDecodeStream500(b, dialecttest.GenerateContent)
}

// BenchmarkDecodeRequest reads a client's request into its canonical
// form: the load benchmark's short one and Gemini CLI's agent turn.
func BenchmarkDecodeRequest(b *testing.B) {
	dialecttest.BenchmarkDecodeRequest(b, generatecontent.Client{},
		dialecttest.DecodeCase{Name: "text", File: "cross_table/text/generate_content/request.json", Model: "gemini-2.5-flash"},
		dialecttest.DecodeCase{Name: "gemini_cli", File: "agent_tools/gemini_cli/request.json", Model: "gemini-2.5-flash"})
}
