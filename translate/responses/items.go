package responses

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Items are this dialect's unit of conversation, in requests (input) and
// replies (output) alike. Each item becomes one canonical turn, so that
// the order of items is kept exactly: a function_call or reasoning item is
// an assistant turn of one part, a function_call_output a tool turn. The
// encoders of other dialects merge consecutive turns of the same role.
// Parts of an output item carry its id and status.

// Spelling notes on turns and parts.
const (
	extString  = "@string"  // the content was a string
	extTyped   = "@typed"   // the message item named its type
	extID      = "@id"      // the id of an item that is not an output item
	extStatus  = "@status"  // the status of such an item
	extItem    = "@item"    // an item with no canonical home, raw
	extTool    = "@tool"    // a tool with no canonical home, raw
	extSummary = "@summary" // a reasoning item's summary parts, raw
	extNoAnn   = "@no_annotations"
)

// itemDecoder turns items into canonical turns. From a client, opaque
// values are opened (they may be sealed by Parley for another origin);
// from an upstream, they are stamped with the upstream's origin.
type itemDecoder struct {
	client bool
	t      translate.Target
	// names of function calls seen so far, by call id
	names map[string]string
	// a signature waiting for the part after its carrier
	pending *parleyv1.Opaque
	// the last part decoded, for a carrier of the part before
	last *parleyv1.Part
}

func (d *itemDecoder) opaque(v string) translate.Opened {
	if d.client {
		return translate.OpenOpaque(v, D)
	}
	return translate.Opened{Opaque: translate.Stamp(v, D, d.t)}
}

func itemStatus(s string) parleyv1.ItemStatus {
	switch s {
	case "in_progress":
		return parleyv1.ItemStatus_ITEM_STATUS_IN_PROGRESS
	case "completed":
		return parleyv1.ItemStatus_ITEM_STATUS_COMPLETED
	case "incomplete":
		return parleyv1.ItemStatus_ITEM_STATUS_INCOMPLETE
	case "searching":
		return parleyv1.ItemStatus_ITEM_STATUS_SEARCHING
	case "failed":
		return parleyv1.ItemStatus_ITEM_STATUS_FAILED
	}
	return parleyv1.ItemStatus_ITEM_STATUS_UNSPECIFIED
}

func statusWord(s parleyv1.ItemStatus) string {
	switch s {
	case parleyv1.ItemStatus_ITEM_STATUS_IN_PROGRESS:
		return "in_progress"
	case parleyv1.ItemStatus_ITEM_STATUS_COMPLETED:
		return "completed"
	case parleyv1.ItemStatus_ITEM_STATUS_INCOMPLETE:
		return "incomplete"
	case parleyv1.ItemStatus_ITEM_STATUS_SEARCHING:
		return "searching"
	case parleyv1.ItemStatus_ITEM_STATUS_FAILED:
		return "failed"
	}
	return ""
}

var roles = map[string]parleyv1.Role{
	"user":      parleyv1.Role_ROLE_USER,
	"assistant": parleyv1.Role_ROLE_ASSISTANT,
	"system":    parleyv1.Role_ROLE_SYSTEM,
	"developer": parleyv1.Role_ROLE_DEVELOPER,
}

// mark sets the item id and status on a part of an output item.
func mark(p *parleyv1.Part, it *Item) *parleyv1.Part {
	p.ItemId, p.Status = it.ID, itemStatus(it.Status)
	return p
}

