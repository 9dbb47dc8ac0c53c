package messages

import "github.com/parleyhq/parley/translate/internal/jsonx"

// The marks this dialect keeps about its own spelling (see jsonx.Mark),
// by the canonical message that holds them: with the unknown members
// kept as they came, everything a round trip into this dialect needs
// beyond the canonical model. Only this package's encoders read them, and
// only toward this dialect.
var (
	// On the request.
	markVersion      = jsonx.NewMark(thisDialect, "@header:version") // the anthropic-version header
	markBeta         = jsonx.NewMark(thisDialect, "@header:beta")    // the anthropic-beta features, a JSON array
	markStringSystem = jsonx.NewMark(thisDialect, "@string:system")  // the system prompt was a string, not blocks

	// On a message, and on a tool result's part.
	markStringContent = jsonx.NewMark(thisDialect, "@string") // the content was a string, not blocks

	// On a part or a tool.
	markBlock   = jsonx.NewMark(thisDialect, "@block")   // a block with no canonical home, raw
	markType    = jsonx.NewMark(thisDialect, "@type")    // a block type the canonical kind does not imply
	markCarrier = jsonx.NewMark(thisDialect, "@carrier") // a reasoning block that only carried a signature
)
