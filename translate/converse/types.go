package converse

import (
	"github.com/go-json-experiment/json/jsontext"
)

// The wire types model the members Parley maps, spelled as the service's
// API reference and the AWS SDKs spell them (aws-sdk-go-v2
// service/bedrockruntime schemas). Unions (ContentBlock, ToolChoice, ...)
// are structs of optional members of which exactly one is set. Members of
// a reply Parley does not model (the "p" padding of stream events, trace,
// performanceConfig) are ignored on decoding: there is no client of this
// dialect to hand them back to.

// Request is the body of POST /model/{modelId}/converse and
// /converse-stream; the model is in the path.
type Request struct {
	Messages                     []Message         `json:"messages"`
	System                       []SystemBlock     `json:"system,omitzero"`
	InferenceConfig              *InferenceConfig  `json:"inferenceConfig,omitzero"`
	ToolConfig                   *ToolConfig       `json:"toolConfig,omitzero"`
	AdditionalModelRequestFields jsontext.Value    `json:"additionalModelRequestFields,omitzero"`
	OutputConfig                 *outputConfig     `json:"outputConfig,omitzero"`
	RequestMetadata              map[string]string `json:"requestMetadata,omitzero"`
	ServiceTier                  *serviceTier      `json:"serviceTier,omitzero"`
}

// Message is one turn: role user or assistant.
type Message struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// SystemBlock is one block of the system prompt: text or a cache point.
type SystemBlock struct {
	Text       *string     `json:"text,omitzero"`
	CachePoint *cachePoint `json:"cachePoint,omitzero"`
}

// ContentBlock is one block of a message (a union).
type ContentBlock struct {
	Text             *string           `json:"text,omitzero"`
	Image            *imageBlock       `json:"image,omitzero"`
	Document         *documentBlock    `json:"document,omitzero"`
	Video            *videoBlock       `json:"video,omitzero"`
	ToolUse          *ToolUseBlock     `json:"toolUse,omitzero"`
	ToolResult       *toolResultBlock  `json:"toolResult,omitzero"`
	CachePoint       *cachePoint       `json:"cachePoint,omitzero"`
	ReasoningContent *ReasoningContent `json:"reasoningContent,omitzero"`
	CitationsContent *citationsContent `json:"citationsContent,omitzero"`
}

// cachePoint marks the end of a cacheable prefix.
type cachePoint struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitzero"`
}

// imageBlock is an image: png, jpeg, gif or webp.
type imageBlock struct {
	Format string       `json:"format"`
	Source *MediaSource `json:"source"`
}

// documentBlock is a document: pdf, csv, doc, docx, xls, xlsx, html, txt
// or md. Its name is required and restricted (see documentName).
type documentBlock struct {
	Format  string       `json:"format,omitzero"`
	Name    string       `json:"name"`
	Source  *MediaSource `json:"source"`
	Context string       `json:"context,omitzero"`
}

// videoBlock is a video.
type videoBlock struct {
	Format string       `json:"format"`
	Source *MediaSource `json:"source"`
}

// MediaSource is where media comes from: inline bytes (base64 on the
// wire) or an S3 object.
type MediaSource struct {
	Bytes      []byte      `json:"bytes,omitzero"`
	S3Location *s3Location `json:"s3Location,omitzero"`
}

// s3Location is an object in S3.
type s3Location struct {
	URI         string `json:"uri"`
	BucketOwner string `json:"bucketOwner,omitzero"`
}

// ToolUseBlock is a call the model made.
type ToolUseBlock struct {
	ToolUseID string         `json:"toolUseId"`
	Name      string         `json:"name"`
	Input     jsontext.Value `json:"input"`
}

// toolResultBlock is the result of a call.
type toolResultBlock struct {
	ToolUseID string              `json:"toolUseId"`
	Content   []toolResultContent `json:"content"`
	Status    string              `json:"status,omitzero"`
}

