package translate

import (
	"fmt"
	"slices"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// TextPart is a part holding plain text. The part, its kind and its text
// are made in one allocation rather than three: requests carry text parts
// by the hundred.
func TextPart(s string) *parleyv1.Part { return TextParts(s)[0] }

// TextParts is a list of one text part, made in one allocation.
func TextParts(s string) []*parleyv1.Part {
	t := &textPart{}
	t.text.Text = s
	t.kind.Text = &t.text
	t.part.Kind = &t.kind
	t.list[0] = &t.part
	return t.list[:]
}

// textPart holds a text part and what it points to.
type textPart struct {
	part parleyv1.Part
	kind parleyv1.Part_Text
	text parleyv1.Text
	list [1]*parleyv1.Part
}

// JoinText is the text of the parts' text parts, sep before each that
// follows some text (the parts of other kinds left out, an empty text
// before any other adding nothing). A single text (a system prompt, a
// long turn of an agent's conversation) is its string as it is, not a
// copy; several are written into one buffer sized for them.
func JoinText(parts []*parleyv1.Part, sep string) string {
	first, n, after := "", 0, 0
	for _, p := range parts {
		t := p.GetText()
		switch {
		case t == nil:
		case first == "":
			first = t.GetText()
			n = len(first)
		default:
			n += len(sep) + len(t.GetText())
			after++
		}
	}
	if after == 0 {
		return first
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		if t := p.GetText(); t != nil {
			if b.Len() > 0 {
				b.WriteString(sep)
			}
			b.WriteString(t.GetText())
		}
	}
	return b.String()
}

// CallPart is a tool call with its arguments as JSON text.
func CallPart(id, name, args string) *parleyv1.Part {
	return &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: id, Name: name, Arguments: args}}}
}

// ResultPart is the result of the call with the given id, as text.
func ResultPart(callID, text string, isError bool) *parleyv1.Part {
	return &parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: callID, IsError: isError, Content: []*parleyv1.Part{TextPart(text)}}}}
}

// NewMessage is a turn of role holding parts.
func NewMessage(role parleyv1.Role, parts ...*parleyv1.Part) *parleyv1.Message {
	return &parleyv1.Message{Role: role, Parts: parts}
}

// CacheHintPaths lists, by canonical field path, every cache hint in a
// request: for dialects with no per-block cache control to report as
// dropped.
func CacheHintPaths(req *parleyv1.Request) []string {
	var out []string
	for i, p := range req.GetInstructions() {
		if p.GetCacheControl() != nil {
			out = append(out, fmt.Sprintf("instructions[%d].cache_control", i))
		}
	}
	for i, m := range req.GetMessages() {
		for j, p := range m.GetParts() {
			if p.GetCacheControl() != nil {
				out = append(out, fmt.Sprintf("messages[%d].parts[%d].cache_control", i, j))
			}
		}
	}
	for i, t := range req.GetTools() {
		if t.GetCacheControl() != nil {
			out = append(out, fmt.Sprintf("tools[%d].cache_control", i))
		}
	}
	return out
}

// RarerSettings lists, by canonical path, the settings of req that only
// some services have a field for: a seed, penalties, log-probabilities,
// logit bias, media resolution, speech, civic answers, verbosity, safety
// settings and cached content. A dialect that has none of them (the
// messages style and the Converse API) names the ones set in
// Outgoing.Dropped.
func RarerSettings(req *parleyv1.Request) []string {
	var out []string
	add := func(set bool, path string) {
		if set {
			out = append(out, path)
		}
	}
	g := req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	add(g.Seed != nil, "generation.seed")
	add(g.PresencePenalty != nil, "generation.presence_penalty")
	add(g.FrequencyPenalty != nil, "generation.frequency_penalty")
	add(g.GetLogprobs() || g.TopLogprobs != nil, "generation.logprobs")
	add(len(g.GetLogitBias()) > 0, "generation.logit_bias")
	add(g.GetMediaResolution() != parleyv1.MediaResolution_MEDIA_RESOLUTION_UNSPECIFIED, "generation.media_resolution")
	add(g.GetSpeech() != nil, "generation.speech")
	add(g.EnhancedCivicAnswers != nil, "generation.enhanced_civic_answers")
	add(g.GetVerbosity() != parleyv1.Verbosity_VERBOSITY_UNSPECIFIED, "generation.verbosity")
	add(len(req.GetSafetySettings()) > 0, "safety_settings")
	add(req.GetCachedContent() != "", "cached_content")
	return out
}

// IDChars reports whether s holds only letters, digits, "_" and "-": the
// characters the messages style and the Converse API take in a tool-use
// id, where other services' ids may hold more ("functions.Bash:0").
func IDChars(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// ForeignSettings lists the members of a client's request that have no
// canonical field (kept in its extension bag, a nested member as a.b),
// when the request goes to an upstream of another dialect: only an
// upstream of the client's dialect gets them back, so toward any other
// they are lost, and Outgoing.Dropped names them (the messages style's
// top-level cache_control and context_management, the responses style's
// context_management, say). Parley's own markers (@...) are not members.
func ForeignSettings(req *parleyv1.Request, upstream parleyv1.Dialect) []string {
	ext := req.GetExtensions()
	d := ext.GetDialect()
	if len(ext.GetFields()) == 0 || d == upstream || d == parleyv1.Dialect_DIALECT_UNSPECIFIED || d == parleyv1.Dialect_DIALECT_CANONICAL {
		return nil
	}
	var out []string
	for k := range ext.GetFields() {
		if k != "" && k[0] != '@' {
			out = append(out, strings.ReplaceAll(k, "/", "."))
		}
	}
	slices.Sort(out)
	return out
}
