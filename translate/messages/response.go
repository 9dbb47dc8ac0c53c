package messages

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// stopReasons maps the dialect's stop reasons to canonical finish reasons.
var stopReasons = map[string]parleyv1.FinishReason{
	"end_turn":                      parleyv1.FinishReason_FINISH_REASON_STOP,
	"max_tokens":                    parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"stop_sequence":                 parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE,
	"tool_use":                      parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
	"pause_turn":                    parleyv1.FinishReason_FINISH_REASON_PAUSE_TURN,
	"refusal":                       parleyv1.FinishReason_FINISH_REASON_REFUSAL,
	"model_context_window_exceeded": parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED,
}

// stopReason maps a canonical finish reason to the dialect's stop reason.
// Safety stops of other services become "refusal", the dialect's word for
// an answer withheld on safety grounds; reasons with no counterpart
// (malformed or unexpected tool calls, unsupported language) end the turn.
func stopReason(r parleyv1.FinishReason, hasToolCalls bool) string {
	r = translate.ToolUseFinish(r, hasToolCalls)
	switch r {
	case parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS:
		return "max_tokens"
	case parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE:
		return "stop_sequence"
	case parleyv1.FinishReason_FINISH_REASON_TOOL_USE:
		return "tool_use"
	case parleyv1.FinishReason_FINISH_REASON_PAUSE_TURN:
		return "pause_turn"
	case parleyv1.FinishReason_FINISH_REASON_REFUSAL, parleyv1.FinishReason_FINISH_REASON_SAFETY,
		parleyv1.FinishReason_FINISH_REASON_RECITATION, parleyv1.FinishReason_FINISH_REASON_BLOCKLIST,
		parleyv1.FinishReason_FINISH_REASON_PROHIBITED_CONTENT, parleyv1.FinishReason_FINISH_REASON_SPII,
		parleyv1.FinishReason_FINISH_REASON_IMAGE_SAFETY:
		return "refusal"
	case parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED:
		return "model_context_window_exceeded"
	}
	return "end_turn"
}

func finishReason(s string) (parleyv1.FinishReason, string) {
	if r, ok := stopReasons[s]; ok {
		return r, ""
	}
	return parleyv1.FinishReason_FINISH_REASON_OTHER, s
}

// DecodeResponse implements translate.Upstream.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	var w Response
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(D, err)
	}
	if w.Type != "" && w.Type != "message" {
		return nil, translate.UpstreamProtocol(D, fmt.Errorf("reply of type %q, not a message", w.Type))
	}
	resp := &parleyv1.Response{Id: w.ID, Model: w.Model, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED, Extensions: upstreamMark()}
	d := responseDecoder{t: t}
	c := &parleyv1.Candidate{}
	for i := range w.Content {
		p, err := d.block(&w.Content[i])
		if err != nil {
			return nil, translate.UpstreamProtocol(D, fmt.Errorf("content.%d: %w", i, err))
		}
		c.Parts = append(c.Parts, p)
	}
	if w.StopReason != nil {
		c.FinishReason, c.FinishMessage = finishReason(*w.StopReason)
	}
	c.FinishReason = translate.ToolUseFinish(c.FinishReason, translate.HasToolCalls(c.Parts))
	if w.StopSequence != nil {
		c.StopSequence = *w.StopSequence
	}
	resp.Candidates = []*parleyv1.Candidate{c}
	if w.Usage != nil {
		resp.Usage = canonicalUsage(w.Usage)
		resp.ServiceTier = serviceTier(w.Usage.ServiceTier, &resp.Extensions)
		jsonx.Keep(&resp.Extensions, D, "usage", w.Usage.Unknown)
	}
	jsonx.Keep(&resp.Extensions, D, "", w.Unknown)
	return resp, nil
}

// responseDecoder decodes the blocks of an upstream reply. Opaque values
// are stamped with the upstream that made them.
type responseDecoder struct {
	t translate.Target
}

func (d responseDecoder) block(b *Block) (*parleyv1.Part, error) {
	dec := decoder{}
	p, err := dec.block(b, "")
	if err != nil {
		return nil, err
	}
	if p.Signature != nil {
		p.Signature = translate.Stamp(p.Signature.GetValue(), D, d.t)
	}
	if r := p.GetReasoning(); r != nil && r.EncryptedContent != nil {
		r.EncryptedContent = translate.Stamp(r.EncryptedContent.GetValue(), D, d.t)
	}
	return p, nil
}

