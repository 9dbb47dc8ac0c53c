package generatecontent

import (
	"bytes"
	"testing"

	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
)

// quickVariants are chunks as the service and Vertex AI write them, and
// chunks the quick reader leaves to the reflective one (after the first
// quickChunks).
var quickVariants = []string{
	`{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3,"totalTokenCount":3,"promptTokensDetails":[{"modality":"TEXT","tokenCount":3}],"serviceTier":"standard"},"modelVersion":"gemini-3-flash","responseId":"r1"}`,
	`{"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"**Plan**","thought":true},{"text":"","thoughtSignature":"EpcC"}]}}],"createTime":"2026-01-01T00:00:00Z","responseId":"r1"}`,
	`{"candidates":[{"content":{"parts":[{"text":"a \"q\" \\ \n \u00e9"}]},"finishReason":"STOP"},{"content":{"parts":[{"text":"b","thought":false}],"role":"model"},"index":1}]}`,
	`{"candidates":[{"content":{"parts":[]}}],"usageMetadata":null}`,
	`{"candidates":[],"modelVersion":null}`,
	`{"candidates":null}`,
	`{"candidates":[{"content":null,"index":null,"finishReason":"MAX_TOKENS"}]}`,
	`{"candidates":[],"usageMetadata":{"promptTokenCount":null,"cacheTokensDetails":null,"promptTokensDetails":[],"candidatesTokensDetails":[{"modality":"AUDIO","tokenCount":1,"x":2},{"modality":"SMELL"},{"tokenCount":null}],"trafficType":"ON_DEMAND"}}`,
	`{"candidates":[],"usageMetadata":{"promptTokensDetails":[{"modality":"TEXT","tokenCount":1},{"modality":"TEXT","tokenCount":2},{"modality":"TEXT","tokenCount":3},{"modality":"TEXT","tokenCount":4},{"modality":"TEXT","tokenCount":5}],"candidatesTokensDetails":[{"modality":"TEXT","tokenCount":6},{"modality":"TEXT","tokenCount":7},{"modality":"TEXT","tokenCount":8},{"modality":"TEXT","tokenCount":9},{"modality":"TEXT","tokenCount":10}]}}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"get_weather","args":{ "city" : "Paris", "n":[1, 2.50] }},"thoughtSignature":"EpcC"},{"functionCall":{"name":null,"id":null,"args":null}}]},"index":0}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":null,"text":"x"}]},"index":1},{"content":{"parts":[{"functionCall":{"name":"g","args":{"a":"\u00e9"}}}]},"index":2}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1,"a":2}}}]}}]}`,
	// Left to the reflective reader.
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":"$.a","stringValue":"x"}],"willContinue":true}}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"function_call":{"name":"f","args":{}}}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","Name":"g"}}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x","extra":1}]}}]}`,
	`{"candidates":[{"content":{"parts":{"text":"x"}}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]},"safetyRatings":[]}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]},"finish_reason":"STOP"}]}`,
	`{"candidates":[{"Content":{"parts":[{"text":"x"}]}}]}`,
	`{"candidates":[],"promptFeedback":{"blockReason":"SAFETY"}}`,
	`{"candidates":[],"prompt_feedback":{"blockReason":"SAFETY"}}`,
	`{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`,
	`{"candidates":[{"content":{"parts":[{"text":"x","thought":"yes"}]}}]}`,
	`{"candidates":[{"index":1.0}]}`,
	`{"candidates":[],"usageMetadata":{"prompt_token_count":3}}`,
	`{"candidates":[],"usageMetadata":{"promptTokensDetails":[{"modality":"TEXT","TokenCount":3}]}}`,
	`{"candidates":[],"candidates":[]}`,
	`{"candidates":[]} []`,
	"{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\xff\"}]}}]}",
}

// quickChunks is how many of quickVariants the quick reader reads.
const quickChunks = 13

