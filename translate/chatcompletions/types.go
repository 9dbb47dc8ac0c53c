package chatcompletions

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The wire types model what Parley maps; every other member lands in the
// Unknown fallback of its object and travels in the canonical extension bag,
// so that a request or reply of this dialect passes through unchanged.

// Request is the body of POST /v1/chat/completions.
type Request struct {
	Model               string             `json:"model"`
	Messages            []message          `json:"messages"`
	Tools               []tool             `json:"tools,omitzero"`
	ToolChoice          *ToolChoice        `json:"tool_choice,omitzero"`
	ParallelToolCalls   *bool              `json:"parallel_tool_calls,omitzero"`
	ResponseFormat      *responseFormat    `json:"response_format,omitzero"`
	MaxTokens           *int64             `json:"max_tokens,omitzero"`
	MaxCompletionTokens *int64             `json:"max_completion_tokens,omitzero"`
	N                   *int64             `json:"n,omitzero"`
	Stop                *Stop              `json:"stop,omitzero"`
	Seed                *int64             `json:"seed,omitzero"`
	Logprobs            *bool              `json:"logprobs,omitzero"`
	TopLogprobs         *int64             `json:"top_logprobs,omitzero"`
	LogitBias           map[string]float64 `json:"logit_bias,omitzero"`
	PresencePenalty     *float64           `json:"presence_penalty,omitzero"`
	FrequencyPenalty    *float64           `json:"frequency_penalty,omitzero"`
	Temperature         *float64           `json:"temperature,omitzero"`
	TopP                *float64           `json:"top_p,omitzero"`
	ReasoningEffort     string             `json:"reasoning_effort,omitzero"`
	Verbosity           string             `json:"verbosity,omitzero"`
	Modalities          []string           `json:"modalities,omitzero"`
	Audio               *audioParam        `json:"audio,omitzero"`
	Stream              *bool              `json:"stream,omitzero"`
	StreamOptions       *streamOptions     `json:"stream_options,omitzero"`
	User                *string            `json:"user,omitzero"`
	PromptCacheKey      *string            `json:"prompt_cache_key,omitzero"`
	Metadata            map[string]string  `json:"metadata,omitzero"`
	ServiceTier         string             `json:"service_tier,omitzero"`
	Store               *bool              `json:"store,omitzero"`
	WebSearchOptions    *webSearchOptions  `json:"web_search_options,omitzero"`
	Unknown             jsonx.Unknown      `json:",embed" jsonschema:"-"`
}

// Stop is a string or an array of strings.
type Stop struct {
	String bool
	Values []string
}

