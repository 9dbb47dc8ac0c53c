package translate_test

import (
	"sort"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
)

// The tests in this file hold the canonical model to its promise: every part
// kind and every setting survives protojson and back, and the samples use
// every field the model has, so a field added to the proto without a place
// in the samples fails here.

func ext(fields map[string]string) *parleyv1.Extensions {
	return &parleyv1.Extensions{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Fields: fields}
}

func opaque(v string) *parleyv1.Opaque {
	return &parleyv1.Opaque{Value: v, Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Upstream: "claude", Model: "claude-sonnet-4-5", Shared: true}}
}

func fullAnnotation() *parleyv1.Annotation {
	return &parleyv1.Annotation{
		Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION, Url: "https://example.com/a", Title: "A",
		FileId: "file-1", Filename: "a.pdf", CitedText: "quoted", StartIndex: proto.Int64(0), EndIndex: proto.Int64(6),
		Index: proto.Int64(3), License: "MIT", EncryptedIndex: "enc", ContainerId: "cntr_1", Extensions: ext(map[string]string{"type": `"char_location"`}),
		Location: &parleyv1.CitationLocation{Unit: parleyv1.LocationUnit_LOCATION_UNIT_PAGE, DocumentIndex: 1, DocumentTitle: "Doc", Start: 2, End: 3},
	}
}

