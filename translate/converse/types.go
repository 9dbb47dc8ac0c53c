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
	OutputConfig                 *OutputConfig     `json:"outputConfig,omitzero"`
	RequestMetadata              map[string]string `json:"requestMetadata,omitzero"`
	ServiceTier                  *ServiceTier      `json:"serviceTier,omitzero"`
}

// Message is one turn: role user or assistant.
type Message struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// SystemBlock is one block of the system prompt: text or a cache point.
type SystemBlock struct {
	Text       *string     `json:"text,omitzero"`
	CachePoint *CachePoint `json:"cachePoint,omitzero"`
}

// ContentBlock is one block of a message (a union).
type ContentBlock struct {
	Text             *string           `json:"text,omitzero"`
	Image            *ImageBlock       `json:"image,omitzero"`
	Document         *DocumentBlock    `json:"document,omitzero"`
	Video            *VideoBlock       `json:"video,omitzero"`
	ToolUse          *ToolUseBlock     `json:"toolUse,omitzero"`
	ToolResult       *ToolResultBlock  `json:"toolResult,omitzero"`
	CachePoint       *CachePoint       `json:"cachePoint,omitzero"`
	ReasoningContent *ReasoningContent `json:"reasoningContent,omitzero"`
	CitationsContent *CitationsContent `json:"citationsContent,omitzero"`
}

// CachePoint marks the end of a cacheable prefix.
type CachePoint struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitzero"`
}

// ImageBlock is an image: png, jpeg, gif or webp.
type ImageBlock struct {
	Format string       `json:"format"`
	Source *MediaSource `json:"source"`
}

// DocumentBlock is a document: pdf, csv, doc, docx, xls, xlsx, html, txt
// or md. Its name is required and restricted (see documentName).
type DocumentBlock struct {
	Format  string       `json:"format,omitzero"`
	Name    string       `json:"name"`
	Source  *MediaSource `json:"source"`
	Context string       `json:"context,omitzero"`
}

// VideoBlock is a video.
type VideoBlock struct {
	Format string       `json:"format"`
	Source *MediaSource `json:"source"`
}

// MediaSource is where media comes from: inline bytes (base64 on the
// wire) or an S3 object.
type MediaSource struct {
	Bytes      []byte      `json:"bytes,omitzero"`
	S3Location *S3Location `json:"s3Location,omitzero"`
}

// S3Location is an object in S3.
type S3Location struct {
	URI         string `json:"uri"`
	BucketOwner string `json:"bucketOwner,omitzero"`
}

// ToolUseBlock is a call the model made.
type ToolUseBlock struct {
	ToolUseID string         `json:"toolUseId"`
	Name      string         `json:"name"`
	Input     jsontext.Value `json:"input"`
}

// ToolResultBlock is the result of a call.
type ToolResultBlock struct {
	ToolUseID string              `json:"toolUseId"`
	Content   []ToolResultContent `json:"content"`
	Status    string              `json:"status,omitzero"`
}

// ToolResultContent is one block of a tool result (a union).
type ToolResultContent struct {
	Text     *string        `json:"text,omitzero"`
	JSON     jsontext.Value `json:"json,omitzero"`
	Image    *ImageBlock    `json:"image,omitzero"`
	Document *DocumentBlock `json:"document,omitzero"`
	Video    *VideoBlock    `json:"video,omitzero"`
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

// CitationsContent is generated text with the citations that back it.
type CitationsContent struct {
	Content   []CitationText `json:"content,omitzero"`
	Citations []Citation     `json:"citations,omitzero"`
}

// CitationText is a piece of generated text.
type CitationText struct {
	Text string `json:"text"`
}

// Citation is one source of a citations block or delta.
type Citation struct {
	Title         string            `json:"title,omitzero"`
	Source        string            `json:"source,omitzero"`
	SourceContent []CitationText    `json:"sourceContent,omitzero"`
	Location      *CitationLocation `json:"location,omitzero"`
}

// CitationLocation is where a citation points (a union).
type CitationLocation struct {
	Web           *WebLocation   `json:"web,omitzero"`
	DocumentChar  *DocumentRange `json:"documentChar,omitzero"`
	DocumentPage  *DocumentRange `json:"documentPage,omitzero"`
	DocumentChunk *DocumentRange `json:"documentChunk,omitzero"`
}

// WebLocation is a cited web page.
type WebLocation struct {
	URL    string `json:"url,omitzero"`
	Domain string `json:"domain,omitzero"`
}

// DocumentRange is a cited span of a document given in the request.
type DocumentRange struct {
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
	Tools      []Tool      `json:"tools"`
	ToolChoice *ToolChoice `json:"toolChoice,omitzero"`
}

// Tool is a tool specification or a cache point (a union).
type Tool struct {
	ToolSpec   *ToolSpec   `json:"toolSpec,omitzero"`
	CachePoint *CachePoint `json:"cachePoint,omitzero"`
}

// ToolSpec is a function the client runs.
type ToolSpec struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitzero"`
	InputSchema InputSchema `json:"inputSchema"`
	Strict      *bool       `json:"strict,omitzero"`
}

