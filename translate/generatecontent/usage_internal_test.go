package generatecontent

import (
	"testing"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// A usage read the quick way, made in the reader's box, is the usage
// made from the same counts read otherwise; and converting the same
// usage twice, as a stream's first chunk does for its start and its usage
// event, makes two.
func TestUsageBox(t *testing.T) {
	for _, data := range []string{
		`{"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":28,"thoughtsTokenCount":3,"totalTokenCount":40,"promptTokensDetails":[{"modality":"TEXT","tokenCount":9}],"candidatesTokensDetails":[{"modality":"TEXT","tokenCount":28}]}}`,
		`{"usageMetadata":{"promptTokenCount":1,"promptTokensDetails":[{"modality":"TEXT","tokenCount":1},{"modality":"IMAGE","tokenCount":2},{"modality":"AUDIO","tokenCount":3}],"cacheTokensDetails":[{"modality":"TEXT","tokenCount":4},{"modality":"VIDEO","tokenCount":5}],"candidatesTokensDetails":[{"modality":"TEXT","tokenCount":6}]}}`,
		`{"usageMetadata":{"cachedContentTokenCount":0}}`,
	} {
		var r chunkReader
		w, ok := r.read([]byte(data), true)
		if !ok || w.UsageMetadata == nil || w.UsageMetadata.box == nil {
			t.Fatalf("%s: not read the quick way into a box", data)
		}
		var want Response
		if err := jsonx.Unmarshal([]byte(data), &want); err != nil {
			t.Fatal(err)
		}
		ref := canonicalUsage(want.UsageMetadata)
		first := canonicalUsage(w.UsageMetadata)
		second := canonicalUsage(w.UsageMetadata)
		if first == second {
			t.Fatalf("%s: one usage made twice", data)
		}
		for _, got := range []*parleyv1.Usage{first, second} {
			if !proto.Equal(got, ref) {
				t.Fatalf("%s:\n got %v\nwant %v", data, got, ref)
			}
		}
	}
}