// fullRequest builds a request that uses every part kind and every setting.
func fullRequest() *parleyv1.Request {
	signed := &parleyv1.Part{
		Kind:      &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "Let me think.", Summary: []string{"Thinking about it."}, EncryptedContent: opaque("gAAAA"), Redacted: true}},
		Signature: opaque("EqQBCkgIARABGAIiQ"),
		ItemId:    "rs_1",
		Status:    parleyv1.ItemStatus_ITEM_STATUS_COMPLETED,
	}
	return &parleyv1.Request{
		Model: "sonnet",
		Instructions: []*parleyv1.Part{
			{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "You are terse."}}, CacheControl: &parleyv1.CacheControl{Ttl: durationpb.New(time.Hour)}},
		},
		Messages: []*parleyv1.Message{
			{Role: parleyv1.Role_ROLE_DEVELOPER, Parts: []*parleyv1.Part{translate.TextPart("Prefer metric units.")}},
			{Role: parleyv1.Role_ROLE_USER, Name: "alice", Extensions: ext(map[string]string{"x": `1`}), Parts: []*parleyv1.Part{
				translate.TextPart("What is in these?"),
				{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, MimeType: "image/png", Source: &parleyv1.Media_Data{Data: []byte{0x89, 'P', 'N', 'G'}}, Detail: parleyv1.MediaDetail_MEDIA_DETAIL_HIGH}}},
				{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_DOCUMENT, MimeType: "application/pdf", Source: &parleyv1.Media_Uri{Uri: "https://example.com/a.pdf"}, Title: "Report", Context: "Q3", Filename: "a.pdf"}}},
				{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_AUDIO, Source: &parleyv1.Media_FileId{FileId: "file-abc"}, Format: "wav"}}},
				{Kind: &parleyv1.Part_ItemReference{ItemReference: &parleyv1.ItemReference{Id: "msg_0"}}},
			}},
			{Role: parleyv1.Role_ROLE_ASSISTANT, Parts: []*parleyv1.Part{
				signed,
				{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "It rains.", Annotations: []*parleyv1.Annotation{fullAnnotation()}}}, ItemId: "msg_1", Extensions: ext(map[string]string{"citations": `[]`})},
				{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: "I cannot help with that."}}},
				{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: "toolu_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, Kind: parleyv1.ToolKind_TOOL_KIND_FUNCTION, Namespace: "weather"}}, Signature: opaque("CiQB")},
				{Kind: &parleyv1.Part_ExecutableCode{ExecutableCode: &parleyv1.ExecutableCode{Language: parleyv1.CodeLanguage_CODE_LANGUAGE_PYTHON, Code: "print(1)", Id: "exec_1"}}},
				{Kind: &parleyv1.Part_CodeExecutionResult{CodeExecutionResult: &parleyv1.CodeExecutionResult{Outcome: parleyv1.CodeOutcome_CODE_OUTCOME_OK, Output: "1\n", Id: "exec_1"}}},
				{Kind: &parleyv1.Part_HostedToolCall{HostedToolCall: &parleyv1.HostedToolCall{Id: "srvtoolu_1", Kind: parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH, Name: "web_search", Input: `{"query":"weather"}`, Queries: []string{"weather"}}}},
				{Kind: &parleyv1.Part_HostedToolResult{HostedToolResult: &parleyv1.HostedToolResult{CallId: "srvtoolu_1", Kind: parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH, Output: `[]`, IsError: true}}},
			}},
			{Role: parleyv1.Role_ROLE_TOOL, Parts: []*parleyv1.Part{
				{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: "toolu_1", Name: "get_weather", IsError: true, Kind: parleyv1.ToolKind_TOOL_KIND_FUNCTION, Content: []*parleyv1.Part{translate.TextPart(`{"temp":12}`)}}}},
			}},
			{Role: parleyv1.Role_ROLE_SYSTEM, Parts: []*parleyv1.Part{translate.TextPart("Answer in French from now on.")}},
		},
		Tools: []*parleyv1.Tool{
			{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: "get_weather", Description: "Weather by city", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, Strict: proto.Bool(true), Namespace: "weather"}}, CacheControl: &parleyv1.CacheControl{}, Extensions: ext(map[string]string{"defer_loading": "true"})},
			{Kind: &parleyv1.Tool_CodeExecution{CodeExecution: &parleyv1.CodeExecutionTool{Version: "code_execution_20250522"}}},
			{Kind: &parleyv1.Tool_WebSearch{WebSearch: &parleyv1.WebSearchTool{
				Version: "web_search_preview_2025_03_11", ContextSize: parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_HIGH,
				UserLocation:   &parleyv1.UserLocation{City: "Paris", Region: "IDF", Country: "FR", Timezone: "Europe/Paris"},
				AllowedDomains: []string{"example.com"}, BlockedDomains: []string{"spam.example"}, MaxUses: proto.Int32(3),
				DynamicRetrieval: &parleyv1.DynamicRetrieval{Mode: parleyv1.DynamicRetrievalMode_DYNAMIC_RETRIEVAL_MODE_DYNAMIC, Threshold: proto.Float64(0.3)},
			}}},
			{Kind: &parleyv1.Tool_FileSearch{FileSearch: &parleyv1.FileSearchTool{
				VectorStoreIds: []string{"vs_1"}, MaxNumResults: proto.Int32(20),
				Ranking: &parleyv1.RankingOptions{Ranker: "auto", ScoreThreshold: proto.Float64(0.5)},
				Filters: &parleyv1.SearchFilter{Kind: &parleyv1.SearchFilter_Compound{Compound: &parleyv1.CompoundFilter{
					Operator: parleyv1.LogicalOperator_LOGICAL_OPERATOR_AND,
					Filters: []*parleyv1.SearchFilter{
						{Kind: &parleyv1.SearchFilter_Comparison{Comparison: &parleyv1.ComparisonFilter{Key: "year", Operator: parleyv1.ComparisonOperator_COMPARISON_OPERATOR_GTE, Value: structpb.NewNumberValue(2024)}}},
					},
				}}},
			}}},
			{Kind: &parleyv1.Tool_ComputerUse{ComputerUse: &parleyv1.ComputerUseTool{Version: "computer_20241022", DisplayWidth: 1024, DisplayHeight: 768, DisplayNumber: proto.Int32(1), Environment: "browser", Name: "computer"}}},
			{Kind: &parleyv1.Tool_Bash{Bash: &parleyv1.BashTool{Version: "bash_20241022", Name: "bash"}}},
			{Kind: &parleyv1.Tool_TextEditor{TextEditor: &parleyv1.TextEditorTool{Version: "text_editor_20241022", Name: "str_replace_editor", MaxCharacters: proto.Int32(10000)}}},
			{Kind: &parleyv1.Tool_UrlContext{UrlContext: &parleyv1.UrlContextTool{Version: "url_context"}}},
		},
		ToolChoice: &parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, Name: "get_weather", Kind: parleyv1.ToolKind_TOOL_KIND_FUNCTION, AllowedNames: []string{"get_weather"}, ParallelCalls: proto.Bool(false)},
		Generation: &parleyv1.GenerationConfig{
			MaxOutputTokens: proto.Int32(1024), Temperature: proto.Float64(0.7), TopP: proto.Float64(0.9), TopK: proto.Int32(40),
			StopSequences: []string{"\n\nHuman:"}, Seed: proto.Int64(42), PresencePenalty: proto.Float64(0.1), FrequencyPenalty: proto.Float64(0.2),
			CandidateCount: proto.Int32(2), Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(5), LogitBias: map[string]float64{"50256": -100},
			OutputModalities:     []parleyv1.Modality{parleyv1.Modality_MODALITY_TEXT, parleyv1.Modality_MODALITY_AUDIO},
			Speech:               &parleyv1.SpeechConfig{Voice: "Kore", LanguageCode: "en-US", AudioFormat: "wav", Speakers: []*parleyv1.SpeakerVoice{{Speaker: "Joe", Voice: "Puck"}}},
			MediaResolution:      parleyv1.MediaResolution_MEDIA_RESOLUTION_LOW,
			EnhancedCivicAnswers: proto.Bool(true),
			Verbosity:            parleyv1.Verbosity_VERBOSITY_LOW,
		},
		Reasoning: &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ENABLED, BudgetTokens: proto.Int32(2048), Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH, IncludeThoughts: proto.Bool(true), Summary: parleyv1.ReasoningSummary_REASONING_SUMMARY_DETAILED},
		ResponseFormat: &parleyv1.ResponseFormat{
			Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Name: "weather", Description: "A forecast",
			Schema: `{"type":"object","properties":{"temp":{"type":"number"}}}`, Strict: proto.Bool(true),
		},
		SafetySettings:     []*parleyv1.SafetySetting{{Category: parleyv1.HarmCategory_HARM_CATEGORY_HATE_SPEECH, Threshold: parleyv1.HarmBlockThreshold_HARM_BLOCK_THRESHOLD_BLOCK_ONLY_HIGH}},
		Stream:             true,
		StreamUsage:        proto.Bool(true),
		ServiceTier:        parleyv1.ServiceTier_SERVICE_TIER_FLEX,
		Truncation:         parleyv1.Truncation_TRUNCATION_AUTO,
		Metadata:           map[string]string{"team": "a"},
		EndUserId:          "user-7f3a",
		Store:              proto.Bool(false),
		PreviousResponseId: "resp_1",
		CachedContent:      "cachedContents/abc",
		Include:            []parleyv1.OutputInclusion{parleyv1.OutputInclusion_OUTPUT_INCLUSION_REASONING_ENCRYPTED_CONTENT},
		Extensions:         &parleyv1.Extensions{Dialect: parleyv1.Dialect_DIALECT_RESPONSES, Fields: map[string]string{"safety_identifier": `"k"`}},
		PromptCacheKey:     "conversation-7f3a",
	}
}

