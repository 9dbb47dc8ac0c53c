package generatecontent

import (
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
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
		ref := canonicalUsage(want.UsageMetadata, nil)
		var last lastDetails
		first := canonicalUsage(w.UsageMetadata, &last)
		second := canonicalUsage(w.UsageMetadata, &last)
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

// TestStreamSharesRepeatedDetails: the usage of a stream's chunk shares
// the per-modality lists of the chunk before when they are the same, and
// has its own when they are not; every usage is the one its chunk, read
// alone, makes.
func TestStreamSharesRepeatedDetails(t *testing.T) {
	chunk := func(prompt, out int) string {
		finish := ""
		if out == 4 {
			finish = `,"finishReason":"STOP"`
		}
		return `data: {"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"}` + finish + `,"index":0}],"usageMetadata":{"promptTokenCount":` +
			strconv.Itoa(prompt) + `,"candidatesTokenCount":` + strconv.Itoa(out) + `,"promptTokensDetails":[{"modality":"TEXT","tokenCount":` +
			strconv.Itoa(prompt) + `},{"modality":"IMAGE","tokenCount":2}],"candidatesTokensDetails":[{"modality":"TEXT","tokenCount":` +
			strconv.Itoa(out) + `}]},"modelVersion":"m","responseId":"r"}` + "\n\n"
	}
	chunks := []string{chunk(9, 1), chunk(9, 2), chunk(9, 3), chunk(10, 4)}
	var usages []*parleyv1.Usage
	for ev, err := range translate.DecodeStream(thisDialect, strings.NewReader(strings.Join(chunks, "")), Upstream{}.NewStreamDecoder(translate.Target{Model: "m"}), translate.StreamLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		if u := ev.GetUsage(); u != nil {
			usages = append(usages, u)
		}
	}
	if len(usages) != len(chunks) {
		t.Fatalf("%d usage events for %d chunks", len(usages), len(chunks))
	}
	for i, u := range usages {
		var alone Response
		if err := jsonx.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(chunks[i]), "data: ")), &alone); err != nil {
			t.Fatal(err)
		}
		if want := canonicalUsage(alone.UsageMetadata, nil); !proto.Equal(u, want) {
			t.Errorf("chunk %d:\n got %v\nwant %v", i, u, want)
		}
	}
	shared := func(a, b []*parleyv1.ModalityTokens) bool { return &a[0] == &b[0] }
	if !shared(usages[0].InputDetails, usages[1].InputDetails) || !shared(usages[1].InputDetails, usages[2].InputDetails) {
		t.Error("a chunk's prompt details, the same as the chunk's before, were made again")
	}
	if shared(usages[2].InputDetails, usages[3].InputDetails) {
		t.Error("a chunk's prompt details, not the same as the chunk's before, were shared")
	}
	for i := 1; i < len(usages); i++ {
		if shared(usages[i-1].OutputDetails, usages[i].OutputDetails) {
			t.Errorf("chunk %d shares the answer's details of the chunk before, which differ", i)
		}
	}
	if n := len(usages[0].InputDetails); cap(usages[0].InputDetails) != n {
		t.Errorf("a shared list has room to be appended to in place (%d of %d)", n, cap(usages[0].InputDetails))
	}
}