// checkQuick holds the quick reader to the reflective decoder on data
// (recorded.Same), read as a stream's first chunk and as a later one: but
// for the unknown members of the usage, which the decoder never reads,
// and in a later chunk the members it reads from the first only. It
// reports whether a later chunk was read the quick way.
func checkQuick(t *testing.T, data []byte) bool {
	t.Helper()
	var first, later, whole chunkReader
	recorded.Same(t, data, func(d []byte) (*Response, bool) { return first.read(d, true) }, omitUsageUnknown)
	recorded.Same(t, data, whole.readWhole, withoutBox)
	return recorded.Same(t, data, func(d []byte) (*Response, bool) { return later.read(d, false) }, func(r *Response) {
		r.ModelVersion, r.ResponseID, r.Unknown = "", "", nil
		omitUsageUnknown(r)
	})
}

// withoutBox clears the box the quick reader reads a usage's counts into
// (usageBox), which the decoder does not make.
func withoutBox(r *Response) {
	if u := r.UsageMetadata; u != nil {
		u.box = nil
	}
}

// omitUsageUnknown clears the unknown members of a chunk's usage: the
// stream decoder reads none.
func omitUsageUnknown(r *Response) {
	withoutBox(r)
	if u := r.UsageMetadata; u != nil {
		u.Unknown = nil
		for _, list := range [][]modalityTokenCount{u.PromptTokensDetails, u.CacheTokensDetails, u.CandidatesTokensDetails, u.ToolUsePromptTokensDetails} {
			for i := range list {
				list[i].Unknown = nil
			}
		}
	}
}

func TestQuickChunkReadsAsTheReflectiveDecoder(t *testing.T) {
	quick, n := 0, 0
	for _, d := range recorded.DataLines(t, `{"candidates":`) {
		n++
		if checkQuick(t, d) {
			quick++
		}
	}
	// Recorded streams hold calls, citations, grounding and safety
	// ratings, which are left to reflection; most of the rest is text.
	if quick < n/2 {
		t.Errorf("the quick reader read %d of %d recorded chunks", quick, n)
	}
	for i, v := range quickVariants {
		if got := checkQuick(t, []byte(v)); got != (i < quickChunks) {
			t.Errorf("quick %v for %s", got, v)
		}
	}
}

// TestQuickReadIsTheUnmarshalledReply: every recorded whole reply the
// chunk reader reads as a whole reply (the usage's unknown members kept)
// is the one jsonx.Unmarshal reads.
func TestQuickReadIsTheUnmarshalledReply(t *testing.T) {
	bodies := recorded.Files(t, 10, "generate_content/*/response.json", "cross_table/*/generate_content/response.json")
	quick := 0
	for _, b := range bodies {
		var r chunkReader
		if recorded.Same(t, b, r.readWhole, withoutBox) {
			quick++
		}
	}
	// Recorded replies hold grounding, citations and safety ratings,
	// which are left to reflection.
	if quick < len(bodies)/3 {
		t.Errorf("readWhole read %d of %d recorded replies", quick, len(bodies))
	}
	t.Logf("readWhole read %d of %d recorded replies", quick, len(bodies))
}

func FuzzQuickChunk(f *testing.F) {
	for _, d := range recorded.DataLines(f, `{"candidates":`) {
		f.Add(d)
	}
	for _, v := range quickVariants {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkQuick(t, data) })
}

// BenchmarkChunk reads a text chunk as the service writes it, with the
// quick reader and with the reflective decoder.
func BenchmarkChunk(b *testing.B) {
	data := []byte(`{"candidates":[{"content":{"parts":[{"text":" Harmony"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":15,"candidatesTokenCount":12,"totalTokenCount":79,"promptTokensDetails":[{"modality":"TEXT","tokenCount":15}],"thoughtsTokenCount":52},"modelVersion":"gemini-3-flash-preview","responseId":"vQRpaqzAPN2M9MoPxPq2uQ4"}`)
	var r chunkReader
	recorded.Bench(b,
		func() bool { _, ok := r.read(data, false); return ok },
		func() error { var w Response; return jsonx.Unmarshal(data, &w) })
}