// toolResultContent is one block of a tool result (a union).
type toolResultContent struct {
	Text     *string        `json:"text,omitzero"`
	JSON     jsontext.Value `json:"json,omitzero"`
	Image    *imageBlock    `json:"image,omitzero"`
	Document *documentBlock `json:"document,omitzero"`
	Video    *videoBlock    `json:"video,omitzero"`
}

// ReasoningContent is the model's reasoning: its text with a signature,
// or the encrypted content of redacted reasoning.
type ReasoningContent struct {
	ReasoningText   *ReasoningText `json:"reasoningText,omitzero"`
	RedactedContent []byte         `json:"redactedContent,omitzero"`
}

// ReasoningText is reasoning text and the signature that vouches for it.
type ReasoningText struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitzero"`
}

// citationsContent is generated text with the citations that back it.
type citationsContent struct {
	Content   []citationText `json:"content,omitzero"`
	Citations []citation     `json:"citations,omitzero"`
}

// citationText is a piece of generated text.
type citationText struct {
	Text string `json:"text"`
}

// citation is one source of a citations block or delta.
type citation struct {
	Title         string            `json:"title,omitzero"`
	Source        string            `json:"source,omitzero"`
	SourceContent []citationText    `json:"sourceContent,omitzero"`
	Location      *citationLocation `json:"location,omitzero"`
}

// citationLocation is where a citation points (a union).
type citationLocation struct {
	Web           *webLocation   `json:"web,omitzero"`
	DocumentChar  *documentRange `json:"documentChar,omitzero"`
	DocumentPage  *documentRange `json:"documentPage,omitzero"`
	DocumentChunk *documentRange `json:"documentChunk,omitzero"`
}

// webLocation is a cited web page.
type webLocation struct {
	URL    string `json:"url,omitzero"`
	Domain string `json:"domain,omitzero"`
}

// documentRange is a cited span of a document given in the request.
type documentRange struct {
	DocumentIndex *int64 `json:"documentIndex,omitzero"`
	Start         *int64 `json:"start,omitzero"`
	End           *int64 `json:"end,omitzero"`
}

// InferenceConfig holds the sampling settings every model takes.
type InferenceConfig struct {
	MaxTokens     *int32   `json:"maxTokens,omitzero"`
	Temperature   *float64 `json:"temperature,omitzero"`
	TopP          *float64 `json:"topP,omitzero"`
	StopSequences []string `json:"stopSequences,omitzero"`
}

// ToolConfig offers tools and says how the model must use them.
type ToolConfig struct {
	Tools      []tool      `json:"tools"`
	ToolChoice *toolChoice `json:"toolChoice,omitzero"`
}

// tool is a tool specification or a cache point (a union).
type tool struct {
	ToolSpec   *toolSpec   `json:"toolSpec,omitzero"`
	CachePoint *cachePoint `json:"cachePoint,omitzero"`
}

// toolSpec is a function the client runs.
type toolSpec struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitzero"`
	InputSchema inputSchema `json:"inputSchema"`
	Strict      *bool       `json:"strict,omitzero"`
}

// inputSchema holds a JSON Schema as a JSON value.
type inputSchema struct {
	JSON jsontext.Value `json:"json"`
}

// toolChoice is auto, any or one tool (a union of empty objects and a name).
type toolChoice struct {
	Auto *struct{}     `json:"auto,omitzero"`
	Any  *struct{}     `json:"any,omitzero"`
	Tool *specificTool `json:"tool,omitzero"`
}

// specificTool names the tool the model must call.
type specificTool struct {
	Name string `json:"name"`
}

// outputConfig holds structured output.
type outputConfig struct {
	TextFormat *outputFormat `json:"textFormat,omitzero"`
}

// outputFormat is a structured output format: type json_schema.
type outputFormat struct {
	Type      string          `json:"type"`
	Structure outputStructure `json:"structure"`
}

// outputStructure holds the JSON schema of the answer.
type outputStructure struct {
	JSONSchema *jsonSchemaDefinition `json:"jsonSchema,omitzero"`
}

// jsonSchemaDefinition is a JSON schema as JSON text, with a name.
type jsonSchemaDefinition struct {
	Schema      string `json:"schema"`
	Name        string `json:"name,omitzero"`
	Description string `json:"description,omitzero"`
}

