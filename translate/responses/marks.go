package responses

import "github.com/parleyhq/parley/translate/internal/jsonx"

// The marks this dialect keeps about its own spelling (see jsonx.Mark),
// by the canonical message that holds them: with the unknown members
// kept as they came, everything a round trip into this dialect needs
// beyond the canonical model. Only this package's encoders read them, and
// only toward this dialect.
var (
	// On the request.
	markInputString     = jsonx.NewMark(thisDialect, "@input_string")     // input was a string
	markGenerateSummary = jsonx.NewMark(thisDialect, "@generate_summary") // the summary was asked for with the deprecated name
	markAllowedTools    = jsonx.NewMark(thisDialect, "@allowed_tools")    // tool_choice was an allowed_tools object
	markToolChoiceType  = jsonx.NewMark(thisDialect, "@tool_choice_type") // the hosted tool type tool_choice named
	// markRewritten: Parley changed the request on decoding (a compaction
	// expanded), so it cannot be forwarded as it came.
	markRewritten = jsonx.NewMark(thisDialect, "@rewritten")
	// markCompact: the input ends in a compaction_trigger item. It asks for
	// the compaction of everything before, answered as a response whose
	// one output item is the compaction.
	markCompact = jsonx.NewMark(thisDialect, "@compact")

	// On a message (an input item).
	markString  = jsonx.NewMark(thisDialect, "@string")  // the content was a string
	markTyped   = jsonx.NewMark(thisDialect, "@typed")   // the message item named its type
	markID      = jsonx.NewMark(thisDialect, "@id")      // the id of an item that is not an output item
	markStatus  = jsonx.NewMark(thisDialect, "@status")  // the status of such an item
	markSummary = jsonx.NewMark(thisDialect, "@summary") // a reasoning item's summary parts, raw

	// On a part.
	markItem  = jsonx.NewMark(thisDialect, "@item")           // an item with no canonical home, raw
	markPart  = jsonx.NewMark(thisDialect, "@part")           // a content part with no canonical home, raw
	markType  = jsonx.NewMark(thisDialect, "@type")           // an output_text part that named its type
	markNoAnn = jsonx.NewMark(thisDialect, "@no_annotations") // an output_text part without an annotations member

	// On a tool.
	markTool      = jsonx.NewMark(thisDialect, "@tool")      // a tool with no canonical home, raw
	markNamespace = jsonx.NewMark(thisDialect, "@namespace") // the namespace tool a first member came in, raw
	markInInput   = jsonx.NewMark(thisDialect, "@in_input")  // the tool came in an additional_tools input item
)