func fullUsage() *parleyv1.Usage {
	return &parleyv1.Usage{
		InputTokens: proto.Int64(100), OutputTokens: proto.Int64(50), TotalTokens: proto.Int64(150),
		CacheReadTokens: proto.Int64(20), CacheCreationTokens: proto.Int64(10), CacheCreation_5MTokens: proto.Int64(4), CacheCreation_1HTokens: proto.Int64(6),
		ReasoningTokens: proto.Int64(30), ToolUseInputTokens: proto.Int64(7), AcceptedPredictionTokens: proto.Int64(1), RejectedPredictionTokens: proto.Int64(2),
		WebSearchRequests:   proto.Int64(1),
		InputDetails:        []*parleyv1.ModalityTokens{{Modality: parleyv1.Modality_MODALITY_TEXT, Tokens: 90}, {Modality: parleyv1.Modality_MODALITY_IMAGE, Tokens: 10}},
		OutputDetails:       []*parleyv1.ModalityTokens{{Modality: parleyv1.Modality_MODALITY_TEXT, Tokens: 50}},
		CacheDetails:        []*parleyv1.ModalityTokens{{Modality: parleyv1.Modality_MODALITY_TEXT, Tokens: 20}},
		ToolUseInputDetails: []*parleyv1.ModalityTokens{{Modality: parleyv1.Modality_MODALITY_TEXT, Tokens: 7}},
	}
}