// serviceTier is the processing tier: priority, default, flex or reserved.
type serviceTier struct {
	Type string `json:"type"`
}

// Response is the reply of /converse.
type Response struct {
	Output                        *Output        `json:"output"`
	StopReason                    string         `json:"stopReason"`
	Usage                         *Usage         `json:"usage,omitzero"`
	Metrics                       *Metrics       `json:"metrics,omitzero"`
	AdditionalModelResponseFields jsontext.Value `json:"additionalModelResponseFields,omitzero"`
	ServiceTier                   *serviceTier   `json:"serviceTier,omitzero"`
}

// Output holds the answer.
type Output struct {
	Message *Message `json:"message,omitzero"`
}

// Usage counts tokens. InputTokens leaves out the tokens read from or
// written to the prompt cache.
type Usage struct {
	InputTokens           *int64        `json:"inputTokens,omitzero"`
	OutputTokens          *int64        `json:"outputTokens,omitzero"`
	TotalTokens           *int64        `json:"totalTokens,omitzero"`
	CacheReadInputTokens  *int64        `json:"cacheReadInputTokens,omitzero"`
	CacheWriteInputTokens *int64        `json:"cacheWriteInputTokens,omitzero"`
	CacheDetails          []cacheDetail `json:"cacheDetails,omitzero"`
}

// cacheDetail counts the cache writes of one lifetime.
type cacheDetail struct {
	InputTokens int64  `json:"inputTokens"`
	TTL         string `json:"ttl"`
}

// Metrics holds the latency of the call.
type Metrics struct {
	LatencyMs *int64 `json:"latencyMs,omitzero"`
}

// The events of /converse-stream, by :event-type.

// messageStart opens the message.
type messageStart struct {
	Role string `json:"role"`
}

// blockStart opens a block that has something to say before its deltas:
// a tool call's id and name.
type blockStart struct {
	ContentBlockIndex *int64 `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse,omitzero"`
	} `json:"start"`
}

// blockDelta extends a block; a text or reasoning block begins with its
// first delta.
type blockDelta struct {
	ContentBlockIndex *int64 `json:"contentBlockIndex"`
	Delta             *struct {
		Text    *string `json:"text,omitzero"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse,omitzero"`
		ReasoningContent *struct {
			Text            *string `json:"text,omitzero"`
			Signature       *string `json:"signature,omitzero"`
			RedactedContent []byte  `json:"redactedContent,omitzero"`
		} `json:"reasoningContent,omitzero"`
		Citation *citation `json:"citation,omitzero"`
	} `json:"delta"`
}

// blockStop closes a block.
type blockStop struct {
	ContentBlockIndex *int64 `json:"contentBlockIndex"`
}

// messageStop ends the message with its stop reason.
type messageStop struct {
	StopReason                    string         `json:"stopReason"`
	AdditionalModelResponseFields jsontext.Value `json:"additionalModelResponseFields,omitzero"`
}

// metadata closes the stream with usage and metrics.
type metadata struct {
	Usage       *Usage       `json:"usage,omitzero"`
	Metrics     *Metrics     `json:"metrics,omitzero"`
	ServiceTier *serviceTier `json:"serviceTier,omitzero"`
}

// CountRequest is the body of POST /model/{modelId}/count-tokens for a
// Converse request.
type CountRequest struct {
	Input countInput `json:"input"`
}

// countInput is a union; Parley counts Converse requests.
type countInput struct {
	Converse *CountConverse `json:"converse"`
}

// CountConverse is a Converse request's input, as count-tokens takes it.
type CountConverse struct {
	Messages                     []Message      `json:"messages,omitzero"`
	System                       []SystemBlock  `json:"system,omitzero"`
	ToolConfig                   *ToolConfig    `json:"toolConfig,omitzero"`
	AdditionalModelRequestFields jsontext.Value `json:"additionalModelRequestFields,omitzero"`
}

// countResponse is the reply of count-tokens.
type countResponse struct {
	InputTokens *int64 `json:"inputTokens"`
}