// item decodes one item into a turn; nil when the item leaves nothing (a
// signature carrier).
func (d *itemDecoder) item(it *Item, field string) (*parleyv1.Message, error) {
	m := &parleyv1.Message{}
	jsonx.Keep(&m.Extensions, D, "", it.Unknown)
	add := func(p *parleyv1.Part) {
		if d.pending != nil && p.Signature == nil {
			p.Signature, d.pending = d.pending, nil
		}
		m.Parts = append(m.Parts, p)
		d.last = p
	}
	switch it.Type {
	case "", "message":
		role, ok := roles[it.Role]
		if !ok {
			return nil, translate.Invalid(field+".role", "must be one of user, assistant, system, developer; got %q", it.Role)
		}
		m.Role = role
		if it.Type == "message" {
			jsonx.KeepValue(&m.Extensions, D, extTyped, jsontext.Value("true"))
		}
		if it.Content == nil {
			return nil, translate.Invalid(field+".content", "is required in a message")
		}
		if role != parleyv1.Role_ROLE_ASSISTANT {
			keepIDStatus(m, it)
		}
		if it.Content.String {
			jsonx.KeepValue(&m.Extensions, D, extString, jsontext.Value("true"))
			p := translate.TextPart(it.Content.Text)
			if role == parleyv1.Role_ROLE_ASSISTANT {
				mark(p, it)
			}
			add(p)
			return m, nil
		}
		for j := range it.Content.Parts {
			p, err := d.contentPart(&it.Content.Parts[j], field+".content.["+strconv.Itoa(j)+"]")
			if err != nil {
				return nil, err
			}
			if role == parleyv1.Role_ROLE_ASSISTANT {
				mark(p, it)
			}
			add(p)
		}
		if len(it.Content.Parts) == 0 && role == parleyv1.Role_ROLE_ASSISTANT {
			// An empty output message keeps its id and status.
			keepIDStatus(m, it)
		}
		return m, nil
	case "function_call":
		if it.CallID == "" || it.Name == "" {
			return nil, translate.Invalid(field, "a function_call needs call_id and name")
		}
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		p := mark(translate.CallPart(it.CallID, it.Name, deref(it.Arguments)), it)
		d.names[it.CallID] = it.Name
		add(p)
		return m, nil
	case "function_call_output":
		if it.CallID == "" {
			return nil, translate.Invalid(field+".call_id", "is required in a function_call_output")
		}
		m.Role = parleyv1.Role_ROLE_TOOL
		keepIDStatus(m, it)
		content, err := d.output(it.Output, field+".output")
		if err != nil {
			return nil, err
		}
		add(&parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: it.CallID, Name: d.names[it.CallID], Content: content}}})
		return m, nil
	case "reasoning":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		r := &parleyv1.Reasoning{}
		for _, s := range it.Summary {
			r.Summary = append(r.Summary, s.Text)
		}
		if len(it.Summary) > 0 && summaryUnusual(it.Summary) {
			raw, _ := jsonx.Marshal(it.Summary)
			jsonx.KeepValue(&m.Extensions, D, extSummary, raw)
		}
		if it.Content != nil {
			for _, c := range it.Content.Parts {
				r.Text += deref(c.Text)
			}
		}
		p := mark(&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: r}}, it)
		if it.EncryptedContent != nil {
			o := d.opaque(*it.EncryptedContent)
			switch o.Kind {
			case translate.SealCarrierNext:
				d.pending = o.Opaque
				return nil, nil
			case translate.SealCarrierPrev:
				if d.last != nil {
					d.last.Signature = o.Opaque
				}
				return nil, nil
			case translate.SealSignature:
				// Reasoning of another service, shown as summaries:
				// its text is the summaries' text, its signature the
				// sealed value.
				r.Text, r.Summary = strings.Join(r.Summary, "\n\n"), nil
				p.Signature = o.Opaque
			default:
				r.EncryptedContent = o.Opaque
				if len(r.Summary) == 0 && r.Text == "" && o.GetOrigin().GetDialect() != D {
					r.Redacted = true
				}
			}
		}
		add(p)
		return m, nil
	case "item_reference":
		if it.ID == "" {
			return nil, translate.Invalid(field+".id", "is required in an item_reference")
		}
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		add(&parleyv1.Part{Kind: &parleyv1.Part_ItemReference{ItemReference: &parleyv1.ItemReference{Id: it.ID}}})
		return m, nil
	case "computer_call":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		p := mark(&parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: it.CallID, Name: "computer", Arguments: string(it.Action), Kind: parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE}}}, it)
		add(p)
		return m, nil
	case "computer_call_output":
		m.Role = parleyv1.Role_ROLE_TOOL
		keepIDStatus(m, it)
		r := &parleyv1.ToolResult{CallId: it.CallID, Kind: parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE}
		var shot struct {
			Type     string `json:"type"`
			ImageURL string `json:"image_url"`
			FileID   string `json:"file_id"`
		}
		if err := jsonx.Unmarshal(it.Output, &shot); err != nil {
			return nil, translate.Invalid(field+".output", "must be a computer_screenshot object")
		}
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE}
		if mime, data, ok := openai.ParseDataURL(shot.ImageURL); ok {
			media.MimeType, media.Source = mime, &parleyv1.Media_Data{Data: data}
		} else if shot.ImageURL != "" {
			media.Source = &parleyv1.Media_Uri{Uri: shot.ImageURL}
		} else {
			media.Source = &parleyv1.Media_FileId{FileId: shot.FileID}
		}
		r.Content = []*parleyv1.Part{{Kind: &parleyv1.Part_Media{Media: media}}}
		jsonx.KeepValue(&m.Extensions, D, "output", it.Output)
		add(&parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: r}})
		return m, nil
	case "web_search_call":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		hc := &parleyv1.HostedToolCall{Id: it.ID, Kind: parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH, Name: "web_search", Input: string(it.Action)}
		add(mark(&parleyv1.Part{Kind: &parleyv1.Part_HostedToolCall{HostedToolCall: hc}}, it))
		return m, nil
	case "file_search_call":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		hc := &parleyv1.HostedToolCall{Id: it.ID, Kind: parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH, Name: "file_search", Queries: it.Queries}
		add(mark(&parleyv1.Part{Kind: &parleyv1.Part_HostedToolCall{HostedToolCall: hc}}, it))
		if len(it.Results) > 0 {
			hr := &parleyv1.HostedToolResult{CallId: it.ID, Kind: parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH, Output: string(it.Results)}
			add(mark(&parleyv1.Part{Kind: &parleyv1.Part_HostedToolResult{HostedToolResult: hr}}, it))
		}
		return m, nil
	}
	// An item type this package does not map: kept whole, for this dialect.
	raw, err := jsonx.Marshal(it)
	if err != nil {
		return nil, translate.Invalid(field, "%v", err)
	}
	m.Role = parleyv1.Role_ROLE_ASSISTANT
	m.Extensions = nil
	p := &parleyv1.Part{ItemId: it.ID, Status: itemStatus(it.Status)}
	jsonx.KeepValue(&p.Extensions, D, extItem, raw)
	add(p)
	return m, nil
}

