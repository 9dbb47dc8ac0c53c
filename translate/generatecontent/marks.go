package generatecontent

import "github.com/parleyhq/parley/translate/internal/jsonx"

// The marks this dialect keeps about its own spelling (see jsonx.Mark),
// by the canonical message that holds them: with the unknown members
// kept as they came, everything a round trip into this dialect needs
// beyond the canonical model. Only this package's encoders read them, and
// only toward this dialect.
var (
	// On the request.
	markLevel        = jsonx.NewMark(thisDialect, "@level")        // the reasoning level was a thinkingLevel
	markMime         = jsonx.NewMark(thisDialect, "@mime")         // a schema came with an empty responseMimeType
	markSafety       = jsonx.NewMark(thisDialect, "@safety")       // safety settings Parley could not map, raw
	markSpeechConfig = jsonx.NewMark(thisDialect, "@speechConfig") // a speech configuration with members Parley does not model, raw

	// On the request or a tool.
	markJSONSchema = jsonx.NewMark(thisDialect, "@jsonschema") // the schema was given as JSON Schema
	markMode       = jsonx.NewMark(thisDialect, "@mode")       // a calling or retrieval mode spelled as Parley does not keep it

	// On a message.
	markRole = jsonx.NewMark(thisDialect, "@role") // a role spelled function or tool

	// On a part or a tool.
	markBlock       = jsonx.NewMark(thisDialect, "@block")     // a part or tool with no canonical home, raw
	markSyntheticID = jsonx.NewMark(thisDialect, "@synthetic") // an id Parley made up for a call without one
	markOutcome     = jsonx.NewMark(thisDialect, "@outcome")   // an outcome spelled in its short form
	markLanguage    = jsonx.NewMark(thisDialect, "@language")  // an executable code language Parley has no value for

	// On a candidate or the response.
	markNoIndex     = jsonx.NewMark(thisDialect, "@noindex")      // the candidate came without an index
	markFinish      = jsonx.NewMark(thisDialect, "@finishReason") // a finish reason word with no canonical value
	markCitations   = jsonx.NewMark(thisDialect, "@citations")    // citationMetadata came with no sources
	markGrounding   = jsonx.NewMark(thisDialect, "@grounding")    // grounding metadata with members Parley does not model, raw
	markBlockReason = jsonx.NewMark(thisDialect, "@blockReason")  // a prompt block reason Parley has no value for
)
