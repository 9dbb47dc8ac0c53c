package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Tool calls and their results. Call and result items are read in
// itemDecoder.item and written toward an upstream in encoder.item
// (items.go); here are a function_call_output's output
// (itemDecoder.output), a result's output toward an upstream
// (resultOutput, screenshot) and calls toward a client (callOut,
// hostedOut).

// output reads a function_call_output's output: a string (JSON text, as
// the tool gave it) or an array of content parts.
func (d *itemDecoder) output(v jsontext.Value, field string) ([]*parleyv1.Part, error) {
	switch v.Kind() {
	case '"':
		var s string
		if err := jsonx.Unmarshal(v, &s); err != nil {
			return nil, translate.Invalid(field, "%v", err)
		}
		return []*parleyv1.Part{translate.TextPart(s)}, nil
	case '[':
		var parts []ContentPart
		if err := jsonx.Unmarshal(v, &parts); err != nil {
			return nil, openai.InputError(err)
		}
		out := make([]*parleyv1.Part, 0, len(parts))
		for j := range parts {
			p, err := d.contentPart(&parts[j], field+".["+strconv.Itoa(j)+"]")
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
	return nil, translate.Invalid(field, "must be a string or an array of content parts")
}

func (e *encoder) screenshot(r *parleyv1.ToolResult, field string) (jsontext.Value, error) {
	for _, c := range r.GetContent() {
		if m := c.GetMedia(); m != nil && m.GetKind() == parleyv1.MediaKind_MEDIA_KIND_IMAGE {
			shot := map[string]string{"type": "computer_screenshot"}
			if id, ok := m.GetSource().(*parleyv1.Media_FileId); ok {
				shot["file_id"] = id.FileId
			} else {
				shot["image_url"] = openai.MediaURL(m)
			}
			return jsonx.Marshal(shot)
		}
	}
	return nil, translate.Unsupported(thisDialect, field+".tool_result", "a computer call's output must be a screenshot")
}

// resultOutput renders a tool result's content: its text when it is text
// alone, else an array of input parts.
func (e *encoder) resultOutput(r *parleyv1.ToolResult, field string) (jsontext.Value, error) {
	textOnly := true
	for _, c := range r.GetContent() {
		if c.GetText() == nil {
			textOnly = false
		}
	}
	if textOnly {
		s := translate.JoinText(r.GetContent(), "\n")
		if r.GetIsError() && !e.same {
			s = "Error: " + s
		}
		return jsonx.Marshal(s)
	}
	var parts []ContentPart
	for j, c := range r.GetContent() {
		switch k := c.GetKind().(type) {
		case *parleyv1.Part_Text:
			parts = append(parts, ContentPart{Type: "input_text", Text: &k.Text.Text})
		case *parleyv1.Part_Media:
			cp, err := e.media(k.Media, field+".content["+strconv.Itoa(j)+"]")
			if err != nil {
				return nil, err
			}
			parts = append(parts, *cp)
		}
	}
	return jsonx.Marshal(parts)
}

// callOut renders a call part as a function_call or computer_call item.
func callOut(p *parleyv1.Part, names *callNames) Item {
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
		return computerCallOut(p, id, callID, status)
	}
	args := c.GetArguments()
	namespace, name, custom := names.of(c)
	it := Item{Type: "function_call", ID: id, CallID: callID, Name: name, Namespace: namespace, Arguments: &args, Status: status, Unknown: itemUnknown(p)}
	if custom {
		return customCallOut(it, args)
	}
	return it
}

// computerCallOut renders a computer-use call (callOut).
func computerCallOut(p *parleyv1.Part, id, callID, status string) Item {
	action := p.GetToolCall().GetArguments()
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
			it.Action, _ = jsonx.Marshal(map[string]string{"type": "search", "query": q.Query})
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

// maxCallID is the longest call_id the service takes.
const maxCallID = 64

// wireCallID is the call_id a call goes upstream with: its own, or, for
// one of another service longer than the service takes, "call_prly_" and
// 32 hex digits of its SHA-256, the same for the call and its output so
// that they still pair. Nothing maps it back: the upstream's reply names
// calls of its own, and the canonical id stays the original.
func wireCallID(id string) string {
	if len(id) <= maxCallID {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "call_prly_" + hex.EncodeToString(sum[:16])
}