func fullRatings() []*parleyv1.SafetyRating {
	return []*parleyv1.SafetyRating{{
		Category: parleyv1.HarmCategory_HARM_CATEGORY_HARASSMENT, Probability: parleyv1.HarmProbability_HARM_PROBABILITY_LOW, Blocked: true,
		ProbabilityScore: proto.Float64(0.2), Severity: parleyv1.HarmSeverity_HARM_SEVERITY_LOW, SeverityScore: proto.Float64(0.1),
	}}
}

func fullGrounding() *parleyv1.GroundingMetadata {
	return &parleyv1.GroundingMetadata{
		Chunks: []*parleyv1.GroundingChunk{
			{Source: &parleyv1.GroundingChunk_Web{Web: &parleyv1.WebSource{Uri: "https://example.com", Title: "Example", Domain: "example.com"}}},
			{Source: &parleyv1.GroundingChunk_RetrievedContext{RetrievedContext: &parleyv1.RetrievedContext{Uri: "gs://b/o", Title: "O", Text: "passage"}}},
		},
		Supports:              []*parleyv1.GroundingSupport{{ChunkIndices: []int32{0}, ConfidenceScores: []float64{0.9}, Segment: &parleyv1.TextSegment{PartIndex: 1, StartIndex: 3, EndIndex: 8, Text: "rains"}}},
		WebSearchQueries:      []string{"weather paris"},
		SearchEntryPoint:      &parleyv1.SearchEntryPoint{RenderedContent: "<div/>", SdkBlob: []byte("[]")},
		DynamicRetrievalScore: proto.Float64(0.8),
	}
}

func fullLogprobs() *parleyv1.Logprobs {
	tok := &parleyv1.TokenLogprob{Token: "It", TokenId: proto.Int32(1027), Logprob: -0.01, Bytes: []byte("It")}
	return &parleyv1.Logprobs{Chosen: []*parleyv1.TokenLogprob{tok}, Top: []*parleyv1.TopLogprobs{{Candidates: []*parleyv1.TokenLogprob{tok}}}, Refusal: []*parleyv1.TokenLogprob{tok}}
}

func fullResponse() *parleyv1.Response {
	req := fullRequest()
	return &parleyv1.Response{
		Id: "msg_01", Model: "claude-sonnet-4-5", CreatedAt: timestamppb.New(time.Unix(1700000000, 0)),
		Status: parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE,
		Candidates: []*parleyv1.Candidate{{
			Index: 0, Parts: req.GetMessages()[2].GetParts(),
			FinishReason: parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE, StopSequence: "\n\nHuman:", FinishMessage: "stopped",
			SafetyRatings: fullRatings(), Citations: []*parleyv1.Annotation{fullAnnotation()}, Grounding: fullGrounding(), Logprobs: fullLogprobs(),
			AvgLogprobs: proto.Float64(-0.3), TokenCount: proto.Int32(50),
			UrlRetrievals: []*parleyv1.UrlRetrieval{{Url: "https://example.com", Status: parleyv1.UrlRetrievalStatus_URL_RETRIEVAL_STATUS_SUCCESS}},
			GroundingAttributions: []*parleyv1.GroundingAttribution{
				{Source: &parleyv1.GroundingAttribution_Passage{Passage: &parleyv1.GroundingPassageId{PassageId: "p1", PartIndex: 1}}, Content: []*parleyv1.Part{translate.TextPart("passage")}},
				{Source: &parleyv1.GroundingAttribution_RetrieverChunk{RetrieverChunk: &parleyv1.SemanticRetrieverChunk{Source: "corpora/c", Chunk: "corpora/c/documents/d/chunks/1"}}},
			},
			Extensions: ext(map[string]string{"container": "null"}),
		}, {
			Index: 1, Parts: []*parleyv1.Part{translate.TextPart("It pours.")}, FinishReason: parleyv1.FinishReason_FINISH_REASON_STOP,
		}},
		Usage:              fullUsage(),
		PromptFeedback:     &parleyv1.PromptFeedback{BlockReason: parleyv1.BlockReason_BLOCK_REASON_SAFETY, SafetyRatings: fullRatings(), BlockReasonMessage: "blocked"},
		IncompleteDetails:  &parleyv1.IncompleteDetails{Reason: parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS},
		Error:              fullError(),
		ServiceTier:        parleyv1.ServiceTier_SERVICE_TIER_DEFAULT,
		SystemFingerprint:  "fp_1",
		PreviousResponseId: "resp_0",
		Extensions:         ext(map[string]string{"container": "null"}),
	}
}

