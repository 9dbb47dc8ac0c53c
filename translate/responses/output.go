package responses

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Output items toward a client. A client of this dialect sends its output
// items back as input, so what goes out must come back meaning the same:
//
//   - text and refusal parts of one item form a message item;
//   - reasoning of this dialect goes out as it came (id, summary,
//     encrypted content); reasoning of another service goes out as a
//     reasoning item whose summary is its text and whose encrypted content
//     is its signature, sealed with its origin (translate.SealSignature);
//   - a signature on a part that is not reasoning (a thought signature on
//     a function call) travels in a reasoning item of its own, with no
//     summary, just before the part's item (translate.SealCarrierNext);
//   - calls are function_call items, computer calls computer_call items;
//   - hosted web and file searches are web_search_call and
//     file_search_call items; other hosted tools' steps are not shown.

// isMessagePart reports whether p belongs in a message item.
func isMessagePart(p *parleyv1.Part) bool {
	switch p.GetKind().(type) {
	case *parleyv1.Part_Text, *parleyv1.Part_Refusal, *parleyv1.Part_ExecutableCode, *parleyv1.Part_CodeExecutionResult:
		return true
	}
	return false
}

// sameOrigin reports whether p came from a service of this dialect.
func sameOrigin(p *parleyv1.Part) bool {
	return p.GetExtensions().GetDialect() == D || p.GetReasoning().GetEncryptedContent().GetOrigin().GetDialect() == D
}

// itemUnknown returns the members of the output item p came from.
func itemUnknown(p *parleyv1.Part) jsonx.Unknown {
	return jsonx.Take(p.GetExtensions(), D, "item")
}

func newMessageItem(p *parleyv1.Part) Item {
	id := p.GetItemId()
	if id == "" {
		id = translate.NewID("msg_")
	}
	status := statusWord(p.GetStatus())
	if status == "" {
		status = "completed"
	}
	return Item{Type: "message", ID: id, Status: status, Role: "assistant", Content: &Content{Parts: []ContentPart{}}, Unknown: itemUnknown(p)}
}

// contentOf renders a message part as a content part.
func contentOf(p *parleyv1.Part) ContentPart {
	unknown := jsonx.Take(p.GetExtensions(), D, "")
	delete(unknown, "annotations")
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Refusal:
		return ContentPart{Type: "refusal", Refusal: new(k.Refusal.GetText()), Unknown: unknown}
	case *parleyv1.Part_ExecutableCode:
		return ContentPart{Type: "output_text", Text: new("```python\n" + k.ExecutableCode.GetCode() + "\n```"), Annotations: []Annotation{}}
	case *parleyv1.Part_CodeExecutionResult:
		return ContentPart{Type: "output_text", Text: new("```\n" + k.CodeExecutionResult.GetOutput() + "\n```"), Annotations: []Annotation{}}
	}
	t := p.GetText()
	return ContentPart{Type: "output_text", Text: new(t.GetText()), Annotations: annotations(t.GetAnnotations(), p, true), Unknown: unknown}
}

// carrierItem holds the signature of the part after it.
func carrierItem(sig *parleyv1.Opaque) Item {
	return Item{Type: "reasoning", ID: translate.NewID("rs_"), Summary: []SummaryPart{}, EncryptedContent: new(translate.SealOpaque(sig, D, translate.SealCarrierNext))}
}

// reasoningOut renders a reasoning part as a reasoning item.
func reasoningOut(p *parleyv1.Part) Item {
	r := p.GetReasoning()
	it := Item{Type: "reasoning", ID: p.GetItemId(), Status: statusWord(p.GetStatus()), Summary: []SummaryPart{}, Unknown: itemUnknown(p)}
	if v, ok := jsonx.Value(p.GetExtensions(), D, extSummary); ok {
		_ = jsonx.Unmarshal(v, &it.Summary)
	} else {
		for _, s := range r.GetSummary() {
			it.Summary = append(it.Summary, SummaryPart{Type: "summary_text", Text: s})
		}
	}
	enc := r.GetEncryptedContent()
	if enc.GetOrigin().GetDialect() == D || enc.GetOrigin() == nil && enc != nil {
		if r.GetText() != "" {
			it.Content = &Content{Parts: []ContentPart{{Type: "reasoning_text", Text: new(r.GetText())}}}
		}
		if enc != nil {
			it.EncryptedContent = new(enc.GetValue())
		}
	} else {
		// Reasoning of another service: its text is shown as the
		// summary; its signature (or encrypted content) is sealed.
		if r.GetText() != "" && len(r.GetSummary()) == 0 {
			it.Summary = append(it.Summary, SummaryPart{Type: "summary_text", Text: r.GetText()})
		}
		switch {
		case p.GetSignature() != nil:
			it.EncryptedContent = new(translate.SealOpaque(p.GetSignature(), D, translate.SealSignature))
		case enc != nil:
			it.EncryptedContent = new(translate.SealOpaque(enc, D, translate.SealAsIs))
		}
	}
	if it.ID == "" || !strings.HasPrefix(it.ID, "rs_") && enc.GetOrigin().GetDialect() != D {
		it.ID = translate.NewID("rs_")
	}
	return it
}

