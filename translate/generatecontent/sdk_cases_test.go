package generatecontent_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

func f32(v float32) *float32 { return &v }
func i32(v int32) *int32     { return &v }
func i64(v int64) *int64     { return &v }
func boolp(v bool) *bool     { return &v }

var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
var tinyPDF = []byte("%PDF-1.4\n1 0 obj\n<</Type/Catalog/Pages 2 0 R>>\nendobj\ntrailer\n<</Root 1 0 R>>\n%%EOF\n")
var tinyWAV = []byte("RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x44\xac\x00\x00\x88\x58\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00")

type sdkCall struct {
	model    string
	contents []*genai.Content
	config   *genai.GenerateContentConfig
}

// sdkCases are golden cases whose request.json is what the official genai
// SDK sends to the service for the given call (captured at test time and
// compared; -update rewrites the file).
var sdkCases = map[string]sdkCall{
	"sdk_generation_config": {
		model: "gemini-2.5-flash",
		contents: []*genai.Content{
			genai.NewContentFromText("Hello.", genai.RoleUser),
			genai.NewContentFromText("Hi! How can I help?", genai.RoleModel),
			genai.NewContentFromText("Write a haiku about the sea.", genai.RoleUser),
		},
		config: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText("You are a poet.", ""),
			Temperature:       f32(0.9), TopP: f32(0.95), TopK: f32(40), CandidateCount: 2, MaxOutputTokens: 256,
			StopSequences: []string{"END"}, Seed: i32(42), PresencePenalty: f32(0.5), FrequencyPenalty: f32(0.25),
			ResponseLogprobs: true, Logprobs: i32(3), MediaResolution: genai.MediaResolutionLow,
			EnableEnhancedCivicAnswers: boolp(true),
		},
	},
	"sdk_function_calling": {
		model: "gemini-2.5-flash",
		contents: []*genai.Content{
			genai.NewContentFromText("What's the weather in Boston and Paris?", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{
				genai.NewPartFromFunctionCall("get_weather", map[string]any{"location": "Boston, MA"}),
				genai.NewPartFromFunctionCall("get_weather", map[string]any{"location": "Paris"}),
			}},
			{Role: genai.RoleUser, Parts: []*genai.Part{
				genai.NewPartFromFunctionResponse("get_weather", map[string]any{"temperature": 12, "unit": "celsius"}),
				genai.NewPartFromFunctionResponse("get_weather", map[string]any{"temperature": 17, "unit": "celsius"}),
			}},
		},
		config: &genai.GenerateContentConfig{
			Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
				Name:        "get_weather",
				Description: "Get the current weather in a given location",
				Parameters: &genai.Schema{
					Type: genai.TypeObject,
					Properties: map[string]*genai.Schema{
						"location": {Type: genai.TypeString, Description: "The city and state, e.g. San Francisco, CA"},
						"unit":     {Type: genai.TypeString, Enum: []string{"celsius", "fahrenheit"}, Nullable: boolp(true)},
						"days":     {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeInteger, Minimum: func() *float64 { v := 1.0; return &v }()}, MaxItems: i64(7)},
					},
					Required:         []string{"location"},
					PropertyOrdering: []string{"location", "unit", "days"},
				},
			}}}},
			ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{"get_weather"}}},
		},
	},
	"sdk_function_ids_json_schema": {
		model: "gemini-3-pro-preview",
		contents: []*genai.Content{
			genai.NewContentFromText("Turn the lights down.", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{{
				FunctionCall:     &genai.FunctionCall{ID: "fc_1", Name: "set_light", Args: map[string]any{"brightness": 30}},
				ThoughtSignature: []byte("signature-of-the-call"),
			}}},
			{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "fc_1", Name: "set_light", Response: map[string]any{"output": "ok"}}}}},
		},
		config: &genai.GenerateContentConfig{
			Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
				Name: "set_light", Description: "Set the brightness.",
				ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"brightness": map[string]any{"type": "integer", "minimum": 0, "maximum": 100}}, "required": []any{"brightness"}, "additionalProperties": false},
			}}}},
			ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}},
		},
	},
	"sdk_inline_media": {
		model: "gemini-2.5-flash",
		contents: []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{
			genai.NewPartFromBytes(tinyPNG, "image/png"),
			genai.NewPartFromBytes(tinyPDF, "application/pdf"),
			genai.NewPartFromBytes(tinyWAV, "audio/wav"),
			genai.NewPartFromURI("https://generativelanguage.googleapis.com/v1beta/files/abc123", "video/mp4"),
			genai.NewPartFromText("Describe each of these."),
		}}},
	},
	"sdk_thinking_history": {
		model: "gemini-2.5-pro",
		contents: []*genai.Content{
			genai.NewContentFromText("Is 97 prime?", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "**Checking divisors**\n\nI only need to test primes up to 9.", Thought: true},
				{Text: "Yes, 97 is prime.", ThoughtSignature: []byte("signature-bytes-of-the-answer")},
			}},
			genai.NewContentFromText("And 91?", genai.RoleUser),
		},
		config: &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: i32(1024)}},
	},
	"sdk_thinking_level": {
		model:    "gemini-3-pro-preview",
		contents: []*genai.Content{genai.NewContentFromText("Plan a three-day trip to Kyoto.", genai.RoleUser)},
		config:   &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelHigh}},
	},
	"sdk_response_schema": {
		model:    "gemini-2.5-flash",
		contents: []*genai.Content{genai.NewContentFromText("List a few popular cookie recipes.", genai.RoleUser)},
		config: &genai.GenerateContentConfig{
			ResponseMIMEType: "application/json",
			ResponseSchema: &genai.Schema{Type: genai.TypeArray, Items: &genai.Schema{
				Type: genai.TypeObject,
				Properties: map[string]*genai.Schema{
					"recipeName":  {Type: genai.TypeString},
					"ingredients": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}},
				},
				PropertyOrdering: []string{"recipeName", "ingredients"},
			}},
		},
	},
	"sdk_response_json_schema": {
		model:    "gemini-2.5-flash",
		contents: []*genai.Content{genai.NewContentFromText("Extract the name and age: Alice is 31.", genai.RoleUser)},
		config: &genai.GenerateContentConfig{
			ResponseMIMEType:   "application/json",
			ResponseJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer"}}, "required": []any{"name", "age"}},
		},
	},
	"sdk_enum_output": {
		model:    "gemini-2.5-flash",
		contents: []*genai.Content{genai.NewContentFromText("What type of instrument is an oboe?", genai.RoleUser)},
		config: &genai.GenerateContentConfig{
			ResponseMIMEType: "text/x.enum",
			ResponseSchema:   &genai.Schema{Type: genai.TypeString, Enum: []string{"Percussion", "String", "Woodwind", "Brass", "Keyboard"}},
		},
	},
	"sdk_safety_settings": {
		model:    "gemini-2.5-flash",
		contents: []*genai.Content{genai.NewContentFromText("Tell me about chemistry lab safety.", genai.RoleUser)},
		config: &genai.GenerateContentConfig{SafetySettings: []*genai.SafetySetting{
			{Category: genai.HarmCategoryHateSpeech, Threshold: genai.HarmBlockThresholdBlockLowAndAbove},
			{Category: genai.HarmCategoryDangerousContent, Threshold: genai.HarmBlockThresholdOff},
		}},
	},
	"sdk_builtin_tools": {
		model:    "gemini-2.5-flash",
		contents: []*genai.Content{genai.NewContentFromText("Who won the last Euro? Compute the goal difference.", genai.RoleUser)},
		config: &genai.GenerateContentConfig{Tools: []*genai.Tool{
			{CodeExecution: &genai.ToolCodeExecution{}},
			{GoogleSearch: &genai.GoogleSearch{}},
			{URLContext: &genai.URLContext{}},
		}},
	},
	"sdk_speech": {
		model:    "gemini-2.5-flash-preview-tts",
		contents: []*genai.Content{genai.NewContentFromText("Say cheerfully: Have a wonderful day!", genai.RoleUser)},
		config: &genai.GenerateContentConfig{
			ResponseModalities: []string{"AUDIO"},
			SpeechConfig:       &genai.SpeechConfig{VoiceConfig: &genai.VoiceConfig{PrebuiltVoiceConfig: &genai.PrebuiltVoiceConfig{VoiceName: "Kore"}}, LanguageCode: "en-US"},
		},
	},
	"sdk_code_execution_history": {
		model: "gemini-2.5-flash",
		contents: []*genai.Content{
			genai.NewContentFromText("What is the sum of the first 50 primes?", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{
				genai.NewPartFromExecutableCode("print(sum(__import__('sympy').primerange(2, 230)))", genai.LanguagePython),
				genai.NewPartFromCodeExecutionResult(genai.OutcomeOK, "5117\n"),
				genai.NewPartFromText("The sum is 5117."),
			}},
			genai.NewContentFromText("And the first 60?", genai.RoleUser),
		},
		config: &genai.GenerateContentConfig{Tools: []*genai.Tool{{CodeExecution: &genai.ToolCodeExecution{}}}, CachedContent: "cachedContents/primes-table"},
	},
}