// summaryUnusual reports whether summary parts hold anything besides
// summary_text and text, so that they must travel raw.
func summaryUnusual(s []SummaryPart) bool {
	for _, p := range s {
		if p.Type != "summary_text" || len(p.Unknown) > 0 {
			return true
		}
	}
	return false
}

func keepIDStatus(m *parleyv1.Message, it *Item) {
	if it.ID != "" {
		jsonx.KeepValue(&m.Extensions, D, extID, quote(it.ID))
	}
	if it.Status != "" {
		jsonx.KeepValue(&m.Extensions, D, extStatus, quote(it.Status))
	}
}

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

func (d *itemDecoder) contentPart(w *ContentPart, field string) (*parleyv1.Part, error) {
	var p *parleyv1.Part
	switch w.Type {
	case "input_text", "output_text":
		if w.Text == nil {
			return nil, translate.Invalid(field+".text", "is required")
		}
		p = translate.TextPart(*w.Text)
		for _, a := range w.Annotations {
			if ca, ok := canonicalAnnotation(a); ok {
				p.GetText().Annotations = append(p.GetText().Annotations, ca)
			}
		}
		if w.Type == "output_text" && w.Annotations == nil {
			jsonx.KeepValue(&p.Extensions, D, extNoAnn, jsontext.Value("true"))
		}
		if w.Type == "output_text" && len(w.Annotations) > len(p.GetText().GetAnnotations()) {
			raw, _ := jsonx.Marshal(w.Annotations)
			jsonx.KeepValue(&p.Extensions, D, "annotations", raw)
		}
		if w.Type == "output_text" {
			jsonx.KeepValue(&p.Extensions, D, "@type", quote(w.Type))
		}
	case "refusal":
		p = &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: deref(w.Refusal)}}}
	case "input_image":
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, Detail: openai.Detail(w.Detail)}
		switch {
		case w.FileID != nil && *w.FileID != "":
			media.Source = &parleyv1.Media_FileId{FileId: *w.FileID}
		case w.ImageURL != nil && *w.ImageURL != "":
			if mime, data, ok := openai.ParseDataURL(*w.ImageURL); ok {
				media.MimeType, media.Source = mime, &parleyv1.Media_Data{Data: data}
			} else {
				media.Source = &parleyv1.Media_Uri{Uri: *w.ImageURL}
			}
		default:
			return nil, translate.Invalid(field, "an input_image needs image_url or file_id")
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
	case "input_file":
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_FILE, Filename: deref(w.Filename)}
		switch {
		case w.FileID != nil && *w.FileID != "":
			media.Source = &parleyv1.Media_FileId{FileId: *w.FileID}
		case w.FileData != nil:
			mime, data, ok := openai.ParseDataURL(*w.FileData)
			if !ok {
				return nil, translate.Invalid(field+".file_data", "must be a base64 data URL (data:application/pdf;base64,...)")
			}
			media.MimeType, media.Kind, media.Source = mime, openai.KindOfMIME(mime), &parleyv1.Media_Data{Data: data}
		case w.FileURL != nil:
			media.Source = &parleyv1.Media_Uri{Uri: *w.FileURL}
		default:
			return nil, translate.Invalid(field, "an input_file needs file_data, file_id or file_url")
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
	default:
		raw, err := jsonx.Marshal(w)
		if err != nil {
			return nil, translate.Invalid(field, "%v", err)
		}
		p = &parleyv1.Part{}
		jsonx.KeepValue(&p.Extensions, D, "@part", raw)
		return p, nil
	}
	jsonx.Keep(&p.Extensions, D, "", w.Unknown)
	return p, nil
}

