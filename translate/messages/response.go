package messages

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The response walk, both ways: an upstream's reply into a canonical
// response (DecodeResponse), and a canonical response into a client's
// reply (EncodeResponse).

// DecodeResponse implements translate.Upstream.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	var w Response
	if !quickResponse(body, &w) {
		if err := jsonx.Unmarshal(body, &w); err != nil {
			return nil, translate.UpstreamProtocol(thisDialect, err)
		}
	}
	if w.Type != "" && w.Type != "message" {
		return nil, translate.UpstreamProtocol(thisDialect, fmt.Errorf("reply of type %q, not a message", w.Type))
	}
	resp := &parleyv1.Response{Id: w.ID, Model: w.Model, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED, Extensions: upstreamMark()}
	d := responseDecoder{t: t}
	c := &parleyv1.Candidate{}
	for i := range w.Content {
		p, err := d.block(&w.Content[i])
		if err != nil {
			return nil, translate.UpstreamProtocol(thisDialect, fmt.Errorf("content.%d: %w", i, err))
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
		jsonx.Keep(&resp.Extensions, thisDialect, "usage", w.Usage.Unknown)
	}
	jsonx.Keep(&resp.Extensions, thisDialect, "", w.Unknown)
	return resp, nil
}

// upstreamMark is the extension bag of a decoded response: it names this
// dialect as the one that made the response, so that a client of the same
// dialect gets its members back as they came, even when there are no
// members to carry.
func upstreamMark() *parleyv1.Extensions {
	return &parleyv1.Extensions{Dialect: thisDialect}
}

// EncodeResponse implements translate.Client.
func (Client) EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error) {
	w, err := wireReply(req, resp)
	if err != nil {
		return nil, err
	}
	return jsonx.Encode(w, appendMessage)
}

// wireReply is the reply EncodeResponse writes.
func wireReply(req *parleyv1.Request, resp *parleyv1.Response) (*Response, error) {
	w := clientResponse(req, resp)
	enc := clientEncoder{same: resp.GetExtensions().GetDialect() == thisDialect}
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
	return w, nil
}

// clientResponse fills the envelope of a reply: everything but the content
// and the stop reason.
func clientResponse(req *parleyv1.Request, resp *parleyv1.Response) *Response {
	return clientResponseUsage(req, resp, resp.GetUsage())
}

// clientResponseUsage is clientResponse with u in place of the response's
// usage.
func clientResponseUsage(req *parleyv1.Request, resp *parleyv1.Response, u *parleyv1.Usage) *Response {
	same := resp.GetExtensions().GetDialect() == thisDialect
	w := &Response{ID: resp.GetId(), Type: "message", Role: "assistant", Model: resp.GetModel(), Content: []Block{}}
	if w.ID == "" {
		w.ID = translate.NewID("msg_")
	}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	if u == nil {
		u = &parleyv1.Usage{}
	}
	w.Usage = wireUsage(u)
	w.Usage.ServiceTier = wireServiceTier(resp)
	if same {
		w.Usage.Unknown = jsonx.Take(resp.GetExtensions(), thisDialect, "usage")
		w.Unknown = jsonx.Take(resp.GetExtensions(), thisDialect, "")
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
		unknown = jsonx.Take(p.GetExtensions(), thisDialect, "")
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
	// One block variable for every kind: a Block literal in each case
	// made this frame 3 KB, under a stream's frames at every part start.
	var b Block
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		b.Type, b.Text, b.Unknown = "text", text(k.Text.GetText()), unknown
		if !start {
			// Citations kept raw go out once, in the block's own field.
			delete(unknown, "citations")
			b.Citations = clientCitations(p, e.same)
		}
	case *parleyv1.Part_Refusal:
		b.Type, b.Text = "text", text(k.Refusal.GetText())
	case *parleyv1.Part_ToolCall:
		b.Type, b.ID, b.Name, b.Input, b.Unknown = "tool_use", wireID(k.ToolCall.GetId()), translate.CallName(k.ToolCall), jsontext.Value("{}"), unknown
		if !start {
			b.Input = toolInput(k.ToolCall.GetArguments())
		}
	case *parleyv1.Part_Reasoning:
		r := k.Reasoning
		if r.GetRedacted() {
			b.Type, b.Data, b.Unknown = "redacted_thinking", translate.SealOpaque(r.GetEncryptedContent(), thisDialect, translate.SealAsIs), unknown
			break
		}
		b.Type, b.Thinking, b.Signature, b.Unknown = "thinking", text(reasoningText(r)), ptr(""), unknown
		if !start {
			b.Signature = ptr(unsignedIfNone(reasoningSignature(p)))
		}
	case *parleyv1.Part_ExecutableCode:
		code := "```" + strings.ToLower(strings.TrimPrefix(k.ExecutableCode.GetLanguage().String(), "CODE_LANGUAGE_")) + "\n" + k.ExecutableCode.GetCode() + "\n```"
		b.Type, b.Text = "text", text(code)
	case *parleyv1.Part_CodeExecutionResult:
		b.Type, b.Text = "text", text("Code execution output:\n"+k.CodeExecutionResult.GetOutput())
	case *parleyv1.Part_HostedToolCall:
		if !e.same {
			return out, nil // a server tool of another service: nothing the client could send back
		}
		b.Type, b.ID, b.Name, b.Input, b.Unknown = "server_tool_use", k.HostedToolCall.GetId(), k.HostedToolCall.GetName(), jsontext.Value("{}"), unknown
		if !start && k.HostedToolCall.GetInput() != "" {
			b.Input = jsontext.Value(k.HostedToolCall.GetInput())
		}
	case *parleyv1.Part_HostedToolResult:
		if !e.same {
			return out, nil
		}
		b.Type = defaultResultType(k.HostedToolResult.GetKind())
		if s, ok := markType.String(p.GetExtensions()); ok {
			b.Type = s
		}
		b.ToolUseID, b.Content, b.Unknown = k.HostedToolResult.GetCallId(), jsontext.Value(k.HostedToolResult.GetOutput()), unknown
	case nil:
		v, ok := markBlock.Value(p.GetExtensions())
		if !ok {
			return out, nil
		}
		if err := jsonx.Unmarshal(v, &b); err != nil {
			return nil, err
		}
	default:
		// Media in an answer (generated images) and item references have
		// no place in this dialect's answers and are left out.
		return out, nil
	}
	return append(out, b), nil
}
