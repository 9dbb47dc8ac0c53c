package responses

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The wire types model what Parley maps; every other member lands in the
// Unknown fallback of its object and travels in the canonical extension bag,
// so that a request or response of this dialect passes through unchanged.

// Request is the body of POST /v1/responses (and, without stream, of
// POST /v1/responses/input_tokens).
type Request struct {
	Model              string            `json:"model,omitzero"`
	Input              *Input            `json:"input,omitzero"`
	Instructions       *string           `json:"instructions,omitzero" jsonschema:"nullable"`
	Tools              []tool            `json:"tools,omitzero"`
	ToolChoice         *ToolChoice       `json:"tool_choice,omitzero"`
	Text               *textConfig       `json:"text,omitzero"`
	Reasoning          *reasoningConfig  `json:"reasoning,omitzero" jsonschema:"nullable"`
	Include            []string          `json:"include,omitzero" jsonschema:"nullable"`
	MaxOutputTokens    *int64            `json:"max_output_tokens,omitzero" jsonschema:"nullable"`
	Metadata           map[string]string `json:"metadata,omitzero"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls,omitzero" jsonschema:"nullable"`
	PreviousResponseID *string           `json:"previous_response_id,omitzero" jsonschema:"nullable"`
	ServiceTier        *string           `json:"service_tier,omitzero" jsonschema:"nullable"`
	Store              *bool             `json:"store,omitzero" jsonschema:"nullable"`
	Stream             *bool             `json:"stream,omitzero" jsonschema:"nullable"`
	Temperature        *float64          `json:"temperature,omitzero" jsonschema:"nullable"`
	TopP               *float64          `json:"top_p,omitzero" jsonschema:"nullable"`
	TopLogprobs        *int64            `json:"top_logprobs,omitzero" jsonschema:"nullable"`
	Truncation         *string           `json:"truncation,omitzero" jsonschema:"nullable"`
	User               *string           `json:"user,omitzero"`
	PromptCacheKey     *string           `json:"prompt_cache_key,omitzero" jsonschema:"nullable"`
	Unknown            jsonx.Unknown     `json:",embed" jsonschema:"-"`
}

// Input is a string or an array of items; String records which.
type Input struct {
	String bool
	Text   string
	Items  []Item
}

