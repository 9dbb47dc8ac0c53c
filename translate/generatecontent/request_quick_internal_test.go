package generatecontent

import (
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/recorded"
)

// readRequestVariants are requests in awkward forms, for readRequest to
// read as jsonx.Unmarshal reads them or to decline (after the first
// readRequestQuick).
var readRequestVariants = []string{
	`{"contents":[{"role":"user","parts":[{"text":"a \"q\" \\ \n \u00e9 \ud83c\udf0d <&>"},{"inlineData":{"mimeType":"image/png","data":"iVBO","x":1}},{"fileData":{"mimeType":"application/pdf","fileUri":"gs://b/a.pdf"}}]},{"role":"model","parts":[{"text":"**Plan**","thought":true},{"functionCall":{"id":"c1","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"EpcC"},{"executableCode":{"language":"PYTHON","code":"print(1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1\n"}}]},{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"get_weather","response":{"temp":18}}}],"extra":[1]}],"systemInstruction":{"parts":[{"text":"Be brief."}]},"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}},{"name":"f","parametersJsonSchema":{"type":"object"},"behavior":"BLOCKING"}]},{"googleSearch":{}},{"codeExecution":{}},{"urlContext":{}}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}},"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}],"generationConfig":{"stopSequences":["END"],"responseMimeType":"application/json","responseSchema":{"type":"OBJECT"},"responseJsonSchema":{"type":"object"},"responseModalities":["TEXT"],"candidateCount":1,"maxOutputTokens":1024,"temperature":0.7,"topP":0.95,"topK":40,"seed":7,"presencePenalty":0.1,"frequencyPenalty":-0.2,"responseLogprobs":true,"logprobs":2,"enableEnhancedCivicAnswers":false,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":-1,"thinkingLevel":"HIGH","x":2},"mediaResolution":"MEDIA_RESOLUTION_LOW","y":3},"cachedContent":"cachedContents/abc","labels":{"team":"a"}}`,
	`{"contents":{"role":"user","parts":{"text":"one object each"}},"tools":{"functionDeclarations":[]}}`,
	`{"contents":[],"tools":[],"safetySettings":[],"generationConfig":{},"toolConfig":{}}`,
	`{"contents":null,"systemInstruction":null,"generationConfig":null,"toolConfig":null,"safetySettings":null,"cachedContent":null}`,
	`{"contents":[{}]}`,
	`{"contents":[{"parts":[]}]}`,
	`{"contents":[{"role":null,"parts":[{}]}]}`,
	`{"contents":[{"parts":[{"text":null,"thought":null,"thoughtSignature":null,"inlineData":null,"fileData":null,"functionCall":null,"functionResponse":null,"executableCode":null,"codeExecutionResult":null}]}]}`,
	`{"contents":[{"parts":[{"functionCall":{"name":"f","args":null}},{"functionResponse":{"name":"f","response":null}}]}]}`,
	`{"generationConfig":{"stopSequences":null,"temperature":null,"thinkingConfig":null,"maxOutputTokens":null,"responseSchema":null}}`,
	`{"toolConfig":{"functionCallingConfig":null,"retrievalConfig":{"latLng":{}}}}`,
	`{"toolConfig":{"functionCallingConfig":{"mode":"AUTO","allowedFunctionNames":null}}}`,
	`{}`,
	` { "contents" : [ { "role" : "user" , "parts" : [ { "text" : "x" } ] } ] } `,
	`{"model":"models/gemini-2.5-flash","contents":[{"parts":[{"text":"x"}]}]}`,
	// Declined: Unmarshal reads (or refuses) these.
	`{"contents":[{"parts":[{"text":"x"}]}],"system_instruction":{"parts":[{"text":"s"}]}}`,
	`{"contents":[{"parts":[{"inline_data":{"mime_type":"image/png","data":"iVBO"}}]}]}`,
	`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"max_output_tokens":5}}`,
	`{"contents":[{"parts":[{"text":"x"}]}],"Contents":[]}`,
	`{"contents":[{"parts":[{"text":"x","text":"y"}]}]}`,
	`{"contents":[null]}`,
	`{"contents":[{"parts":null}]}`,
	`{"contents":[{"parts":[null]}]}`,
	`{"contents":"x"}`,
	`{"tools":null}`,
	`{"tools":[{"googleSearchRetrieval":{"dynamicRetrievalConfig":{"mode":"MODE_DYNAMIC"}}}]}`,
	`{"tools":[{"computerUse":{"environment":"ENVIRONMENT_BROWSER"}}]}`,
	`{"generationConfig":{"speechConfig":{"voiceConfig":{"prebuiltVoiceConfig":{"voiceName":"Kore"}}}}}`,
	`{"contents":[{"parts":[{"functionResponse":{"name":"f","response":{},"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBO"}}]}}]}]}`,
	`{"generationConfig":{"maxOutputTokens":1.5}}`,
	`{"generationConfig":{"temperature":"hot"}}`,
	`{"generationConfig":{"stopSequences":[1]}}`,
	`{"contents":[{"parts":[{"thought":"yes"}]}]}`,
	`{"contents":[]} x`,
	"{\"contents\":[{\"parts\":[{\"text\":\"\xff\"}]}]}",
}