// audioParam asks for spoken output.
type audioParam struct {
	Voice   string        `json:"voice"`
	Format  string        `json:"format"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// streamOptions are the options of a streamed request.
type streamOptions struct {
	IncludeUsage *bool         `json:"include_usage,omitzero"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// webSearchOptions turn on the search models' web search.
type webSearchOptions struct {
	SearchContextSize string             `json:"search_context_size,omitzero"`
	UserLocation      *webSearchLocation `json:"user_location,omitzero"`
	Unknown           jsonx.Unknown      `json:",embed" jsonschema:"-"`
}

// webSearchLocation is {"type": "approximate", "approximate": {...}}.
type webSearchLocation struct {
	Type        string        `json:"type"`
	Approximate *approximate  `json:"approximate,omitzero"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// approximate is an approximate user location.
type approximate struct {
	City     string        `json:"city,omitzero"`
	Country  string        `json:"country,omitzero"`
	Region   string        `json:"region,omitzero"`
	Timezone string        `json:"timezone,omitzero"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// message is one message of the conversation, in a request or a reply.
type message struct {
	Role       string     `json:"role" jsonschema:"enum=system,enum=developer,enum=user,enum=assistant,enum=tool,enum=function"`
	Content    *Content   `json:"content,omitzero"`
	Name       string     `json:"name,omitzero"`
	ToolCalls  []toolCall `json:"tool_calls,omitzero"`
	ToolCallID string     `json:"tool_call_id,omitzero"`
	Refusal    *string    `json:"refusal,omitzero" jsonschema:"nullable"`
	// Reasoning text, as many compatible servers send it.
	ReasoningContent *string       `json:"reasoning_content,omitzero" jsonschema:"nullable"`
	Annotations      []annotation  `json:"annotations,omitzero"`
	Unknown          jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// Content is null, a string, or an array of parts; the form is recorded so
// that the same form goes back out.
type Content struct {
	Null   bool
	String bool
	Text   string
	Parts  []ContentPart
}

// ContentPart is one part of a message's content.
type ContentPart struct {
	Type       string        `json:"type" jsonschema:"enum=text,enum=image_url,enum=input_audio,enum=file,enum=refusal"`
	Text       *string       `json:"text,omitzero"`
	ImageURL   *imageURL     `json:"image_url,omitzero"`
	InputAudio *inputAudio   `json:"input_audio,omitzero"`
	File       *file         `json:"file,omitzero"`
	Refusal    *string       `json:"refusal,omitzero"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// imageURL is an image by URL or data URL.
type imageURL struct {
	URL     string        `json:"url"`
	Detail  string        `json:"detail,omitzero" jsonschema:"enum=auto,enum=low,enum=high"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// inputAudio is inline audio.
type inputAudio struct {
	Data    string        `json:"data"`
	Format  string        `json:"format"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// file is a file inline (a data URL) or by id.
type file struct {
	FileData string        `json:"file_data,omitzero"`
	FileID   string        `json:"file_id,omitzero"`
	Filename string        `json:"filename,omitzero"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// toolCall is a tool call of an assistant message.
type toolCall struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Function function      `json:"function"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// function is the function a tool call calls.
type function struct {
	Name      string        `json:"name"`
	Arguments string        `json:"arguments"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// annotation is a citation on a reply's content.
type annotation struct {
	Type        string        `json:"type"`
	URLCitation *urlCitation  `json:"url_citation,omitzero"`
	Unknown     jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// urlCitation is a web page cited by a span of the content.
type urlCitation struct {
	StartIndex int64         `json:"start_index"`
	EndIndex   int64         `json:"end_index"`
	Title      string        `json:"title"`
	URL        string        `json:"url"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// tool is a tool the model may call.
type tool struct {
	Type     string        `json:"type"`
	Function *functionDef  `json:"function,omitzero"`
	Unknown  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// functionDef declares a function.
type functionDef struct {
	Name        string         `json:"name"`
	Description *string        `json:"description,omitzero"`
	Parameters  jsontext.Value `json:"parameters,omitzero"`
	Strict      *bool          `json:"strict,omitzero"`
	Unknown     jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// ToolChoice is a mode string or an object naming a function or an
// allow-list.
type ToolChoice struct {
	Mode         string        `json:"-"`
	Type         string        `json:"type,omitzero"`
	Function     *namedFunc    `json:"function,omitzero"`
	AllowedTools *allowedTools `json:"allowed_tools,omitzero"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// namedFunc names a function.
type namedFunc struct {
	Name    string        `json:"name"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// allowedTools restricts the model to some tools.
type allowedTools struct {
	Mode    string        `json:"mode"`
	Tools   []tool        `json:"tools"`
	Unknown jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// responseFormat is the shape the answer must take.
type responseFormat struct {
	Type       string        `json:"type" jsonschema:"enum=text,enum=json_object,enum=json_schema"`
	JSONSchema *jsonSchema   `json:"json_schema,omitzero"`
	Unknown    jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// jsonSchema is a named JSON schema for structured output.
type jsonSchema struct {
	Name        string         `json:"name"`
	Description *string        `json:"description,omitzero"`
	Schema      jsontext.Value `json:"schema,omitzero"`
	Strict      *bool          `json:"strict,omitzero"`
	Unknown     jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// Response is a whole reply.
type Response struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	Choices           []choice      `json:"choices"`
	Usage             *usage        `json:"usage,omitzero" jsonschema:"nullable"`
	ServiceTier       *string       `json:"service_tier,omitzero" jsonschema:"nullable"`
	SystemFingerprint *string       `json:"system_fingerprint,omitzero" jsonschema:"nullable"`
	Unknown           jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// choice is one candidate of a whole reply.
type choice struct {
	Index        int64         `json:"index"`
	Message      message       `json:"message"`
	FinishReason *string       `json:"finish_reason" jsonschema:"nullable"`
	Logprobs     *logprobs     `json:"logprobs" jsonschema:"nullable"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// logprobs are the log-probabilities of a choice.
type logprobs struct {
	Content []tokenLogprob `json:"content,omitzero" jsonschema:"nullable"`
	Refusal []tokenLogprob `json:"refusal,omitzero" jsonschema:"nullable"`
	Unknown jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// tokenLogprob is one token and its most likely alternatives.
type tokenLogprob struct {
	Token       string         `json:"token"`
	Logprob     float64        `json:"logprob"`
	Bytes       jsontext.Value `json:"bytes"`
	TopLogprobs []tokenLogprob `json:"top_logprobs,omitzero"`
}

// usage counts tokens. prompt_tokens includes cached tokens;
// completion_tokens includes reasoning tokens.
type usage struct {
	PromptTokens            int64          `json:"prompt_tokens"`
	CompletionTokens        int64          `json:"completion_tokens"`
	TotalTokens             int64          `json:"total_tokens"`
	PromptTokensDetails     *promptDetails `json:"prompt_tokens_details,omitzero"`
	CompletionTokensDetails *outputDetails `json:"completion_tokens_details,omitzero"`
	Unknown                 jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// promptDetails break down prompt tokens.
type promptDetails struct {
	CachedTokens *int64        `json:"cached_tokens,omitzero"`
	AudioTokens  *int64        `json:"audio_tokens,omitzero"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// outputDetails break down completion tokens.
type outputDetails struct {
	ReasoningTokens          *int64        `json:"reasoning_tokens,omitzero"`
	AudioTokens              *int64        `json:"audio_tokens,omitzero"`
	AcceptedPredictionTokens *int64        `json:"accepted_prediction_tokens,omitzero"`
	RejectedPredictionTokens *int64        `json:"rejected_prediction_tokens,omitzero"`
	Unknown                  jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// chunk is one event of a streamed reply.
type chunk struct {
	ID                string         `json:"id"`
	Object            string         `json:"object"`
	Created           int64          `json:"created"`
	Model             string         `json:"model"`
	Choices           []chunkChoice  `json:"choices"`
	Usage             *usage         `json:"usage,omitzero"`
	ServiceTier       *string        `json:"service_tier,omitzero"`
	SystemFingerprint *string        `json:"system_fingerprint,omitzero"`
	Error             jsontext.Value `json:"error,omitzero"`
	Unknown           jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// chunkChoice is one candidate's step of a streamed reply.
type chunkChoice struct {
	Index        int64         `json:"index"`
	Delta        delta         `json:"delta"`
	FinishReason *string       `json:"finish_reason" jsonschema:"nullable"`
	Logprobs     *logprobs     `json:"logprobs" jsonschema:"nullable"`
	Unknown      jsonx.Unknown `json:",embed" jsonschema:"-"`
}

// delta is what a chunk adds to a candidate.
type delta struct {
	Role             string          `json:"role,omitzero"`
	Content          *string         `json:"content,omitzero"`
	Refusal          *string         `json:"refusal,omitzero"`
	ReasoningContent *string         `json:"reasoning_content,omitzero"`
	Reasoning        *string         `json:"reasoning,omitzero"`
	ToolCalls        []deltaToolCall `json:"tool_calls,omitzero"`
	Annotations      []annotation    `json:"annotations,omitzero"`
	Unknown          jsonx.Unknown   `json:",embed" jsonschema:"-"`
}

// deltaToolCall is a step of one tool call, by index: the id and name on
// its first step, argument fragments after.
type deltaToolCall struct {
	Index    int64          `json:"index"`
	ID       string         `json:"id,omitzero"`
	Type     string         `json:"type,omitzero"`
	Function *deltaFunction `json:"function,omitzero"`
	Unknown  jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// deltaFunction is a step of a tool call's function.
type deltaFunction struct {
	Name      string        `json:"name,omitzero"`
	Arguments *string       `json:"arguments,omitzero"`
	Unknown   jsonx.Unknown `json:",embed" jsonschema:"-"`
}