func fullError() *parleyv1.Error {
	return &parleyv1.Error{
		Code: parleyv1.Code_CODE_RESOURCE_EXHAUSTED, Message: "slow down",
		FieldViolations: []*parleyv1.FieldViolation{{Field: "messages[0].content", Description: "must not be empty"}},
		Retry:           &parleyv1.RetryAdvice{Retryable: true, RetryAfter: durationpb.New(2 * time.Second)},
		HttpStatus:      429, Reason: "rate_limit_error", RequestId: "req_1", Extensions: ext(map[string]string{"details": "[]"}),
		Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Upstream: "claude"},
		Limit:  &parleyv1.LimitViolation{Limit: "budget", Key: "team-a", Quota: true},
		// Never with a limit in practice; the sample sets every field.
		RefusedReasoning: true,
	}
}

// fullStream uses every stream event kind and every delta kind.
func fullStream() []*parleyv1.StreamEvent {
	start := &parleyv1.Response{Id: "msg_01", Model: "m", Usage: &parleyv1.Usage{InputTokens: proto.Int64(10)}}
	return []*parleyv1.StreamEvent{
		{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: start}}},
		{Event: &parleyv1.StreamEvent_KeepAlive{KeepAlive: &parleyv1.KeepAlive{}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{CandidateIndex: 0, Index: 0, Part: &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 0, Delta: &parleyv1.PartDelta_ReasoningText{ReasoningText: "Hmm."}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 0, Delta: &parleyv1.PartDelta_ReasoningSummary{ReasoningSummary: &parleyv1.ReasoningSummaryDelta{SummaryIndex: 0, Text: "Thinking"}}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 0, Delta: &parleyv1.PartDelta_ReasoningSummary{ReasoningSummary: &parleyv1.ReasoningSummaryDelta{SummaryIndex: 1, Text: "Done"}}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 0, Delta: &parleyv1.PartDelta_Signature{Signature: opaque("sig")}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 0, Delta: &parleyv1.PartDelta_EncryptedContent{EncryptedContent: opaque("enc")}}}},
		{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{Index: 0, Status: parleyv1.ItemStatus_ITEM_STATUS_COMPLETED}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Index: 1, Part: translate.TextPart("")}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 1, Delta: &parleyv1.PartDelta_Text{Text: "It rains."}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 1, Delta: &parleyv1.PartDelta_Annotation{Annotation: fullAnnotation()}}}},
		{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{Index: 1}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Index: 2, Part: &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{}}}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 2, Delta: &parleyv1.PartDelta_Refusal{Refusal: "No."}}}},
		{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{Index: 2}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Index: 3, Part: &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: "toolu_1", Name: "get_weather"}}}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 3, Delta: &parleyv1.PartDelta_Arguments{Arguments: `{"city":`}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 3, Delta: &parleyv1.PartDelta_Arguments{Arguments: `"Paris"}`}}}},
		{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{Index: 3}}},
		{Event: &parleyv1.StreamEvent_Metadata{Metadata: &parleyv1.MetadataUpdate{
			CandidateIndex: 0, SafetyRatings: fullRatings(), Citations: []*parleyv1.Annotation{fullAnnotation()}, Grounding: fullGrounding(),
			Logprobs: fullLogprobs(), AvgLogprobs: proto.Float64(-0.2), UrlRetrievals: []*parleyv1.UrlRetrieval{{Url: "https://example.com"}},
			PromptFeedback: &parleyv1.PromptFeedback{SafetyRatings: fullRatings()},
		}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{CandidateIndex: 1, Index: 0, Part: translate.TextPart("It")}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{CandidateIndex: 1, Index: 0, Delta: &parleyv1.PartDelta_Text{Text: " pours. END"}}}},
		{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{CandidateIndex: 1, Index: 0}}},
		{Event: &parleyv1.StreamEvent_Metadata{Metadata: &parleyv1.MetadataUpdate{CandidateIndex: 1, SafetyRatings: fullRatings()}}},
		{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{CandidateIndex: 1, Reason: parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE, StopSequence: "END"}}},
		{Event: &parleyv1.StreamEvent_Usage{Usage: &parleyv1.Usage{OutputTokens: proto.Int64(12)}}},
		{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{CandidateIndex: 0, Reason: parleyv1.FinishReason_FINISH_REASON_TOOL_USE, StopSequence: "", FinishMessage: "tool call", Extensions: ext(map[string]string{"stop_details": "null"})}}},
		{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED, IncompleteDetails: &parleyv1.IncompleteDetails{}}}},
		{Event: &parleyv1.StreamEvent_Error{Error: fullError()}},
	}
}

