package generatecontent_test

import (
	"os"
	"testing"

	"github.com/parleyhq/parley/translate"
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

// BenchmarkDecodeRequest reads a client's request into its canonical
// form: the load benchmark's short one and Gemini CLI's agent turn.
func BenchmarkDecodeRequest(b *testing.B) {
	for _, c := range []struct{ name, path string }{
		{"text", "../../testdata/cross_table/text/generate_content/request.json"},
		{"gemini_cli", "../../testdata/agent_tools/gemini_cli/request.json"},
	} {
		b.Run(c.name, func(b *testing.B) {
			body, err := os.ReadFile(c.path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (generatecontent.Client{}).DecodeRequest(&translate.Incoming{Body: body, Model: "gemini-2.5-flash"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