func canonicalAnnotation(a Annotation) (*parleyv1.Annotation, bool) {
	if len(a.Unknown) > 0 {
		return nil, false
	}
	switch a.Type {
	case "url_citation":
		return &parleyv1.Annotation{Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION, Url: a.URL, Title: a.Title, StartIndex: a.StartIndex, EndIndex: a.EndIndex}, true
	case "file_citation":
		return &parleyv1.Annotation{Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_FILE_CITATION, FileId: a.FileID, Filename: a.Filename, Index: a.Index}, true
	case "file_path":
		return &parleyv1.Annotation{Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_FILE_PATH, FileId: a.FileID, Index: a.Index}, true
	}
	return nil, false
}

func wireAnnotation(a *parleyv1.Annotation) (Annotation, bool) {
	switch a.GetKind() {
	case parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION:
		if a.GetUrl() == "" {
			return Annotation{}, false
		}
		w := Annotation{Type: "url_citation", URL: a.GetUrl(), Title: a.GetTitle(), StartIndex: a.StartIndex, EndIndex: a.EndIndex}
		if w.StartIndex == nil {
			w.StartIndex, w.EndIndex = new(int64(0)), new(int64(0))
		}
		return w, true
	case parleyv1.AnnotationKind_ANNOTATION_KIND_FILE_CITATION:
		return Annotation{Type: "file_citation", FileID: a.GetFileId(), Filename: a.GetFilename(), Index: orZero(a.Index)}, true
	case parleyv1.AnnotationKind_ANNOTATION_KIND_FILE_PATH:
		return Annotation{Type: "file_path", FileID: a.GetFileId(), Index: orZero(a.Index)}, true
	}
	return Annotation{}, false
}

func orZero(p *int64) *int64 {
	if p == nil {
		return new(int64(0))
	}
	return p
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func quote(s string) jsontext.Value {
	b, _ := jsonx.Marshal(s)
	return b
}
