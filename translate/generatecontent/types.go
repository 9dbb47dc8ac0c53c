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
	ToolConfig        *toolConfig       `json:"toolConfig,omitzero,case:ignore"`
	SafetySettings    []safetySetting   `json:"safetySettings,omitzero,case:ignore"`
	SystemInstruction *Content          `json:"systemInstruction,omitzero,case:ignore"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitzero,case:ignore"`
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
	InlineData          *blob                `json:"inlineData,omitzero,case:ignore"`
	FileData            *fileData            `json:"fileData,omitzero,case:ignore"`
	FunctionCall        *FunctionCall        `json:"functionCall,omitzero,case:ignore"`
	FunctionResponse    *functionResponse    `json:"functionResponse,omitzero,case:ignore"`
	ExecutableCode      *executableCode      `json:"executableCode,omitzero,case:ignore"`
	CodeExecutionResult *codeExecutionResult `json:"codeExecutionResult,omitzero,case:ignore"`
	Unknown             jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// blob is inline media.
type blob struct {
	MimeType string        `json:"mimeType,case:ignore"`
	Data     string        `json:"data"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// fileData is media by URI.
type fileData struct {
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
	PartialArgs  []partialArg  `json:"partialArgs,omitzero,case:ignore" jsonschema:"-"`
	WillContinue *bool         `json:"willContinue,omitzero,case:ignore" jsonschema:"-"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// functionResponse is the client's answer to a call.
type functionResponse struct {
	ID       string         `json:"id,omitzero"`
	Name     string         `json:"name"`
	Response jsontext.Value `json:"response,omitzero"`
	// Parts are media that go with the response, which Gemini 3 models
	// read (tools.go, nestsResultMedia).
	Parts   []functionResponsePart `json:"parts,omitzero"`
	Unknown jsonx.Unknown          `json:",embed" jsonschema:"-"`
}

// functionResponsePart is one piece of media of a function response.
type functionResponsePart struct {
	InlineData *blob         `json:"inlineData,omitzero,case:ignore"`
	FileData   *fileData     `json:"fileData,omitzero,case:ignore"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// executableCode is code the model wrote for the service to run.
type executableCode struct {
	Language string        `json:"language,omitzero"`
	Code     string        `json:"code"`
	ID       string        `json:"id,omitzero"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// codeExecutionResult is what running ExecutableCode gave.
type codeExecutionResult struct {
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
	FunctionDeclarations  []functionDeclaration  `json:"functionDeclarations,omitzero,case:ignore"`
	CodeExecution         jsontext.Value         `json:"codeExecution,omitzero,case:ignore"`
	GoogleSearch          jsontext.Value         `json:"googleSearch,omitzero,case:ignore"`
	GoogleSearchRetrieval *googleSearchRetrieval `json:"googleSearchRetrieval,omitzero,case:ignore"`
	URLContext            jsontext.Value         `json:"urlContext,omitzero,case:ignore"`
	ComputerUse           *computerUse           `json:"computerUse,omitzero,case:ignore"`
	Unknown               jsonx.Unknown          `json:",embed" jsonschema:"-"`
}

// functionDeclaration declares a function; its parameters are given in the
// dialect's Schema form or as JSON Schema.
type functionDeclaration struct {
	Name                 string         `json:"name"`
	Description          string         `json:"description,omitzero"`
	Parameters           jsontext.Value `json:"parameters,omitzero"`
	ParametersJSONSchema jsontext.Value `json:"parametersJsonSchema,omitzero,case:ignore"`
	Unknown              jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// googleSearchRetrieval is search grounding with a dynamic threshold.
type googleSearchRetrieval struct {
	DynamicRetrievalConfig *dynamicRetrievalConfig `json:"dynamicRetrievalConfig,omitzero,case:ignore"`
	Unknown                jsonx.Unknown           `json:",embed" jsonschema:"-"`
}

// dynamicRetrievalConfig decides when a grounding search runs.
type dynamicRetrievalConfig struct {
	Mode             string        `json:"mode,omitzero"`
	DynamicThreshold *float64      `json:"dynamicThreshold,omitzero,case:ignore"`
	Unknown          jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// computerUse lets the model drive a browser the client operates.
type computerUse struct {
	Environment string        `json:"environment,omitzero"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// toolConfig configures tool use.
type toolConfig struct {
	FunctionCallingConfig *functionCallingConfig `json:"functionCallingConfig,omitzero,case:ignore"`
	Unknown               jsonx.Unknown          `json:",embed" jsonschema:"-"`
}

// functionCallingConfig is the function-calling mode.
type functionCallingConfig struct {
	Mode                 string        `json:"mode,omitzero"`
	AllowedFunctionNames []string      `json:"allowedFunctionNames,omitzero,case:ignore"`
	Unknown              jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// safetySetting is a threshold for one harm category.
type safetySetting struct {
	Category  string        `json:"category"`
	Threshold string        `json:"threshold"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// generationConfig holds the generation settings.
type generationConfig struct {
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
	SpeechConfig               *speechConfig   `json:"speechConfig,omitzero,case:ignore"`
	ThinkingConfig             *thinkingConfig `json:"thinkingConfig,omitzero,case:ignore"`
	MediaResolution            string          `json:"mediaResolution,omitzero,case:ignore"`
	Unknown                    jsonx.Unknown   `json:",embed" jsonschema:"-"`
}

// thinkingConfig configures thinking.
type thinkingConfig struct {
	IncludeThoughts *bool         `json:"includeThoughts,omitzero,case:ignore"`
	ThinkingBudget  *int64        `json:"thinkingBudget,omitzero,case:ignore"`
	ThinkingLevel   string        `json:"thinkingLevel,omitzero,case:ignore"`
	Unknown         jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// speechConfig configures spoken output.
type speechConfig struct {
	VoiceConfig             *voiceConfig             `json:"voiceConfig,omitzero,case:ignore"`
	MultiSpeakerVoiceConfig *multiSpeakerVoiceConfig `json:"multiSpeakerVoiceConfig,omitzero,case:ignore"`
	LanguageCode            string                   `json:"languageCode,omitzero,case:ignore"`
	Unknown                 jsonx.Unknown            `json:",embed" jsonschema:"-"`
}

// voiceConfig selects a voice.
type voiceConfig struct {
	PrebuiltVoiceConfig *prebuiltVoiceConfig `json:"prebuiltVoiceConfig,omitzero,case:ignore"`
	Unknown             jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// prebuiltVoiceConfig names a prebuilt voice.
type prebuiltVoiceConfig struct {
	VoiceName string        `json:"voiceName,omitzero,case:ignore"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// multiSpeakerVoiceConfig gives each speaker a voice.
type multiSpeakerVoiceConfig struct {
	SpeakerVoiceConfigs []speakerVoiceConfig `json:"speakerVoiceConfigs,omitzero,case:ignore"`
	Unknown             jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// speakerVoiceConfig is one speaker's voice.
type speakerVoiceConfig struct {
	Speaker     string        `json:"speaker"`
	VoiceConfig *voiceConfig  `json:"voiceConfig,omitzero,case:ignore"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// Response is a whole reply, and each chunk of a stream.
type Response struct {
	Candidates     []candidate     `json:"candidates,omitzero"`
	PromptFeedback *promptFeedback `json:"promptFeedback,omitzero,case:ignore"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata,omitzero,case:ignore"`
	ModelVersion   string          `json:"modelVersion,omitzero,case:ignore"`
	ResponseID     string          `json:"responseId,omitzero,case:ignore"`
	// Error is set on a stream chunk that reports a failure.
	Error   *errorDetail  `json:"error,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// candidate is one answer.
type candidate struct {
	Content               *Content               `json:"content,omitzero"`
	FinishReason          string                 `json:"finishReason,omitzero,case:ignore"`
	FinishMessage         string                 `json:"finishMessage,omitzero,case:ignore"`
	SafetyRatings         []safetyRating         `json:"safetyRatings,omitzero,case:ignore"`
	CitationMetadata      *citationMetadata      `json:"citationMetadata,omitzero,case:ignore"`
	TokenCount            *int64                 `json:"tokenCount,omitzero,case:ignore"`
	GroundingAttributions []groundingAttribution `json:"groundingAttributions,omitzero,case:ignore"`
	GroundingMetadata     *groundingMetadata     `json:"groundingMetadata,omitzero,case:ignore"`
	AvgLogprobs           *float64               `json:"avgLogprobs,omitzero,case:ignore"`
	LogprobsResult        *logprobsResult        `json:"logprobsResult,omitzero,case:ignore"`
	URLContextMetadata    *urlContextMetadata    `json:"urlContextMetadata,omitzero,case:ignore"`
	Index                 *int64                 `json:"index,omitzero"`
	Unknown               jsonx.Unknown          `json:",embed" jsonschema:"-"`
}

// safetyRating is a safety filter's verdict in one category.
type safetyRating struct {
	Category         string        `json:"category"`
	Probability      string        `json:"probability,omitzero"`
	Blocked          *bool         `json:"blocked,omitzero"`
	ProbabilityScore *float64      `json:"probabilityScore,omitzero,case:ignore"`
	Severity         string        `json:"severity,omitzero"`
	SeverityScore    *float64      `json:"severityScore,omitzero,case:ignore"`
	Unknown          jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// citationMetadata lists recited sources.
type citationMetadata struct {
	CitationSources []citationSource `json:"citationSources,omitzero,case:ignore"`
	// Citations is the Vertex AI spelling of the same list, read on input
	// and never written: clients of this dialect read citationSources.
	Citations []citationSource `json:"citations,omitzero" jsonschema:"-"`
	Unknown   jsonx.Unknown    `json:",embed" jsonschema:"-"`
}

// citationSource is one recited source.
type citationSource struct {
	StartIndex *int64        `json:"startIndex,omitzero,case:ignore"`
	EndIndex   *int64        `json:"endIndex,omitzero,case:ignore"`
	URI        string        `json:"uri,omitzero"`
	License    string        `json:"license,omitzero"`
	Title      string        `json:"title,omitzero"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// groundingMetadata tells which sources grounded the answer.
type groundingMetadata struct {
	GroundingChunks   []groundingChunk   `json:"groundingChunks,omitzero,case:ignore"`
	GroundingSupports []groundingSupport `json:"groundingSupports,omitzero,case:ignore"`
	WebSearchQueries  []string           `json:"webSearchQueries,omitzero,case:ignore"`
	SearchEntryPoint  *searchEntryPoint  `json:"searchEntryPoint,omitzero,case:ignore"`
	RetrievalMetadata *retrievalMetadata `json:"retrievalMetadata,omitzero,case:ignore"`
	Unknown           jsonx.Unknown      `json:",embed" jsonschema:"-"`
}

// groundingChunk is one source.
type groundingChunk struct {
	Web              *webChunk       `json:"web,omitzero"`
	RetrievedContext *retrievedChunk `json:"retrievedContext,omitzero,case:ignore"`
	Unknown          jsonx.Unknown   `json:",embed" jsonschema:"-"`
}

// webChunk is a web page.
type webChunk struct {
	URI     string        `json:"uri,omitzero"`
	Title   string        `json:"title,omitzero"`
	Domain  string        `json:"domain,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// retrievedChunk is a passage from a data store.
type retrievedChunk struct {
	URI     string        `json:"uri,omitzero"`
	Title   string        `json:"title,omitzero"`
	Text    string        `json:"text,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// groundingSupport links a span of the answer to sources.
type groundingSupport struct {
	GroundingChunkIndices []int32       `json:"groundingChunkIndices,omitzero,case:ignore"`
	ConfidenceScores      []float64     `json:"confidenceScores,omitzero,case:ignore"`
	Segment               *segment      `json:"segment,omitzero"`
	Unknown               jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// segment is a span of the answer, in bytes.
type segment struct {
	PartIndex  *int64        `json:"partIndex,omitzero,case:ignore"`
	StartIndex *int64        `json:"startIndex,omitzero,case:ignore"`
	EndIndex   *int64        `json:"endIndex,omitzero,case:ignore"`
	Text       string        `json:"text,omitzero"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// searchEntryPoint is embeddable search content.
type searchEntryPoint struct {
	RenderedContent string        `json:"renderedContent,omitzero,case:ignore"`
	SDKBlob         string        `json:"sdkBlob,omitzero,case:ignore"`
	Unknown         jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// retrievalMetadata holds the predicted need for search. The spec spells the
// score's name with a neutral word; services and their SDKs use
// googleSearchDynamicRetrievalScore, which Parley reads and writes, and the
// neutral spelling is read too.
type retrievalMetadata struct {
	GoogleSearchDynamicRetrievalScore *float64      `json:"googleSearchDynamicRetrievalScore,omitzero,case:ignore"`
	WebSearchDynamicRetrievalScore    *float64      `json:"webSearchDynamicRetrievalScore,omitzero,case:ignore"`
	Unknown                           jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// groundingAttribution credits a source given in the request.
type groundingAttribution struct {
	SourceID *attributionSourceID `json:"sourceId,omitzero,case:ignore"`
	Content  *Content             `json:"content,omitzero"`
	Unknown  jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// attributionSourceID names the credited source.
type attributionSourceID struct {
	GroundingPassage       *groundingPassage       `json:"groundingPassage,omitzero,case:ignore"`
	SemanticRetrieverChunk *semanticRetrieverChunk `json:"semanticRetrieverChunk,omitzero,case:ignore"`
	Unknown                jsonx.Unknown           `json:",embed" jsonschema:"-"`
}

// groundingPassage names an inline passage.
type groundingPassage struct {
	PassageID string        `json:"passageId,omitzero,case:ignore"`
	PartIndex *int64        `json:"partIndex,omitzero,case:ignore"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// semanticRetrieverChunk names a chunk of a corpus.
type semanticRetrieverChunk struct {
	Source  string        `json:"source,omitzero"`
	Chunk   string        `json:"chunk,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// logprobsResult holds the log-probabilities of the answer's tokens.
type logprobsResult struct {
	TopCandidates    []topCandidates    `json:"topCandidates,omitzero,case:ignore"`
	ChosenCandidates []logprobCandidate `json:"chosenCandidates,omitzero,case:ignore"`
	Unknown          jsonx.Unknown      `json:",embed" jsonschema:"-"`
}

// topCandidates are the alternatives at one step.
type topCandidates struct {
	Candidates []logprobCandidate `json:"candidates,omitzero"`
	Unknown    jsonx.Unknown      `json:",embed" jsonschema:"-"`
}

// logprobCandidate is a token and its log-probability.
type logprobCandidate struct {
	Token          string        `json:"token,omitzero"`
	TokenID        *int64        `json:"tokenId,omitzero,case:ignore"`
	LogProbability *float64      `json:"logProbability,omitzero,case:ignore"`
	Unknown        jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// urlContextMetadata lists fetched URLs.
type urlContextMetadata struct {
	URLMetadata []urlMetadata `json:"urlMetadata,omitzero,case:ignore"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// urlMetadata is one fetched URL.
type urlMetadata struct {
	RetrievedURL       string        `json:"retrievedUrl,omitzero,case:ignore"`
	URLRetrievalStatus string        `json:"urlRetrievalStatus,omitzero,case:ignore"`
	Unknown            jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// promptFeedback is the verdict on the prompt.
type promptFeedback struct {
	BlockReason        string         `json:"blockReason,omitzero,case:ignore"`
	SafetyRatings      []safetyRating `json:"safetyRatings,omitzero,case:ignore"`
	BlockReasonMessage string         `json:"blockReasonMessage,omitzero,case:ignore"`
	Unknown            jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// usageMetadata counts tokens. promptTokenCount includes the cached
// tokens; candidatesTokenCount leaves out the thoughts, which
// thoughtsTokenCount counts.
type usageMetadata struct {
	PromptTokenCount           *int64               `json:"promptTokenCount,omitzero,case:ignore"`
	CachedContentTokenCount    *int64               `json:"cachedContentTokenCount,omitzero,case:ignore"`
	CandidatesTokenCount       *int64               `json:"candidatesTokenCount,omitzero,case:ignore"`
	ToolUsePromptTokenCount    *int64               `json:"toolUsePromptTokenCount,omitzero,case:ignore"`
	ThoughtsTokenCount         *int64               `json:"thoughtsTokenCount,omitzero,case:ignore"`
	TotalTokenCount            *int64               `json:"totalTokenCount,omitzero,case:ignore"`
	PromptTokensDetails        []modalityTokenCount `json:"promptTokensDetails,omitzero,case:ignore"`
	CacheTokensDetails         []modalityTokenCount `json:"cacheTokensDetails,omitzero,case:ignore"`
	CandidatesTokensDetails    []modalityTokenCount `json:"candidatesTokensDetails,omitzero,case:ignore"`
	ToolUsePromptTokensDetails []modalityTokenCount `json:"toolUsePromptTokensDetails,omitzero,case:ignore"`
	Unknown                    jsonx.Unknown        `json:",embed" jsonschema:"-"`
	// box holds the counts the chunk reader read, for canonicalUsage.
	box *usageBox
}

// modalityTokenCount counts the tokens of one modality.
type modalityTokenCount struct {
	Modality   string        `json:"modality"`
	TokenCount *int64        `json:"tokenCount,omitzero,case:ignore"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// errorBody is the body of an error reply.
type errorBody struct {
	Error   errorDetail   `json:"error"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// errorDetail is a Google API error.
type errorDetail struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status,omitzero"`
	Details []jsontext.Value `json:"details,omitzero"`
	Unknown jsonx.Unknown    `json:",embed" jsonschema:"-"`
}

// countTokensRequest is the body of :countTokens: contents alone, or a
// whole generateContentRequest.
type countTokensRequest struct {
	Contents               *ContentList  `json:"contents,omitzero"`
	GenerateContentRequest *Request      `json:"generateContentRequest,omitzero,case:ignore"`
	Unknown                jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// countTokensResponse is the reply of :countTokens.
type countTokensResponse struct {
	TotalTokens             int64                `json:"totalTokens"`
	CachedContentTokenCount int64                `json:"cachedContentTokenCount,omitzero"`
	PromptTokensDetails     []modalityTokenCount `json:"promptTokensDetails,omitzero"`
}