func fullTask() *parleyv1.Task {
	ts := timestamppb.New(time.Unix(1700000000, 0))
	return &parleyv1.Task{
		Id: "task_1", Owner: "team-a", Action: parleyv1.TaskAction_TASK_ACTION_MUSIC, Status: parleyv1.TaskStatus_TASK_STATUS_SUCCESS,
		Progress: 100, SubmittedAt: ts, StartedAt: ts, FinishedAt: ts, UpdatedAt: ts, NotifyHook: "https://hooks.example.com/done",
		Songs: []*parleyv1.Song{{
			Id: "song_1", Title: "Rain", Status: "complete", AudioUrl: "https://cdn.example.com/a.mp3", ImageUrl: "https://cdn.example.com/a.jpg",
			ImageLargeUrl: "https://cdn.example.com/a_large.jpg", VideoUrl: "https://cdn.example.com/a.mp4", ModelName: "chirp-v3", MajorModelVersion: "v3",
			Metadata: &parleyv1.SongMetadata{Tags: "pop", Prompt: "la la", Duration: proto.Float64(121.5), ErrorType: proto.String("none"), ErrorMessage: proto.String(""), AudioPromptId: proto.String("ap_1"), Inspiration: "a rainy day"},
		}},
		Lyrics:         &parleyv1.Lyrics{Id: "lyr_1", Text: "la la", Title: "Rain", Status: "complete"},
		FailReason:     "first upstream attempt failed; retried",
		Upstream:       "songs",
		UpstreamTaskId: "up_1",
		Model:          "echo",
		Input:          &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Song{Song: &parleyv1.SongInput{Mode: parleyv1.SongMode_SONG_MODE_CONTINUATION, Prompt: "la la", Title: "Rain", Tags: "pop", ModelVersion: "chirp-v3-5", Instrumental: true, Inspiration: "rain", ContinueTaskId: "task_0", ContinueAt: proto.Float64(30.5), ContinueClipId: "clip_0"}}},
	}
}

func otherTaskInputs() []*parleyv1.TaskInput {
	return []*parleyv1.TaskInput{
		{Kind: &parleyv1.TaskInput_Lyrics{Lyrics: &parleyv1.LyricsInput{Prompt: "rain"}}},
		{Kind: &parleyv1.TaskInput_Upload{Upload: &parleyv1.UploadInput{Url: "https://example.com/a.mp3"}}},
		{Kind: &parleyv1.TaskInput_Concat{Concat: &parleyv1.ConcatInput{ClipId: "clip_1", Infill: true}}},
	}
}

func fullModel() *parleyv1.Model {
	return &parleyv1.Model{Id: "sonnet", DisplayName: "Sonnet", Description: "d", CreatedAt: timestamppb.New(time.Unix(1700000000, 0)), OwnedBy: "parley", InputTokenLimit: 200000, OutputTokenLimit: 64000, Reasoning: true}
}

func fullTokenCount() []proto.Message {
	return []proto.Message{
		&parleyv1.TokenCountRequest{Request: fullRequest()},
		&parleyv1.TokenCount{InputTokens: 10, CachedTokens: 2, Estimated: true, InputDetails: []*parleyv1.ModalityTokens{{Modality: parleyv1.Modality_MODALITY_TEXT, Tokens: 8}, {Modality: parleyv1.Modality_MODALITY_IMAGE, Tokens: 2}}},
	}
}

func roundTrip(t *testing.T, msg proto.Message) {
	t.Helper()
	b, err := protojson.Marshal(msg)
	if err != nil {
		t.Fatalf("marshal %T: %v", msg, err)
	}
	back := msg.ProtoReflect().New().Interface()
	if err := protojson.Unmarshal(b, back); err != nil {
		t.Fatalf("unmarshal %T: %v", msg, err)
	}
	if !proto.Equal(msg, back) {
		t.Fatalf("%T changed on a protojson round trip:\n%s", msg, b)
	}
	bin, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	back = msg.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(bin, back); err != nil || !proto.Equal(msg, back) {
		t.Fatalf("%T changed on a binary round trip (%v)", msg, err)
	}
}

