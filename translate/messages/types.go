package messages

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The wire types model what Parley maps; every other member lands in the
// Unknown fallback of its object and travels in the canonical extension bag,
// so that a request or response of this dialect passes through unchanged.

// Request is the body of POST /v1/messages (and, without max_tokens and
// stream, of /v1/messages/count_tokens).
type Request struct {
	Model         string        `json:"model"`
	MaxTokens     *int64        `json:"max_tokens,omitzero"`
	Messages      []message     `json:"messages"`
	System        *Content      `json:"system,omitzero"`
	Metadata      *metadata     `json:"metadata,omitzero"`
	StopSequences []string      `json:"stop_sequences,omitzero"`
	Stream        *bool         `json:"stream,omitzero"`
	Temperature   *float64      `json:"temperature,omitzero"`
	TopK          *int64        `json:"top_k,omitzero"`
	TopP          *float64      `json:"top_p,omitzero"`
	Thinking      *thinking     `json:"thinking,omitzero"`
	ToolChoice    *toolChoice   `json:"tool_choice,omitzero"`
	Tools         []tool        `json:"tools,omitzero"`
	ServiceTier   string        `json:"service_tier,omitzero"`
	OutputConfig  *outputConfig `json:"output_config,omitzero"`
	Unknown       jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// metadata is the request's metadata object.
type metadata struct {
	UserID  *string       `json:"user_id,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// message is one turn.
type message struct {
	Role    string        `json:"role" jsonschema:"enum=user,enum=assistant,enum=system"`
	Content Content       `json:"content"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// Content is a string or an array of blocks; String records which, so
// that the same form goes back out.
type Content struct {
	String bool
	Text   string
	Blocks []Block
}

// Block is any content block, discriminated by Type. Only the members of
// its type are set. Members whose shape differs between block types
// (source, citations, content) stay raw until the type is known.
type Block struct {
	Type string `json:"type"`

	// text
	Text      *string        `json:"text,omitzero"`
	Citations jsontext.Value `json:"citations,omitzero"`

	// image, document, search_result
	Source  jsontext.Value `json:"source,omitzero"`
	Title   *string        `json:"title,omitzero"`
	Context *string        `json:"context,omitzero"`

	// tool_use, server_tool_use
	ID    string         `json:"id,omitzero"`
	Name  string         `json:"name,omitzero"`
	Input jsontext.Value `json:"input,omitzero"`

	// tool_result and the results of server tools
	ToolUseID string         `json:"tool_use_id,omitzero"`
	Content   jsontext.Value `json:"content,omitzero"`
	IsError   *bool          `json:"is_error,omitzero"`

	// thinking
	Thinking  *string `json:"thinking,omitzero"`
	Signature *string `json:"signature,omitzero"`

	// redacted_thinking
	Data string `json:"data,omitzero"`

	CacheControl *cacheControl `json:"cache_control,omitzero"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// source is where an image or document comes from.
type source struct {
	Type      string        `json:"type"`
	MediaType string        `json:"media_type,omitzero"`
	Data      string        `json:"data,omitzero"`
	URL       string        `json:"url,omitzero"`
	FileID    string        `json:"file_id,omitzero"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// citation is a citation on a text block.
type citation struct {
	Type           string        `json:"type"`
	CitedText      string        `json:"cited_text,omitzero"`
	DocumentIndex  *int64        `json:"document_index,omitzero"`
	DocumentTitle  *string       `json:"document_title,omitzero"`
	StartCharIndex *int64        `json:"start_char_index,omitzero"`
	EndCharIndex   *int64        `json:"end_char_index,omitzero"`
	StartPageNum   *int64        `json:"start_page_number,omitzero"`
	EndPageNum     *int64        `json:"end_page_number,omitzero"`
	StartBlock     *int64        `json:"start_block_index,omitzero"`
	EndBlock       *int64        `json:"end_block_index,omitzero"`
	SearchIndex    *int64        `json:"search_result_index,omitzero"`
	Source         *string       `json:"source,omitzero"`
	Title          *string       `json:"title,omitzero"`
	URL            *string       `json:"url,omitzero"`
	EncryptedIndex *string       `json:"encrypted_index,omitzero"`
	FileID         *string       `json:"file_id,omitzero"`
	Unknown        jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// cacheControl is a prompt-caching breakpoint.
type cacheControl struct {
	Type    string        `json:"type"`
	TTL     string        `json:"ttl,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// thinking configures extended thinking.
type thinking struct {
	Type         string        `json:"type" jsonschema:"enum=enabled,enum=disabled,enum=adaptive"`
	BudgetTokens *int64        `json:"budget_tokens,omitzero"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// toolChoice constrains tool use.
type toolChoice struct {
	Type                   string        `json:"type" jsonschema:"enum=auto,enum=any,enum=tool,enum=none"`
	Name                   string        `json:"name,omitzero"`
	DisableParallelToolUse *bool         `json:"disable_parallel_tool_use,omitzero"`
	Unknown                jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// tool is a custom tool (no type, or "custom") or a typed built-in tool.
type tool struct {
	Type         string         `json:"type,omitzero"`
	Name         string         `json:"name"`
	Description  *string        `json:"description,omitzero"`
	InputSchema  jsontext.Value `json:"input_schema,omitzero"`
	Strict       *bool          `json:"strict,omitzero"`
	CacheControl *cacheControl  `json:"cache_control,omitzero"`

	// computer
	DisplayWidthPx  *int64 `json:"display_width_px,omitzero"`
	DisplayHeightPx *int64 `json:"display_height_px,omitzero"`
	DisplayNumber   *int64 `json:"display_number,omitzero"`

	// text editor
	MaxCharacters *int64 `json:"max_characters,omitzero"`

	// web search
	MaxUses        *int64        `json:"max_uses,omitzero"`
	AllowedDomains []string      `json:"allowed_domains,omitzero"`
	BlockedDomains []string      `json:"blocked_domains,omitzero"`
	UserLocation   *userLocation `json:"user_location,omitzero"`

	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// userLocation localises web search.
type userLocation struct {
	Type     string        `json:"type"`
	City     string        `json:"city,omitzero"`
	Region   string        `json:"region,omitzero"`
	Country  string        `json:"country,omitzero"`
	Timezone string        `json:"timezone,omitzero"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// outputConfig holds the effort level and structured-output format.
type outputConfig struct {
	Effort  string        `json:"effort,omitzero"`
	Format  *outputFormat `json:"format,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// outputFormat is a structured-output format.
type outputFormat struct {
	Type    string         `json:"type"`
	Schema  jsontext.Value `json:"schema,omitzero"`
	Unknown jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// Response is a whole reply, and the message of message_start.
type Response struct {
	ID           string        `json:"id"`
	Type         string        `json:"type"`
	Role         string        `json:"role"`
	Model        string        `json:"model"`
	Content      []Block       `json:"content"`
	StopReason   *string       `json:"stop_reason" jsonschema:"nullable"`
	StopSequence *string       `json:"stop_sequence" jsonschema:"nullable"`
	Usage        *usage        `json:"usage,omitzero"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// usage counts tokens. In this dialect input_tokens excludes the cached
// tokens, which are counted apart.
type usage struct {
	InputTokens              *int64               `json:"input_tokens,omitzero"`
	OutputTokens             *int64               `json:"output_tokens,omitzero"`
	CacheCreationInputTokens *int64               `json:"cache_creation_input_tokens,omitzero"`
	CacheReadInputTokens     *int64               `json:"cache_read_input_tokens,omitzero"`
	CacheCreation            *cacheCreation       `json:"cache_creation,omitzero"`
	ServerToolUse            *serverToolUse       `json:"server_tool_use,omitzero"`
	OutputTokensDetails      *outputTokensDetails `json:"output_tokens_details,omitzero"`
	ServiceTier              string               `json:"service_tier,omitzero"`
	Unknown                  jsonx.Unknown        `json:",embed" jsonschema:"-"`
}

// cacheCreation splits cache writes by lifetime.
type cacheCreation struct {
	Ephemeral5m *int64        `json:"ephemeral_5m_input_tokens,omitzero"`
	Ephemeral1h *int64        `json:"ephemeral_1h_input_tokens,omitzero"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// serverToolUse counts server tool calls.
type serverToolUse struct {
	WebSearchRequests *int64        `json:"web_search_requests,omitzero"`
	Unknown           jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// outputTokensDetails splits the output tokens.
type outputTokensDetails struct {
	ThinkingTokens *int64        `json:"thinking_tokens,omitzero"`
	Unknown        jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// event is any stream event, discriminated by Type.
type event struct {
	Type         string        `json:"type"`
	Message      *Response     `json:"message,omitzero"`
	Index        *int64        `json:"index,omitzero"`
	ContentBlock *Block        `json:"content_block,omitzero"`
	Delta        *delta        `json:"delta,omitzero"`
	Usage        *usage        `json:"usage,omitzero"`
	Error        *errorDetail  `json:"error,omitzero"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// delta is the delta of a content_block_delta or message_delta event.
type delta struct {
	Type         string        `json:"type,omitzero"`
	Text         *string       `json:"text,omitzero"`
	PartialJSON  *string       `json:"partial_json,omitzero"`
	Thinking     *string       `json:"thinking,omitzero"`
	Signature    *string       `json:"signature,omitzero"`
	Citation     *citation     `json:"citation,omitzero"`
	StopReason   *string       `json:"stop_reason,omitzero"`
	StopSequence *string       `json:"stop_sequence,omitzero"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// errorBody is the body of an error reply.
type errorBody struct {
	Type      string        `json:"type"`
	Error     errorDetail   `json:"error"`
	RequestID string        `json:"request_id,omitzero"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// errorDetail is the error object of an error reply or stream event.
type errorDetail struct {
	Type    string        `json:"type"`
	Message string        `json:"message"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// countTokensResponse is the reply of /v1/messages/count_tokens.
type countTokensResponse struct {
	InputTokens int64 `json:"input_tokens"`
}