func serviceTier(s string, ext **parleyv1.Extensions) parleyv1.ServiceTier {
	switch s {
	case "":
		return parleyv1.ServiceTier_SERVICE_TIER_UNSPECIFIED
	case "standard":
		return parleyv1.ServiceTier_SERVICE_TIER_DEFAULT
	case "priority":
		return parleyv1.ServiceTier_SERVICE_TIER_PRIORITY
	}
	jsonx.KeepValue(ext, D, "usage/service_tier", jsontext.Value(quote(s)))
	return parleyv1.ServiceTier_SERVICE_TIER_UNSPECIFIED
}

// wireServiceTier spells a canonical tier; a tier word with no canonical
// value travels in the extension bag instead.
func wireServiceTier(resp *parleyv1.Response) string {
	switch resp.GetServiceTier() {
	case parleyv1.ServiceTier_SERVICE_TIER_DEFAULT:
		return "standard"
	case parleyv1.ServiceTier_SERVICE_TIER_PRIORITY:
		return "priority"
	}
	return ""
}

// canonicalUsage converts the dialect's usage, whose input_tokens leave out
// the cached tokens, to canonical usage, whose input_tokens hold them.
func canonicalUsage(u *Usage) *parleyv1.Usage {
	out := &parleyv1.Usage{
		CacheReadTokens:     u.CacheReadInputTokens,
		CacheCreationTokens: u.CacheCreationInputTokens,
		OutputTokens:        u.OutputTokens,
	}
	if u.InputTokens != nil {
		out.InputTokens = ptr(*u.InputTokens + deref(u.CacheReadInputTokens) + deref(u.CacheCreationInputTokens))
	}
	if cc := u.CacheCreation; cc != nil {
		out.CacheCreation_5MTokens, out.CacheCreation_1HTokens = cc.Ephemeral5m, cc.Ephemeral1h
	}
	if st := u.ServerToolUse; st != nil {
		out.WebSearchRequests = st.WebSearchRequests
	}
	if od := u.OutputTokensDetails; od != nil {
		out.ReasoningTokens = od.ThinkingTokens
	}
	return out
}

// wireUsage converts canonical usage back. Counts the dialect always
// reports are always written, as 0 when unknown.
func wireUsage(u *parleyv1.Usage) *Usage {
	cacheRead, cacheWrite := u.GetCacheReadTokens(), u.GetCacheCreationTokens()
	out := &Usage{
		InputTokens:              ptr(max(u.GetInputTokens()-cacheRead-cacheWrite, 0)),
		OutputTokens:             ptr(u.GetOutputTokens()),
		CacheCreationInputTokens: ptr(cacheWrite),
		CacheReadInputTokens:     ptr(cacheRead),
	}
	if u.CacheCreation_5MTokens != nil || u.CacheCreation_1HTokens != nil {
		out.CacheCreation = &CacheCreation{Ephemeral5m: ptr(u.GetCacheCreation_5MTokens()), Ephemeral1h: ptr(u.GetCacheCreation_1HTokens())}
	}
	if u.WebSearchRequests != nil {
		out.ServerToolUse = &ServerToolUse{WebSearchRequests: u.WebSearchRequests}
	}
	if u.ReasoningTokens != nil {
		out.OutputTokensDetails = &OutputTokensDetails{ThinkingTokens: u.ReasoningTokens}
	}
	return out
}

// EncodeResponse implements translate.Client.
func (Client) EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error) {
	w := clientResponse(req, resp)
	enc := clientEncoder{same: resp.GetExtensions().GetDialect() == D}
	var c *parleyv1.Candidate
	if len(resp.GetCandidates()) > 0 {
		c = resp.GetCandidates()[0]
	}
	blocks, err := enc.blocks(c.GetParts())
	if err != nil {
		return nil, err
	}
	w.Content = blocks
	w.StopReason = ptr(stopReason(c.GetFinishReason(), translate.HasToolCalls(c.GetParts())))
	if c.GetFinishReason() == parleyv1.FinishReason_FINISH_REASON_UNSPECIFIED && promptBlocked(resp.GetPromptFeedback()) {
		w.StopReason = ptr("refusal")
	}
	if c.GetStopSequence() != "" {
		w.StopSequence = ptr(c.GetStopSequence())
	}
	return jsonx.Marshal(w)
}