func TestCanonicalModelRoundTrips(t *testing.T) {
	roundTrip(t, fullRequest())
	roundTrip(t, fullResponse())
	for _, ev := range fullStream() {
		roundTrip(t, ev)
	}
	roundTrip(t, fullTask())
	for _, in := range otherTaskInputs() {
		roundTrip(t, in)
	}
	roundTrip(t, fullModel())
	for _, m := range fullTokenCount() {
		roundTrip(t, m)
	}
}

// TestCanonicalGoldenForms pins the protojson form of the samples, which is
// also the documentation of what canonical JSON looks like.
func TestCanonicalGoldenForms(t *testing.T) {
	golden.Proto(t, "../testdata/canonical/request.json", fullRequest())
	golden.Proto(t, "../testdata/canonical/response.json", fullResponse())
	golden.Proto(t, "../testdata/canonical/task.json", fullTask())
	var back parleyv1.Request
	golden.ReadProto(t, "../testdata/canonical/request.json", &back)
	if !proto.Equal(&back, fullRequest()) {
		t.Fatal("the golden request does not read back into the sample")
	}
}

// TestSamplesUseEveryField fails when the canonical model gains a field that
// no sample sets: the round-trip test above would then prove nothing about
// it.
func TestSamplesUseEveryField(t *testing.T) {
	roots := []proto.Message{fullRequest(), fullResponse(), fullTask(), fullModel()}
	for _, ev := range fullStream() {
		roots = append(roots, ev)
	}
	for _, in := range otherTaskInputs() {
		roots = append(roots, in)
	}
	roots = append(roots, fullTokenCount()...)

	set := map[protoreflect.FullName]bool{}
	reachable := map[protoreflect.FullName]bool{}
	for _, m := range roots {
		collectSet(m.ProtoReflect(), set)
		collectReachable(m.ProtoReflect().Descriptor(), reachable, map[protoreflect.FullName]bool{})
	}
	var missing []string
	for name := range reachable {
		if !set[name] {
			missing = append(missing, string(name))
		}
	}
	sort.Strings(missing)
	// Every message type in the package must be reachable from a sample.
	files := []protoreflect.FileDescriptor{parleyv1.File_parley_v1_content_proto, parleyv1.File_parley_v1_request_proto, parleyv1.File_parley_v1_response_proto,
		parleyv1.File_parley_v1_stream_proto, parleyv1.File_parley_v1_error_proto, parleyv1.File_parley_v1_task_proto, parleyv1.File_parley_v1_tool_proto,
		parleyv1.File_parley_v1_safety_proto, parleyv1.File_parley_v1_dialect_proto, parleyv1.File_parley_v1_cache_proto, parleyv1.File_parley_v1_model_proto}
	for _, f := range files {
		msgs := f.Messages()
		for i := 0; i < msgs.Len(); i++ {
			md := msgs.Get(i)
			fields := md.Fields()
			for j := 0; j < fields.Len(); j++ {
				if fd := fields.Get(j); !reachable[fd.FullName()] {
					missing = append(missing, string(fd.FullName())+" (unreachable from any sample)")
				}
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("fields no sample sets; extend the samples in model_test.go:\n%v", missing)
	}
}

func collectSet(m protoreflect.Message, set map[protoreflect.FullName]bool) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		set[fd.FullName()] = true
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				collectSet(v.List().Get(i).Message(), set)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				collectSet(mv.Message(), set)
				return true
			})
		case fd.Message() != nil && !fd.IsMap() && !fd.IsList():
			collectSet(v.Message(), set)
		}
		return true
	})
}

func collectReachable(md protoreflect.MessageDescriptor, out, seen map[protoreflect.FullName]bool) {
	if seen[md.FullName()] || md.ParentFile().Package() != "parley.v1" {
		return
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		out[fd.FullName()] = true
		if fd.IsMap() {
			if vm := fd.MapValue().Message(); vm != nil {
				collectReachable(vm, out, seen)
			}
			continue
		}
		if fd.Message() != nil {
			collectReachable(fd.Message(), out, seen)
		}
	}
}