// callOut renders a call part as a function_call or computer_call item.
func callOut(p *parleyv1.Part) Item {
	c := p.GetToolCall()
	id := p.GetItemId()
	if !strings.HasPrefix(id, "fc_") && !strings.HasPrefix(id, "cu_") && !sameOrigin(p) || id == "" {
		id = translate.NewID("fc_")
	}
	callID := c.GetId()
	if callID == "" {
		callID = translate.NewID("call_")
	}
	status := statusWord(p.GetStatus())
	if status == "" {
		status = "completed"
	}
	if c.GetKind() == parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE {
		action := c.GetArguments()
		if action == "" {
			action = "{}"
		}
		it := Item{Type: "computer_call", ID: id, CallID: callID, Action: jsontext.Value(action), Status: status, Unknown: itemUnknown(p)}
		if _, ok := it.Unknown["pending_safety_checks"]; !ok {
			if it.Unknown == nil {
				it.Unknown = jsonx.Unknown{}
			}
			it.Unknown["pending_safety_checks"] = jsontext.Value("[]")
		}
		return it
	}
	args := c.GetArguments()
	return Item{Type: "function_call", ID: id, CallID: callID, Name: c.GetName(), Arguments: &args, Status: status, Unknown: itemUnknown(p)}
}

// hostedOut renders a hosted search call; ok is false for hosted tools
// this dialect has no item for.
func hostedOut(p *parleyv1.Part) (Item, bool) {
	hc := p.GetHostedToolCall()
	status := statusWord(p.GetStatus())
	if status == "" {
		status = "completed"
	}
	id := hc.GetId()
	if id == "" {
		id = translate.NewID("ws_")
	}
	switch hc.GetKind() {
	case parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:
		it := Item{Type: "web_search_call", ID: id, Status: status, Unknown: itemUnknown(p)}
		in := jsontext.Value(hc.GetInput())
		switch {
		case sameOrigin(p) && len(in) > 0:
			it.Action = in
		case len(in) > 0 && in.Kind() == '{':
			var q struct {
				Query string `json:"query"`
			}
			_ = jsonx.Unmarshal(in, &q)
			it.Action, _ = jsonx.MarshalSorted(map[string]string{"type": "search", "query": q.Query})
		}
		return it, true
	case parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH:
		q := hc.GetQueries()
		if q == nil {
			q = []string{}
		}
		return Item{Type: "file_search_call", ID: id, Status: status, Queries: q, Unknown: itemUnknown(p)}, true
	}
	return Item{}, false
}

// outputItems renders the first candidate's parts as output items.
func outputItems(cands []*parleyv1.Candidate) []Item {
	out := []Item{}
	if len(cands) == 0 {
		return out
	}
	open := -1 // index in out of the open message item
	for _, p := range cands[0].GetParts() {
		if sig := p.GetSignature(); sig != nil && p.GetReasoning() == nil && sig.GetOrigin().GetDialect() != D {
			out = append(out, carrierItem(sig))
			open = -1
		}
		if isMessagePart(p) {
			if open < 0 || (p.GetItemId() != "" && p.GetItemId() != out[open].ID) {
				out = append(out, newMessageItem(p))
				open = len(out) - 1
			}
			out[open].Content.Parts = append(out[open].Content.Parts, contentOf(p))
			continue
		}
		open = -1
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Reasoning:
			out = append(out, reasoningOut(p))
		case *parleyv1.Part_ToolCall:
			out = append(out, callOut(p))
		case *parleyv1.Part_HostedToolCall:
			if it, ok := hostedOut(p); ok {
				out = append(out, it)
			}
		case *parleyv1.Part_HostedToolResult:
			if n := len(out); n > 0 && out[n-1].Type == "file_search_call" && out[n-1].ID == k.HostedToolResult.GetCallId() {
				out[n-1].Results = jsontext.Value(k.HostedToolResult.GetOutput())
			}
		case nil:
			if v, ok := jsonx.Value(p.GetExtensions(), D, extItem); ok {
				var it Item
				if jsonx.Unmarshal(v, &it) == nil {
					out = append(out, it)
				}
			}
		}
	}
	return out
}