// InputSchema holds a JSON Schema as a JSON value.
type InputSchema struct {
	JSON jsontext.Value `json:"json"`
}

// ToolChoice is auto, any or one tool (a union of empty objects and a name).
type ToolChoice struct {
	Auto *struct{}     `json:"auto,omitzero"`
	Any  *struct{}     `json:"any,omitzero"`
	Tool *SpecificTool `json:"tool,omitzero"`
}

// SpecificTool names the tool the model must call.
type SpecificTool struct {
	Name string `json:"name"`
}

// OutputConfig holds structured output.
type OutputConfig struct {
	TextFormat *OutputFormat `json:"textFormat,omitzero"`
}

// OutputFormat is a structured output format: type json_schema.
type OutputFormat struct {
	Type      string          `json:"type"`
	Structure OutputStructure `json:"structure"`
}

// OutputStructure holds the JSON schema of the answer.
type OutputStructure struct {
	JSONSchema *JSONSchemaDefinition `json:"jsonSchema,omitzero"`
}

// JSONSchemaDefinition is a JSON schema as JSON text, with a name.
type JSONSchemaDefinition struct {
	Schema      string `json:"schema"`
	Name        string `json:"name,omitzero"`
	Description string `json:"description,omitzero"`
}

// ServiceTier is the processing tier: priority, default, flex or reserved.
type ServiceTier struct {
	Type string `json:"type"`
}

// Response is the reply of /converse.
type Response struct {
	Output                        *Output        `json:"output"`
	StopReason                    string         `json:"stopReason"`
	Usage                         *Usage         `json:"usage,omitzero"`
	Metrics                       *Metrics       `json:"metrics,omitzero"`
	AdditionalModelResponseFields jsontext.Value `json:"additionalModelResponseFields,omitzero"`
	ServiceTier                   *ServiceTier   `json:"serviceTier,omitzero"`
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
	CacheDetails          []CacheDetail `json:"cacheDetails,omitzero"`
}

// CacheDetail counts the cache writes of one lifetime.
type CacheDetail struct {
	InputTokens int64  `json:"inputTokens"`
	TTL         string `json:"ttl"`
}

// Metrics holds the latency of the call.
type Metrics struct {
	LatencyMs *int64 `json:"latencyMs,omitzero"`
}

// The events of /converse-stream, by :event-type.

// MessageStart opens the message.
type MessageStart struct {
	Role string `json:"role"`
}

// BlockStart opens a block that has something to say before its deltas:
// a tool call's id and name.
type BlockStart struct {
	ContentBlockIndex *int64 `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse,omitzero"`
	} `json:"start"`
}

// BlockDelta extends a block; a text or reasoning block begins with its
// first delta.
type BlockDelta struct {
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
		Citation *Citation `json:"citation,omitzero"`
	} `json:"delta"`
}

// BlockStop closes a block.
type BlockStop struct {
	ContentBlockIndex *int64 `json:"contentBlockIndex"`
}

// MessageStop ends the message with its stop reason.
type MessageStop struct {
	StopReason                    string         `json:"stopReason"`
	AdditionalModelResponseFields jsontext.Value `json:"additionalModelResponseFields,omitzero"`
}

// Metadata closes the stream with usage and metrics.
type Metadata struct {
	Usage       *Usage       `json:"usage,omitzero"`
	Metrics     *Metrics     `json:"metrics,omitzero"`
	ServiceTier *ServiceTier `json:"serviceTier,omitzero"`
}

// CountRequest is the body of POST /model/{modelId}/count-tokens for a
// Converse request.
type CountRequest struct {
	Input CountInput `json:"input"`
}

// CountInput is a union; Parley counts Converse requests.
type CountInput struct {
	Converse *CountConverse `json:"converse"`
}

// CountConverse is a Converse request's input, as count-tokens takes it.
type CountConverse struct {
	Messages                     []Message      `json:"messages,omitzero"`
	System                       []SystemBlock  `json:"system,omitzero"`
	ToolConfig                   *ToolConfig    `json:"toolConfig,omitzero"`
	AdditionalModelRequestFields jsontext.Value `json:"additionalModelRequestFields,omitzero"`
}

// CountResponse is the reply of count-tokens.
type CountResponse struct {
	InputTokens *int64 `json:"inputTokens"`
}