// Item is an input or output item, discriminated by Type (a message may
// omit it). Only the members of its type are set; members whose shape
// differs between item types stay raw.
type Item struct {
	Type   string `json:"type,omitzero"`
	ID     string `json:"id,omitzero"`
	Status string `json:"status,omitzero"`

	// message
	Role    string   `json:"role,omitzero"`
	Content *Content `json:"content,omitzero"`

	// function_call, function_call_output, computer_call(_output)
	CallID    string         `json:"call_id,omitzero"`
	Name      string         `json:"name,omitzero"`
	Arguments *string        `json:"arguments,omitzero"`
	Output    jsontext.Value `json:"output,omitzero"`
	// Namespace is the group of a called function (function_call,
	// custom_tool_call), or "".
	Namespace string `json:"namespace,omitzero"`

	// reasoning
	Summary          []summaryPart `json:"summary,omitzero"`
	EncryptedContent *string       `json:"encrypted_content,omitzero" jsonschema:"nullable"`

	// computer_call, web_search_call
	Action jsontext.Value `json:"action,omitzero"`

	// file_search_call
	Queries []string       `json:"queries,omitzero"`
	Results jsontext.Value `json:"results,omitzero"`

	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// Content is a string or an array of content parts.
type Content struct {
	String bool
	Text   string
	Parts  []ContentPart
}

// ContentPart is one part of a message item.
type ContentPart struct {
	Type string `json:"type" jsonschema:"enum=input_text,enum=input_image,enum=input_file,enum=input_audio,enum=output_text,enum=refusal,enum=reasoning_text"`

	// input_text, output_text, reasoning_text
	Text        *string      `json:"text,omitzero"`
	Annotations []annotation `json:"annotations,omitzero"`

	// input_image, input_file
	ImageURL *string `json:"image_url,omitzero" jsonschema:"nullable"`
	FileID   *string `json:"file_id,omitzero" jsonschema:"nullable"`
	Detail   string  `json:"detail,omitzero"`
	FileData *string `json:"file_data,omitzero"`
	FileURL  *string `json:"file_url,omitzero"`
	Filename *string `json:"filename,omitzero"`

	// refusal
	Refusal *string `json:"refusal,omitzero"`

	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// annotation is a citation on output text.
type annotation struct {
	Type       string        `json:"type"`
	FileID     string        `json:"file_id,omitzero"`
	Filename   string        `json:"filename,omitzero"`
	Index      *int64        `json:"index,omitzero"`
	URL        string        `json:"url,omitzero"`
	Title      string        `json:"title,omitzero"`
	StartIndex *int64        `json:"start_index,omitzero"`
	EndIndex   *int64        `json:"end_index,omitzero"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// summaryPart is one summary of a reasoning item.
type summaryPart struct {
	Type    string        `json:"type"`
	Text    string        `json:"text"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// tool is a function or a built-in tool, discriminated by Type.
type tool struct {
	Type string `json:"type"`

	// function
	Name        string         `json:"name,omitzero"`
	Description *string        `json:"description,omitzero" jsonschema:"nullable"`
	Parameters  jsontext.Value `json:"parameters,omitzero"`
	Strict      *bool          `json:"strict,omitzero" jsonschema:"nullable"`

	// file_search
	VectorStoreIDs []string        `json:"vector_store_ids,omitzero"`
	Filters        jsontext.Value  `json:"filters,omitzero"`
	MaxNumResults  *int64          `json:"max_num_results,omitzero"`
	RankingOptions *rankingOptions `json:"ranking_options,omitzero"`

	// web_search_preview
	SearchContextSize string        `json:"search_context_size,omitzero"`
	UserLocation      *userLocation `json:"user_location,omitzero" jsonschema:"nullable"`
	Domains           []string      `json:"domains,omitzero"`

	// computer_use_preview
	DisplayWidth  *int64 `json:"display_width,omitzero"`
	DisplayHeight *int64 `json:"display_height,omitzero"`
	Environment   string `json:"environment,omitzero"`

	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// rankingOptions tune file search ranking.
type rankingOptions struct {
	Ranker         string        `json:"ranker,omitzero"`
	ScoreThreshold *float64      `json:"score_threshold,omitzero"`
	Unknown        jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// userLocation is an approximate location for web search.
type userLocation struct {
	Type     string        `json:"type"`
	City     *string       `json:"city,omitzero" jsonschema:"nullable"`
	Region   *string       `json:"region,omitzero" jsonschema:"nullable"`
	Country  *string       `json:"country,omitzero" jsonschema:"nullable"`
	Timezone *string       `json:"timezone,omitzero" jsonschema:"nullable"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// ToolChoice is a mode string or an object naming a tool.
type ToolChoice struct {
	Mode    string        `json:"-"`
	Type    string        `json:"type,omitzero"`
	Name    string        `json:"name,omitzero"`
	Tools   []tool        `json:"tools,omitzero"`
	AMode   string        `json:"mode,omitzero"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// textConfig is the text member: the answer's format.
type textConfig struct {
	Format    *format       `json:"format,omitzero"`
	Verbosity *string       `json:"verbosity,omitzero" jsonschema:"nullable"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// format is text.format.
type format struct {
	Type        string         `json:"type" jsonschema:"enum=text,enum=json_schema,enum=json_object"`
	Name        string         `json:"name,omitzero"`
	Description *string        `json:"description,omitzero"`
	Schema      jsontext.Value `json:"schema,omitzero"`
	Strict      *bool          `json:"strict,omitzero" jsonschema:"nullable"`
	Unknown     jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// reasoningConfig is the reasoning member.
type reasoningConfig struct {
	Effort          *string       `json:"effort,omitzero" jsonschema:"nullable"`
	Summary         *string       `json:"summary,omitzero" jsonschema:"nullable"`
	GenerateSummary *string       `json:"generate_summary,omitzero" jsonschema:"nullable"`
	Unknown         jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// Response is the response object: a whole reply, and the snapshot that
// stream events carry. The members that echo the request stay raw: they
// are built from the canonical request toward a client, and kept as they
// came from an upstream of this dialect.
type Response struct {
	ID                 string         `json:"id"`
	Object             string         `json:"object"`
	CreatedAt          int64          `json:"created_at"`
	Status             string         `json:"status,omitzero"`
	Error              *responseError `json:"error" jsonschema:"nullable"`
	IncompleteDetails  *incomplete    `json:"incomplete_details" jsonschema:"nullable"`
	Instructions       jsontext.Value `json:"instructions,omitzero"`
	MaxOutputTokens    jsontext.Value `json:"max_output_tokens,omitzero"`
	Model              string         `json:"model"`
	Output             []Item         `json:"output"`
	ParallelToolCalls  jsontext.Value `json:"parallel_tool_calls,omitzero"`
	PreviousResponseID *string        `json:"previous_response_id" jsonschema:"nullable"`
	Reasoning          jsontext.Value `json:"reasoning,omitzero"`
	Store              jsontext.Value `json:"store,omitzero"`
	Temperature        jsontext.Value `json:"temperature,omitzero"`
	Text               jsontext.Value `json:"text,omitzero"`
	ToolChoice         jsontext.Value `json:"tool_choice,omitzero"`
	Tools              jsontext.Value `json:"tools,omitzero"`
	TopP               jsontext.Value `json:"top_p,omitzero"`
	Truncation         jsontext.Value `json:"truncation,omitzero"`
	Usage              *usage         `json:"usage" jsonschema:"nullable"`
	User               jsontext.Value `json:"user,omitzero"`
	Metadata           jsontext.Value `json:"metadata,omitzero"`
	ServiceTier        *string        `json:"service_tier,omitzero" jsonschema:"nullable"`
	Unknown            jsonx.Unknown  `json:",embed" jsonschema:"-"`
	// echoWritten is set when the members that echo the request are
	// written as jsonx.AppendRaw writes them (requestEcho.written), for
	// appendResponse to copy as they are.
	echoWritten bool
}

// responseError is the error of a failed response.
type responseError struct {
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// incomplete says why a response is incomplete.
type incomplete struct {
	Reason  string        `json:"reason"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// usage counts tokens. input_tokens includes cached tokens; output_tokens
// includes reasoning tokens.
type usage struct {
	InputTokens         int64          `json:"input_tokens"`
	InputTokensDetails  *inputDetails  `json:"input_tokens_details,omitzero"`
	OutputTokens        int64          `json:"output_tokens"`
	OutputTokensDetails *outputDetails `json:"output_tokens_details,omitzero"`
	TotalTokens         int64          `json:"total_tokens"`
	Unknown             jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// inputDetails break down input tokens.
type inputDetails struct {
	CachedTokens int64         `json:"cached_tokens"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// outputDetails break down output tokens.
type outputDetails struct {
	ReasoningTokens int64         `json:"reasoning_tokens"`
	Unknown         jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// event is one stream event; only the members of its type are set.
type event struct {
	Type           string         `json:"type"`
	SequenceNumber *int64         `json:"sequence_number,omitzero"`
	Response       *Response      `json:"response,omitzero"`
	OutputIndex    *int64         `json:"output_index,omitzero"`
	Item           *Item          `json:"item,omitzero"`
	ItemID         string         `json:"item_id,omitzero"`
	ContentIndex   *int64         `json:"content_index,omitzero"`
	SummaryIndex   *int64         `json:"summary_index,omitzero"`
	Part           *ContentPart   `json:"part,omitzero"`
	Delta          *string        `json:"delta,omitzero"`
	Text           *string        `json:"text,omitzero"`
	Arguments      *string        `json:"arguments,omitzero"`
	Input          *string        `json:"input,omitzero"`
	Refusal        *string        `json:"refusal,omitzero"`
	Annotation     *annotation    `json:"annotation,omitzero"`
	AnnotationIdx  *int64         `json:"annotation_index,omitzero"`
	Logprobs       jsontext.Value `json:"logprobs,omitzero"`
	Obfuscation    string         `json:"obfuscation,omitzero"`

	// error events
	Code    jsontext.Value `json:"code,omitzero"`
	Message string         `json:"message,omitzero"`
	Param   *string        `json:"param,omitzero"`

	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// inputTokens is the reply of POST /v1/responses/input_tokens.
type inputTokens struct {
	Object      string `json:"object"`
	InputTokens int64  `json:"input_tokens"`
}
