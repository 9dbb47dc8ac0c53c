package chatcompletions

import "github.com/parleyhq/parley/translate/internal/jsonx"

// The marks this dialect keeps about its own spelling (see jsonx.Mark),
// by the canonical message that holds them: with the unknown members
// kept as they came, everything a round trip into this dialect needs
// beyond the canonical model. Only this package's encoders read them, and
// only toward this dialect.
var (
	// On the request.
	markMaxTokens     = jsonx.NewMark(thisDialect, "@max_tokens")    // the limit was spelled max_tokens
	markStopString    = jsonx.NewMark(thisDialect, "@stop_string")   // stop was a string
	markUsageRequired = jsonx.NewMark(thisDialect, "@include_usage") // stream_options.include_usage as sent
	markAllowedMode   = jsonx.NewMark(thisDialect, "@allowed_tools") // tool_choice was an allowed_tools object

	// On a message.
	markString = jsonx.NewMark(thisDialect, "@string") // the content was a string
	markNull   = jsonx.NewMark(thisDialect, "@null")   // the content was null

	// On a part.
	markRefusalPart = jsonx.NewMark(thisDialect, "@refusal_part") // a refusal given as a content part
	markCallType    = jsonx.NewMark(thisDialect, "@type")         // a tool call type other than function

	// On a tool.
	markTool      = jsonx.NewMark(thisDialect, "@tool")       // a tool with no canonical home, raw
	markWebSearch = jsonx.NewMark(thisDialect, "@web_search") // web search came as web_search_options

	// On a candidate of a reply.
	markNoAnnotations = jsonx.NewMark(thisDialect, "@no_annotations") // the reply message had no annotations member
)
