package generatecontent

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The wire types model what Parley maps. Member names match in either
// spelling the dialect's clients use (inlineData and inline_data: the
// "case:ignore" option ignores case and underscores); they are written in
// camelCase. Every other member lands in the Unknown fallback of its object
// and travels in the canonical extension bag.

// Request is the body of :generateContent and :streamGenerateContent.
type Request struct {
	// Model is written only inside a countTokens generateContentRequest,
	// which names the model again; elsewhere the path names it.
	Model             string            `json:"model,omitzero"`
	Contents          *ContentList      `json:"contents,omitzero"`
	Tools             ToolList          `json:"tools,omitzero,case:ignore"`
	ToolConfig        *ToolConfig       `json:"toolConfig,omitzero,case:ignore"`
	SafetySettings    []SafetySetting   `json:"safetySettings,omitzero,case:ignore"`
	SystemInstruction *Content          `json:"systemInstruction,omitzero,case:ignore"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitzero,case:ignore"`
	CachedContent     string            `json:"cachedContent,omitzero,case:ignore"`
	Unknown           jsonx.Unknown     `json:",embed" jsonschema:"-"`
}

// ContentList is contents: an array, or a single object.
type ContentList []Content

// Content is one turn: a role and its parts.
type Content struct {
	Role    string        `json:"role,omitzero"`
	Parts   PartList      `json:"parts"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// PartList is parts: an array, or a single object.
type PartList []Part

// Part is one piece of a turn; exactly one kind is set (a thought is a text
// with Thought set; a signature may come with any kind).
type Part struct {
	Text                *string              `json:"text,omitzero"`
	Thought             *bool                `json:"thought,omitzero"`
	ThoughtSignature    string               `json:"thoughtSignature,omitzero,case:ignore"`
	InlineData          *Blob                `json:"inlineData,omitzero,case:ignore"`
	FileData            *FileData            `json:"fileData,omitzero,case:ignore"`
	FunctionCall        *FunctionCall        `json:"functionCall,omitzero,case:ignore"`
	FunctionResponse    *FunctionResponse    `json:"functionResponse,omitzero,case:ignore"`
	ExecutableCode      *ExecutableCode      `json:"executableCode,omitzero,case:ignore"`
	CodeExecutionResult *CodeExecutionResult `json:"codeExecutionResult,omitzero,case:ignore"`
	Unknown             jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// Blob is inline media.
type Blob struct {
	MimeType string        `json:"mimeType,case:ignore"`
	Data     string        `json:"data"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// FileData is media by URI.
type FileData struct {
	MimeType string        `json:"mimeType,omitzero,case:ignore"`
	FileURI  string        `json:"fileUri,case:ignore"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// FunctionCall is a call the model asks the client to make.
type FunctionCall struct {
	ID   string         `json:"id,omitzero"`
	Name string         `json:"name"`
	Args jsontext.Value `json:"args,omitzero"`
	// PartialArgs and WillContinue come only in streams whose request
	// asked for streamFunctionCallArguments (partial_args.go).
	PartialArgs  []PartialArg  `json:"partialArgs,omitzero,case:ignore" jsonschema:"-"`
	WillContinue *bool         `json:"willContinue,omitzero,case:ignore" jsonschema:"-"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// FunctionResponse is the client's answer to a call.
type FunctionResponse struct {
	ID       string         `json:"id,omitzero"`
	Name     string         `json:"name"`
	Response jsontext.Value `json:"response,omitzero"`
	// Parts are media that go with the response, which Gemini 3 models
	// read (tools.go, nestsResultMedia).
	Parts   []FunctionResponsePart `json:"parts,omitzero"`
	Unknown jsonx.Unknown          `json:",embed" jsonschema:"-"`
}

// FunctionResponsePart is one piece of media of a function response.
type FunctionResponsePart struct {
	InlineData *Blob         `json:"inlineData,omitzero,case:ignore"`
	FileData   *FileData     `json:"fileData,omitzero,case:ignore"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// ExecutableCode is code the model wrote for the service to run.
type ExecutableCode struct {
	Language string        `json:"language,omitzero"`
	Code     string        `json:"code"`
	ID       string        `json:"id,omitzero"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// CodeExecutionResult is what running ExecutableCode gave.
type CodeExecutionResult struct {
	Outcome string        `json:"outcome,omitzero"`
	Output  string        `json:"output,omitzero"`
	ID      string        `json:"id,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// ToolList is tools: an array, or a single object, which services read as
// a list of one.
type ToolList []Tool

// Tool is one tool object: declarations of functions, or one built-in
// tool.
type Tool struct {
	FunctionDeclarations  []FunctionDeclaration  `json:"functionDeclarations,omitzero,case:ignore"`
	CodeExecution         jsontext.Value         `json:"codeExecution,omitzero,case:ignore"`
	GoogleSearch          jsontext.Value         `json:"googleSearch,omitzero,case:ignore"`
	GoogleSearchRetrieval *GoogleSearchRetrieval `json:"googleSearchRetrieval,omitzero,case:ignore"`
	URLContext            jsontext.Value         `json:"urlContext,omitzero,case:ignore"`
	ComputerUse           *ComputerUse           `json:"computerUse,omitzero,case:ignore"`
	Unknown               jsonx.Unknown          `json:",embed" jsonschema:"-"`
}

// FunctionDeclaration declares a function; its parameters are given in the
// dialect's Schema form or as JSON Schema.
type FunctionDeclaration struct {
	Name                 string         `json:"name"`
	Description          string         `json:"description,omitzero"`
	Parameters           jsontext.Value `json:"parameters,omitzero"`
	ParametersJSONSchema jsontext.Value `json:"parametersJsonSchema,omitzero,case:ignore"`
	Unknown              jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// GoogleSearchRetrieval is search grounding with a dynamic threshold.
type GoogleSearchRetrieval struct {
	DynamicRetrievalConfig *DynamicRetrievalConfig `json:"dynamicRetrievalConfig,omitzero,case:ignore"`
	Unknown                jsonx.Unknown           `json:",embed" jsonschema:"-"`
}

// DynamicRetrievalConfig decides when a grounding search runs.
type DynamicRetrievalConfig struct {
	Mode             string        `json:"mode,omitzero"`
	DynamicThreshold *float64      `json:"dynamicThreshold,omitzero,case:ignore"`
	Unknown          jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// ComputerUse lets the model drive a browser the client operates.
type ComputerUse struct {
	Environment string        `json:"environment,omitzero"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// ToolConfig configures tool use.
type ToolConfig struct {
	FunctionCallingConfig *FunctionCallingConfig `json:"functionCallingConfig,omitzero,case:ignore"`
	Unknown               jsonx.Unknown          `json:",embed" jsonschema:"-"`
}

// FunctionCallingConfig is the function-calling mode.
type FunctionCallingConfig struct {
	Mode                 string        `json:"mode,omitzero"`
	AllowedFunctionNames []string      `json:"allowedFunctionNames,omitzero,case:ignore"`
	Unknown              jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// SafetySetting is a threshold for one harm category.
type SafetySetting struct {
	Category  string        `json:"category"`
	Threshold string        `json:"threshold"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// GenerationConfig holds the generation settings.
type GenerationConfig struct {
	StopSequences              []string        `json:"stopSequences,omitzero,case:ignore"`
	ResponseMimeType           string          `json:"responseMimeType,omitzero,case:ignore"`
	ResponseSchema             jsontext.Value  `json:"responseSchema,omitzero,case:ignore"`
	ResponseJSONSchema         jsontext.Value  `json:"responseJsonSchema,omitzero,case:ignore"`
	ResponseModalities         []string        `json:"responseModalities,omitzero,case:ignore"`
	CandidateCount             *int64          `json:"candidateCount,omitzero,case:ignore"`
	MaxOutputTokens            *int64          `json:"maxOutputTokens,omitzero,case:ignore"`
	Temperature                *float64        `json:"temperature,omitzero"`
	TopP                       *float64        `json:"topP,omitzero,case:ignore"`
	TopK                       *float64        `json:"topK,omitzero,case:ignore"`
	Seed                       *int64          `json:"seed,omitzero"`
	PresencePenalty            *float64        `json:"presencePenalty,omitzero,case:ignore"`
	FrequencyPenalty           *float64        `json:"frequencyPenalty,omitzero,case:ignore"`
	ResponseLogprobs           *bool           `json:"responseLogprobs,omitzero,case:ignore"`
	Logprobs                   *int64          `json:"logprobs,omitzero"`
	EnableEnhancedCivicAnswers *bool           `json:"enableEnhancedCivicAnswers,omitzero,case:ignore"`
	SpeechConfig               *SpeechConfig   `json:"speechConfig,omitzero,case:ignore"`
	ThinkingConfig             *ThinkingConfig `json:"thinkingConfig,omitzero,case:ignore"`
	MediaResolution            string          `json:"mediaResolution,omitzero,case:ignore"`
	Unknown                    jsonx.Unknown   `json:",embed" jsonschema:"-"`
}

// ThinkingConfig configures thinking.
type ThinkingConfig struct {
	IncludeThoughts *bool         `json:"includeThoughts,omitzero,case:ignore"`
	ThinkingBudget  *int64        `json:"thinkingBudget,omitzero,case:ignore"`
	ThinkingLevel   string        `json:"thinkingLevel,omitzero,case:ignore"`
	Unknown         jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// SpeechConfig configures spoken output.
type SpeechConfig struct {
	VoiceConfig             *VoiceConfig             `json:"voiceConfig,omitzero,case:ignore"`
	MultiSpeakerVoiceConfig *MultiSpeakerVoiceConfig `json:"multiSpeakerVoiceConfig,omitzero,case:ignore"`
	LanguageCode            string                   `json:"languageCode,omitzero,case:ignore"`
	Unknown                 jsonx.Unknown            `json:",embed" jsonschema:"-"`
}

// VoiceConfig selects a voice.
type VoiceConfig struct {
	PrebuiltVoiceConfig *PrebuiltVoiceConfig `json:"prebuiltVoiceConfig,omitzero,case:ignore"`
	Unknown             jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// PrebuiltVoiceConfig names a prebuilt voice.
type PrebuiltVoiceConfig struct {
	VoiceName string        `json:"voiceName,omitzero,case:ignore"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// MultiSpeakerVoiceConfig gives each speaker a voice.
type MultiSpeakerVoiceConfig struct {
	SpeakerVoiceConfigs []SpeakerVoiceConfig `json:"speakerVoiceConfigs,omitzero,case:ignore"`
	Unknown             jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// SpeakerVoiceConfig is one speaker's voice.
type SpeakerVoiceConfig struct {
	Speaker     string        `json:"speaker"`
	VoiceConfig *VoiceConfig  `json:"voiceConfig,omitzero,case:ignore"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// Response is a whole reply, and each chunk of a stream.
type Response struct {
	Candidates     []Candidate     `json:"candidates,omitzero"`
	PromptFeedback *PromptFeedback `json:"promptFeedback,omitzero,case:ignore"`
	UsageMetadata  *UsageMetadata  `json:"usageMetadata,omitzero,case:ignore"`
	ModelVersion   string          `json:"modelVersion,omitzero,case:ignore"`
	ResponseID     string          `json:"responseId,omitzero,case:ignore"`
	// Error is set on a stream chunk that reports a failure.
	Error   *ErrorDetail  `json:"error,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// Candidate is one answer.
type Candidate struct {
	Content               *Content               `json:"content,omitzero"`
	FinishReason          string                 `json:"finishReason,omitzero,case:ignore"`
	FinishMessage         string                 `json:"finishMessage,omitzero,case:ignore"`
	SafetyRatings         []SafetyRating         `json:"safetyRatings,omitzero,case:ignore"`
	CitationMetadata      *CitationMetadata      `json:"citationMetadata,omitzero,case:ignore"`
	TokenCount            *int64                 `json:"tokenCount,omitzero,case:ignore"`
	GroundingAttributions []GroundingAttribution `json:"groundingAttributions,omitzero,case:ignore"`
	GroundingMetadata     *GroundingMetadata     `json:"groundingMetadata,omitzero,case:ignore"`
	AvgLogprobs           *float64               `json:"avgLogprobs,omitzero,case:ignore"`
	LogprobsResult        *LogprobsResult        `json:"logprobsResult,omitzero,case:ignore"`
	URLContextMetadata    *URLContextMetadata    `json:"urlContextMetadata,omitzero,case:ignore"`
	Index                 *int64                 `json:"index,omitzero"`
	Unknown               jsonx.Unknown          `json:",embed" jsonschema:"-"`
}

// SafetyRating is a safety filter's verdict in one category.
type SafetyRating struct {
	Category         string        `json:"category"`
	Probability      string        `json:"probability,omitzero"`
	Blocked          *bool         `json:"blocked,omitzero"`
	ProbabilityScore *float64      `json:"probabilityScore,omitzero,case:ignore"`
	Severity         string        `json:"severity,omitzero"`
	SeverityScore    *float64      `json:"severityScore,omitzero,case:ignore"`
	Unknown          jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// CitationMetadata lists recited sources.
type CitationMetadata struct {
	CitationSources []CitationSource `json:"citationSources,omitzero,case:ignore"`
	// Citations is the Vertex AI spelling of the same list, read on input
	// and never written: clients of this dialect read citationSources.
	Citations []CitationSource `json:"citations,omitzero" jsonschema:"-"`
	Unknown   jsonx.Unknown    `json:",embed" jsonschema:"-"`
}

// CitationSource is one recited source.
type CitationSource struct {
	StartIndex *int64        `json:"startIndex,omitzero,case:ignore"`
	EndIndex   *int64        `json:"endIndex,omitzero,case:ignore"`
	URI        string        `json:"uri,omitzero"`
	License    string        `json:"license,omitzero"`
	Title      string        `json:"title,omitzero"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// GroundingMetadata tells which sources grounded the answer.
type GroundingMetadata struct {
	GroundingChunks   []GroundingChunk   `json:"groundingChunks,omitzero,case:ignore"`
	GroundingSupports []GroundingSupport `json:"groundingSupports,omitzero,case:ignore"`
	WebSearchQueries  []string           `json:"webSearchQueries,omitzero,case:ignore"`
	SearchEntryPoint  *SearchEntryPoint  `json:"searchEntryPoint,omitzero,case:ignore"`
	RetrievalMetadata *RetrievalMetadata `json:"retrievalMetadata,omitzero,case:ignore"`
	Unknown           jsonx.Unknown      `json:",embed" jsonschema:"-"`
}

// GroundingChunk is one source.
type GroundingChunk struct {
	Web              *WebChunk       `json:"web,omitzero"`
	RetrievedContext *RetrievedChunk `json:"retrievedContext,omitzero,case:ignore"`
	Unknown          jsonx.Unknown   `json:",embed" jsonschema:"-"`
}

// WebChunk is a web page.
type WebChunk struct {
	URI     string        `json:"uri,omitzero"`
	Title   string        `json:"title,omitzero"`
	Domain  string        `json:"domain,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// RetrievedChunk is a passage from a data store.
type RetrievedChunk struct {
	URI     string        `json:"uri,omitzero"`
	Title   string        `json:"title,omitzero"`
	Text    string        `json:"text,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// GroundingSupport links a span of the answer to sources.
type GroundingSupport struct {
	GroundingChunkIndices []int32       `json:"groundingChunkIndices,omitzero,case:ignore"`
	ConfidenceScores      []float64     `json:"confidenceScores,omitzero,case:ignore"`
	Segment               *Segment      `json:"segment,omitzero"`
	Unknown               jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// Segment is a span of the answer, in bytes.
type Segment struct {
	PartIndex  *int64        `json:"partIndex,omitzero,case:ignore"`
	StartIndex *int64        `json:"startIndex,omitzero,case:ignore"`
	EndIndex   *int64        `json:"endIndex,omitzero,case:ignore"`
	Text       string        `json:"text,omitzero"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// SearchEntryPoint is embeddable search content.
type SearchEntryPoint struct {
	RenderedContent string        `json:"renderedContent,omitzero,case:ignore"`
	SDKBlob         string        `json:"sdkBlob,omitzero,case:ignore"`
	Unknown         jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// RetrievalMetadata holds the predicted need for search. The spec spells the
// score's name with a neutral word; services and their SDKs use
// googleSearchDynamicRetrievalScore, which Parley reads and writes, and the
// neutral spelling is read too.
type RetrievalMetadata struct {
	GoogleSearchDynamicRetrievalScore *float64      `json:"googleSearchDynamicRetrievalScore,omitzero,case:ignore"`
	WebSearchDynamicRetrievalScore    *float64      `json:"webSearchDynamicRetrievalScore,omitzero,case:ignore"`
	Unknown                           jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// GroundingAttribution credits a source given in the request.
type GroundingAttribution struct {
	SourceID *AttributionSourceID `json:"sourceId,omitzero,case:ignore"`
	Content  *Content             `json:"content,omitzero"`
	Unknown  jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// AttributionSourceID names the credited source.
type AttributionSourceID struct {
	GroundingPassage       *GroundingPassage       `json:"groundingPassage,omitzero,case:ignore"`
	SemanticRetrieverChunk *SemanticRetrieverChunk `json:"semanticRetrieverChunk,omitzero,case:ignore"`
	Unknown                jsonx.Unknown           `json:",embed" jsonschema:"-"`
}

// GroundingPassage names an inline passage.
type GroundingPassage struct {
	PassageID string        `json:"passageId,omitzero,case:ignore"`
	PartIndex *int64        `json:"partIndex,omitzero,case:ignore"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// SemanticRetrieverChunk names a chunk of a corpus.
type SemanticRetrieverChunk struct {
	Source  string        `json:"source,omitzero"`
	Chunk   string        `json:"chunk,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// LogprobsResult holds the log-probabilities of the answer's tokens.
type LogprobsResult struct {
	TopCandidates    []TopCandidates    `json:"topCandidates,omitzero,case:ignore"`
	ChosenCandidates []LogprobCandidate `json:"chosenCandidates,omitzero,case:ignore"`
	Unknown          jsonx.Unknown      `json:",embed" jsonschema:"-"`
}

// TopCandidates are the alternatives at one step.
type TopCandidates struct {
	Candidates []LogprobCandidate `json:"candidates,omitzero"`
	Unknown    jsonx.Unknown      `json:",embed" jsonschema:"-"`
}

// LogprobCandidate is a token and its log-probability.
type LogprobCandidate struct {
	Token          string        `json:"token,omitzero"`
	TokenID        *int64        `json:"tokenId,omitzero,case:ignore"`
	LogProbability *float64      `json:"logProbability,omitzero,case:ignore"`
	Unknown        jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// URLContextMetadata lists fetched URLs.
type URLContextMetadata struct {
	URLMetadata []URLMetadata `json:"urlMetadata,omitzero,case:ignore"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// URLMetadata is one fetched URL.
type URLMetadata struct {
	RetrievedURL       string        `json:"retrievedUrl,omitzero,case:ignore"`
	URLRetrievalStatus string        `json:"urlRetrievalStatus,omitzero,case:ignore"`
	Unknown            jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// PromptFeedback is the verdict on the prompt.
type PromptFeedback struct {
	BlockReason        string         `json:"blockReason,omitzero,case:ignore"`
	SafetyRatings      []SafetyRating `json:"safetyRatings,omitzero,case:ignore"`
	BlockReasonMessage string         `json:"blockReasonMessage,omitzero,case:ignore"`
	Unknown            jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// UsageMetadata counts tokens. promptTokenCount includes the cached
// tokens; candidatesTokenCount leaves out the thoughts, which
// thoughtsTokenCount counts.
type UsageMetadata struct {
	PromptTokenCount           *int64               `json:"promptTokenCount,omitzero,case:ignore"`
	CachedContentTokenCount    *int64               `json:"cachedContentTokenCount,omitzero,case:ignore"`
	CandidatesTokenCount       *int64               `json:"candidatesTokenCount,omitzero,case:ignore"`
	ToolUsePromptTokenCount    *int64               `json:"toolUsePromptTokenCount,omitzero,case:ignore"`
	ThoughtsTokenCount         *int64               `json:"thoughtsTokenCount,omitzero,case:ignore"`
	TotalTokenCount            *int64               `json:"totalTokenCount,omitzero,case:ignore"`
	PromptTokensDetails        []ModalityTokenCount `json:"promptTokensDetails,omitzero,case:ignore"`
	CacheTokensDetails         []ModalityTokenCount `json:"cacheTokensDetails,omitzero,case:ignore"`
	CandidatesTokensDetails    []ModalityTokenCount `json:"candidatesTokensDetails,omitzero,case:ignore"`
	ToolUsePromptTokensDetails []ModalityTokenCount `json:"toolUsePromptTokensDetails,omitzero,case:ignore"`
	Unknown                    jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// ModalityTokenCount counts the tokens of one modality.
type ModalityTokenCount struct {
	Modality   string        `json:"modality"`
	TokenCount *int64        `json:"tokenCount,omitzero,case:ignore"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// ErrorBody is the body of an error reply.
type ErrorBody struct {
	Error   ErrorDetail   `json:"error"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// ErrorDetail is a Google API error.
type ErrorDetail struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status,omitzero"`
	Details []jsontext.Value `json:"details,omitzero"`
	Unknown jsonx.Unknown    `json:",embed" jsonschema:"-"`
}

// CountTokensRequest is the body of :countTokens: contents alone, or a
// whole generateContentRequest.
type CountTokensRequest struct {
	Contents               *ContentList  `json:"contents,omitzero"`
	GenerateContentRequest *Request      `json:"generateContentRequest,omitzero,case:ignore"`
	Unknown                jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// CountTokensResponse is the reply of :countTokens.
type CountTokensResponse struct {
	TotalTokens             int64                `json:"totalTokens"`
	CachedContentTokenCount int64                `json:"cachedContentTokenCount,omitzero"`
	PromptTokensDetails     []ModalityTokenCount `json:"promptTokensDetails,omitzero"`
}