// BenchmarkCallChunk reads a chunk holding a whole call as the service
// writes it, with the quick reader and with the reflective decoder.
func BenchmarkCallChunk(b *testing.B) {
	data := []byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"read_file","args":{"path":"src/main.go","limit":200}},"thoughtSignature":"CiQB0e2Kb7Zr0Yw8m2nQ1s9xU3vT6fJ4pL2kE8hR5cA1bN7dW0g="}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":812,"candidatesTokenCount":24,"totalTokenCount":901,"thoughtsTokenCount":65},"modelVersion":"gemini-3-flash-preview","responseId":"vQRpaqzAPN2M9MoPxPq2uQ4"}`)
	var r chunkReader
	recorded.Bench(b,
		func() bool { _, ok := r.read(data, false); return ok },
		func() error { var w Response; return jsonx.Unmarshal(data, &w) })
}

// TestTextChunkIsTheMarshalledChunk: the text chunks textChunk writes
// without reflection are, byte for byte, the ones jsonx.Marshal writes for
// the whole reply, whatever the text, the candidate, the kind and the
// members after the candidates, and as the usage changes between chunks.
func TestTextChunkIsTheMarshalledChunk(t *testing.T) {
	texts := []string{"", "Hello", "a \"q\" \\ \n\t", "<script>&amp;</script>", "\u0000\u001f\u2028", "héllo 世界 🌍"}
	n := func(v int64) *int64 { return &v }
	usages := []*usageMetadata{nil, {}, {PromptTokenCount: n(3)}, {TotalTokenCount: n(0)},
		{PromptTokenCount: n(3), CandidatesTokenCount: n(9), PromptTokensDetails: []modalityTokenCount{{Modality: "TEXT", TokenCount: n(3)}}},
		{PromptTokenCount: n(1), CachedContentTokenCount: n(2), CandidatesTokenCount: n(3), ToolUsePromptTokenCount: n(4), ThoughtsTokenCount: n(5), TotalTokenCount: n(-6),
			PromptTokensDetails:        []modalityTokenCount{{Modality: "TEXT", TokenCount: n(1)}, {Modality: "IMAGE"}},
			CacheTokensDetails:         []modalityTokenCount{{Modality: "", TokenCount: n(2)}},
			CandidatesTokensDetails:    []modalityTokenCount{{Modality: "AUDIO", TokenCount: n(3)}},
			ToolUsePromptTokensDetails: []modalityTokenCount{{Modality: "DOC\"UMENT", TokenCount: n(4)}}},
		{CacheTokensDetails: []modalityTokenCount{{Modality: "VIDEO", TokenCount: n(7)}}},
		{PromptTokenCount: n(2), CandidatesTokensDetails: []modalityTokenCount{}, PromptTokensDetails: []modalityTokenCount{{Modality: "TEXT", Unknown: jsonx.Unknown{"b": []byte("1"), "a": []byte(`[ "x" ]`)}}},
			Unknown: jsonx.Unknown{"z": []byte("{}"), "y": []byte(`"\u00e9"`)}}}
	for _, head := range [][2]string{{"", ""}, {"gemini-3-flash", ""}, {"", `r"1`}, {"gemini-3-flash", "r1"}} {
		s := &streamEncoder{model: head[0], id: head[1]}
		for _, u := range usages {
			s.wireUsage = u
			for _, ci := range []int32{0, 2} {
				for _, thought := range []bool{false, true} {
					for _, text := range texts {
						p := Part{Text: new(text)}
						if thought {
							p.Thought = new(true)
						}
						got, ok := s.textChunk(ci, &p)
						if !ok {
							t.Fatalf("no text chunk for %q", text)
						}
						want, err := jsonx.Marshal(s.chunkReply(ci, p))
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got, want) {
							t.Errorf("\n got %s\nwant %s", got, want)
						}
					}
				}
			}
		}
	}
	s := &streamEncoder{wireUsage: &usageMetadata{Unknown: jsonx.Unknown{"x": []byte("1")}}}
	for _, p := range []Part{{Text: new("x"), Thought: new(false)}, {Text: new("x"), ThoughtSignature: "EpcC"}, {Text: new("bad \xff")}, {FunctionCall: &FunctionCall{Name: "f"}}} {
		if _, ok := s.textChunk(0, &p); ok {
			t.Errorf("%+v was written as a text chunk", p)
		}
	}
}