// clientResponse fills the envelope of a reply: everything but the content
// and the stop reason.
func clientResponse(req *parleyv1.Request, resp *parleyv1.Response) *Response {
	same := resp.GetExtensions().GetDialect() == D
	w := &Response{ID: resp.GetId(), Type: "message", Role: "assistant", Model: resp.GetModel(), Content: []Block{}}
	if w.ID == "" {
		w.ID = translate.NewID("msg_")
	}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	u := resp.GetUsage()
	if u == nil {
		u = &parleyv1.Usage{}
	}
	w.Usage = wireUsage(u)
	w.Usage.ServiceTier = wireServiceTier(resp)
	if same {
		w.Usage.Unknown = jsonx.Take(resp.GetExtensions(), D, "usage")
		w.Unknown = jsonx.Take(resp.GetExtensions(), D, "")
	}
	return w
}

// clientEncoder renders assistant parts as this dialect's blocks for a
// client. Opaque values are sealed when another dialect made them; a
// signature on a part this dialect cannot sign travels in a thinking block
// of its own just before the part.
type clientEncoder struct {
	same bool
}

func (e clientEncoder) blocks(parts []*parleyv1.Part) ([]Block, error) {
	out := make([]Block, 0, len(parts))
	for _, p := range parts {
		bs, err := e.part(p, false)
		if err != nil {
			return nil, err
		}
		out = append(out, bs...)
	}
	return out, nil
}