// captureSDK runs the SDK call against a server that records the request.
func captureSDK(t *testing.T, call sdkCall) ([]byte, *http.Request) {
	t.Helper()
	var body []byte
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		got = r.Clone(context.Background())
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}]}`)
	}))
	defer srv.Close()
	client, err := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: "test-key", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Models.GenerateContent(t.Context(), call.model, call.contents, call.config); err != nil {
		t.Fatalf("SDK call: %v", err)
	}
	return body, got
}

// sdkRequest pins an SDK-built case's request.json and returns the model
// the SDK addressed.
func sdkRequest(t *testing.T, c golden.Case) string {
	call, ok := sdkCases[c.Name]
	if !ok {
		return ""
	}
	body, r := captureSDK(t, call)
	golden.JSON(t, c.Path("request.json"), body)
	if got := (generatecontent.Client{}).APIKey(&translate.Incoming{Header: r.Header, Query: r.URL.Query()}); got != "test-key" {
		t.Errorf("the key the SDK sent reads as %q (headers %v)", got, r.Header)
	}
	return strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":generateContent")
}

func TestEverySDKCaseHasAFolder(t *testing.T) {
	have := map[string]bool{}
	for _, c := range golden.Cases(t, dialecttest.GenerateContent.Cases) {
		have[c.Name] = true
	}
	for name := range sdkCases {
		if !have[name] {
			t.Errorf("SDK case %s has no folder under %s", name, dialecttest.GenerateContent.Cases)
		}
	}
}