// readRequestQuick is how many of readRequestVariants readRequest reads.
const readRequestQuick = 15

// recordedClientRequests are the content-generation requests under
// testdata: the recorded clients', Gemini CLI's and the cross table's.
func recordedClientRequests(t testing.TB) [][]byte {
	return recorded.Files(t, 20, "generate_content/*/request.json", "cross_table/*/generate_content/request.json", "agent_tools/gemini_cli/*request*.json")
}

// TestQuickReadIsTheUnmarshalledRequest: every request readRequest reads
// (the recorded ones, Gemini CLI's among them, and awkward forms) is the
// one jsonx.Unmarshal reads; what it declines, the general way reads.
// FuzzQuickRequest holds it to that on any input.
func TestQuickReadIsTheUnmarshalledRequest(t *testing.T) {
	bodies := recordedClientRequests(t)
	variants := recorded.Variants(readRequestVariants)
	recordedQuick, _ := recorded.DecodedAll(t, bodies, nil, readRequest)
	if recordedQuick < len(bodies)*8/10 {
		t.Errorf("readRequest read %d of %d recorded requests", recordedQuick, len(bodies))
	}
	t.Logf("readRequest read %d of %d recorded requests", recordedQuick, len(bodies))
	for i, b := range variants {
		if got, want := recorded.Decoded(t, b, readRequest), i < readRequestQuick; got != want {
			t.Errorf("%s: read %v, want %v", b, got, want)
		}
	}
}

func FuzzQuickRequest(f *testing.F) {
	for _, b := range append(recordedClientRequests(f), recorded.Variants(readRequestVariants)...) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { recorded.ReadAndWritten(t, b, readRequest, appendRequest) })
}

// TestQuickRequestIsTheMarshalledRequest: every request appendRequest
// writes is, byte for byte, the one jsonx.Marshal writes: the requests
// made from every recorded canonical request for an upstream of this
// dialect, the recorded requests as clients send them, and the awkward
// forms readRequest is held to. What it declines, Marshal writes.
func TestQuickRequestIsTheMarshalledRequest(t *testing.T) {
	var requests []*Request
	for _, req := range recorded.Canonical(t, "request.canonical.json", func() *parleyv1.Request { return &parleyv1.Request{} }) {
		e := encoder{req: req, t: translate.Target{Model: "gemini-test"}, same: req.GetExtensions().GetDialect() == thisDialect}
		if w, err := e.request(); err == nil {
			requests = append(requests, w)
		}
	}
	recorded.EncodedMadeAndRead(t, requests, append(recordedClientRequests(t), recorded.Variants(readRequestVariants)...), appendRequest)
}