// part returns the blocks of one part. With start set, text and arguments
// are left out: a stream sends them as deltas.
func (e clientEncoder) part(p *parleyv1.Part, start bool) ([]Block, error) {
	var unknown jsonx.Unknown
	if e.same {
		unknown = jsonx.Take(p.GetExtensions(), D, "")
	}
	var out []Block
	if sig := p.GetSignature(); sig != nil && p.GetReasoning() == nil {
		out = append(out, carrierBlock(sig, translate.SealCarrierNext))
	}
	text := func(s string) *string {
		if start {
			return ptr("")
		}
		return ptr(s)
	}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		b := Block{Type: "text", Text: text(k.Text.GetText()), Unknown: unknown}
		if !start {
			b.Citations = clientCitations(p, e.same)
		}
		out = append(out, b)
	case *parleyv1.Part_Refusal:
		out = append(out, Block{Type: "text", Text: text(k.Refusal.GetText())})
	case *parleyv1.Part_ToolCall:
		input := jsontext.Value("{}")
		if !start {
			input = toolInput(k.ToolCall.GetArguments())
		}
		out = append(out, Block{Type: "tool_use", ID: k.ToolCall.GetId(), Name: k.ToolCall.GetName(), Input: input, Unknown: unknown})
	case *parleyv1.Part_Reasoning:
		r := k.Reasoning
		if r.GetRedacted() {
			out = append(out, Block{Type: "redacted_thinking", Data: translate.SealOpaque(r.GetEncryptedContent(), D, translate.SealAsIs), Unknown: unknown})
			break
		}
		b := Block{Type: "thinking", Thinking: text(reasoningText(r)), Signature: ptr(""), Unknown: unknown}
		if !start {
			b.Signature = ptr(reasoningSignature(p))
		}
		out = append(out, b)
	case *parleyv1.Part_ExecutableCode:
		code := "```" + strings.ToLower(strings.TrimPrefix(k.ExecutableCode.GetLanguage().String(), "CODE_LANGUAGE_")) + "\n" + k.ExecutableCode.GetCode() + "\n```"
		out = append(out, Block{Type: "text", Text: text(code)})
	case *parleyv1.Part_CodeExecutionResult:
		out = append(out, Block{Type: "text", Text: text("Code execution output:\n" + k.CodeExecutionResult.GetOutput())})
	case *parleyv1.Part_HostedToolCall:
		if !e.same {
			break // a server tool of another service: nothing the client could send back
		}
		input := jsontext.Value("{}")
		if !start && k.HostedToolCall.GetInput() != "" {
			input = jsontext.Value(k.HostedToolCall.GetInput())
		}
		out = append(out, Block{Type: "server_tool_use", ID: k.HostedToolCall.GetId(), Name: k.HostedToolCall.GetName(), Input: input, Unknown: unknown})
	case *parleyv1.Part_HostedToolResult:
		if !e.same {
			break
		}
		typ := defaultResultType(k.HostedToolResult.GetKind())
		if v, ok := jsonx.Value(p.GetExtensions(), D, extType); ok {
			_ = jsonx.Unmarshal(v, &typ)
		}
		out = append(out, Block{Type: typ, ToolUseID: k.HostedToolResult.GetCallId(), Content: jsontext.Value(k.HostedToolResult.GetOutput()), Unknown: unknown})
	case nil:
		if v, ok := jsonx.Value(p.GetExtensions(), D, extBlock); ok {
			var b Block
			if err := jsonx.Unmarshal(v, &b); err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	// Media in an answer (generated images) and item references have no
	// place in this dialect's answers and are left out.
	return out, nil
}

// reasoningText is the text of a thinking block: the reasoning text, or its
// summaries when that is all the service gave.
func reasoningText(r *parleyv1.Reasoning) string {
	if r.GetText() != "" || len(r.GetSummary()) == 0 {
		return r.GetText()
	}
	return strings.Join(r.GetSummary(), "\n\n")
}

// reasoningSignature is the signature field of a thinking block: the
// block's signature, or the encrypted content another dialect gave.
func reasoningSignature(p *parleyv1.Part) string {
	if sig := p.GetSignature(); sig != nil {
		return translate.SealOpaque(sig, D, translate.SealAsIs)
	}
	if enc := p.GetReasoning().GetEncryptedContent(); enc != nil {
		return translate.SealOpaque(enc, D, translate.SealEncrypted)
	}
	return ""
}

func carrierBlock(sig *parleyv1.Opaque, kind translate.SealKind) Block {
	return Block{Type: "thinking", Thinking: ptr(""), Signature: ptr(translate.SealOpaque(sig, D, kind))}
}

// toolInput is a tool call's arguments as the input object the dialect
// requires. Arguments that are not a JSON object (a model's malformed
// output) are passed as a string member, so that the tool sees them and
// can report the problem, instead of the whole reply failing.
func toolInput(args string) jsontext.Value {
	args = strings.TrimSpace(args)
	if args == "" {
		return jsontext.Value("{}")
	}
	if v := jsontext.Value(args); v.IsValid() && v.Kind() == '{' {
		return v
	}
	raw, _ := jsonx.Marshal(map[string]string{"_raw_arguments": args})
	return raw
}

func clientCitations(p *parleyv1.Part, same bool) jsontext.Value {
	if same {
		if v, ok := jsonx.Value(p.GetExtensions(), D, "citations"); ok {
			return v
		}
	}
	anns := p.GetText().GetAnnotations()
	if len(anns) == 0 {
		return nil
	}
	out := make([]Citation, 0, len(anns))
	for _, a := range anns {
		c, ok := wireCitation(a)
		if !ok && a.GetKind() == parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION {
			// A web citation of another service: shown to the client, and
			// left out again if it comes back toward this dialect.
			c, ok = Citation{Type: "web_search_result_location", CitedText: a.GetCitedText(), URL: ptr(a.GetUrl()), Title: ptr(a.GetTitle()), EncryptedIndex: ptr("")}, true
		}
		if ok {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	raw, _ := jsonx.Marshal(out)
	return raw
}

// upstreamMark is the extension bag of a decoded response: it names this
// dialect as the one that made the response, so that a client of the same
// dialect gets its members back as they came, even when there are no
// members to carry.
func upstreamMark() *parleyv1.Extensions {
	return &parleyv1.Extensions{Dialect: D}
}

// promptBlocked says whether the upstream refused the prompt itself; with
// no candidate to say how the turn ended, this dialect calls that a
// refusal.
func promptBlocked(pf *parleyv1.PromptFeedback) bool {
	return pf.GetBlockReason() != parleyv1.BlockReason_BLOCK_REASON_UNSPECIFIED
}
