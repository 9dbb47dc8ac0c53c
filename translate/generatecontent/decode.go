package generatecontent

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// D is this package's dialect.
const D = parleyv1.Dialect_DIALECT_GENERATE_CONTENT

// Extension keys that record spelling, not wire members.
const (
	extRole        = "@role"       // a role spelled function or tool
	extSyntheticID = "@synthetic"  // an id Parley made up for a call without one
	extBlock       = "@block"      // a part or tool with no canonical home, raw
	extJSONSchema  = "@jsonschema" // the schema was given as JSON Schema
	extLevel       = "@level"      // the reasoning level was a thinkingLevel
	extOutcome     = "@outcome"    // an outcome spelled in its short form
	extSafety      = "@safety"     // safety settings Parley could not map, raw
)

// Client is the content-generation dialect as clients speak it.
type Client struct{}

var _ translate.Client = Client{}

// Dialect implements translate.Client.
func (Client) Dialect() parleyv1.Dialect { return D }

// DecodeRequest implements translate.Client. The model and the stream
// flag come from the path (Incoming.Model, Incoming.Stream).
func (Client) DecodeRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if err := jsonx.Unmarshal(in.Body, &w); err != nil {
		return nil, decodeError(err)
	}
	req, err := decodeRequest(&w)
	if err != nil {
		return nil, err
	}
	req.Model = strings.TrimPrefix(in.Model, "models/")
	req.Stream = in.Stream
	return req, nil
}

func decodeError(err error) error {
	segs, what := jsonx.Path(err)
	return &translate.InputError{Field: jsonx.BracketPath(segs), Message: what, Err: err}
}

func decodeErrorAt(err error, path string) error {
	segs, what := jsonx.Path(err)
	field := path
	if p := jsonx.BracketPath(segs); p != "" {
		if !strings.HasPrefix(p, "[") {
			field += "."
		}
		field += p
	}
	return &translate.InputError{Field: field, Message: what, Err: err}
}

func decodeRequest(w *Request) (*parleyv1.Request, error) {
	if w.Contents == nil {
		return nil, translate.Invalid("contents", "required field contents is missing")
	}
	req := &parleyv1.Request{Extensions: &parleyv1.Extensions{Dialect: D, Fields: map[string]string{}}}
	if w.Model != "" {
		// The path names the model; a body that names it too keeps the
		// member for an upstream of this dialect.
		raw, err := jsonx.Marshal(w.Model)
		if err != nil {
			return nil, err
		}
		jsonx.KeepValue(&req.Extensions, D, "model", raw)
	}
	d := decoder{}
	for i := range *w.Contents {
		m, err := d.content(&(*w.Contents)[i], fmt.Sprintf("contents[%d]", i))
		if err != nil {
			return nil, err
		}
		req.Messages = append(req.Messages, m)
	}
	d.nameResults(req.Messages)
	if si := w.SystemInstruction; si != nil {
		parts, err := d.parts(si.Parts, "systemInstruction.parts")
		if err != nil {
			return nil, err
		}
		req.Instructions = parts
		jsonx.Keep(&req.Extensions, D, "systemInstruction", si.Unknown)
		if si.Role != "" {
			jsonx.KeepValue(&req.Extensions, D, "systemInstruction/role", jsontext.Value(quote(si.Role)))
		}
	}
	for i := range w.Tools {
		tools, err := tool(&w.Tools[i], fmt.Sprintf("tools[%d]", i))
		if err != nil {
			return nil, err
		}
		req.Tools = append(req.Tools, tools...)
	}
	if tc := w.ToolConfig; tc != nil {
		if err := toolConfig(req, tc); err != nil {
			return nil, err
		}
	}
	if err := safetySettings(req, w.SafetySettings); err != nil {
		return nil, err
	}
	if gc := w.GenerationConfig; gc != nil {
		if err := generationConfig(req, gc); err != nil {
			return nil, err
		}
	}
	req.CachedContent = w.CachedContent
	jsonx.Keep(&req.Extensions, D, "", w.Unknown)
	return req, nil
}

func quote(s string) string {
	b, _ := jsonx.Marshal(s)
	return string(b)
}

type decoder struct {
	turn int // index of the turn being decoded, for synthesised call ids
}

func (d *decoder) content(c *Content, path string) (*parleyv1.Message, error) {
	m := &parleyv1.Message{}
	switch c.Role {
	case "user", "":
		m.Role = parleyv1.Role_ROLE_USER
		if c.Role == "" {
			jsonx.KeepValue(&m.Extensions, D, extRole, jsontext.Value(`""`))
		}
	case "model":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
	case "function", "tool":
		m.Role = parleyv1.Role_ROLE_TOOL
		jsonx.KeepValue(&m.Extensions, D, extRole, jsontext.Value(quote(c.Role)))
	default:
		return nil, translate.Invalid(path+".role", "role must be one of user, model, function, tool, not %q", c.Role)
	}
	if c.Parts == nil {
		return nil, translate.Invalid(path+".parts", "required field parts is missing")
	}
	parts, err := d.parts(c.Parts, path+".parts")
	if err != nil {
		return nil, err
	}
	m.Parts = mergeThoughts(parts)
	d.turn++
	jsonx.Keep(&m.Extensions, D, "", c.Unknown)
	return m, nil
}

// mergeThoughts joins thoughts in a row, as a client that replays a stream
// part by part sends them, into one reasoning part signed by the signature
// that ended the run: a service that checks a signature against its
// thought text needs the whole text in one piece.
func mergeThoughts(parts []*parleyv1.Part) []*parleyv1.Part {
	out := parts[:0]
	for _, p := range parts {
		if n := len(out); n > 0 {
			prev := out[n-1]
			if r, pr := p.GetReasoning(), prev.GetReasoning(); r != nil && pr != nil && prev.GetSignature() == nil && pr.GetEncryptedContent() == nil && len(prev.GetExtensions().GetFields()) == 0 && len(p.GetExtensions().GetFields()) == 0 {
				pr.Text += r.GetText()
				prev.Signature = p.GetSignature()
				pr.EncryptedContent = r.GetEncryptedContent()
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// parts decodes the parts of a turn.
func (d *decoder) parts(ps PartList, path string) ([]*parleyv1.Part, error) {
	out := make([]*parleyv1.Part, 0, len(ps))
	for i := range ps {
		p, err := d.part(&ps[i], fmt.Sprintf("%s[%d]", path, i), i)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (d *decoder) part(w *Part, path string, index int) (*parleyv1.Part, error) {
	p := &parleyv1.Part{}
	kinds := 0
	for _, set := range []bool{w.Text != nil, w.InlineData != nil, w.FileData != nil, w.FunctionCall != nil, w.FunctionResponse != nil, w.ExecutableCode != nil, w.CodeExecutionResult != nil} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, translate.Invalid(path, "a part holds exactly one of text, inlineData, fileData, functionCall, functionResponse, executableCode, codeExecutionResult")
	}
	switch {
	case w.Text != nil && w.Thought != nil && *w.Thought:
		p.Kind = &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: *w.Text}}
	case w.Text != nil:
		p.Kind = &parleyv1.Part_Text{Text: &parleyv1.Text{Text: *w.Text}}
		if w.Thought != nil {
			jsonx.KeepValue(&p.Extensions, D, "thought", jsontext.Value("false"))
		}
	case w.InlineData != nil:
		m, err := inlineMedia(w.InlineData, path+".inlineData")
		if err != nil {
			return nil, err
		}
		p.Kind = &parleyv1.Part_Media{Media: m}
		jsonx.Keep(&p.Extensions, D, "inlineData", w.InlineData.Unknown)
	case w.FileData != nil:
		if w.FileData.FileURI == "" {
			return nil, translate.Invalid(path+".fileData.fileUri", "required field fileUri is missing")
		}
		p.Kind = &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: kindOf(w.FileData.MimeType), MimeType: w.FileData.MimeType, Source: &parleyv1.Media_Uri{Uri: w.FileData.FileURI}}}
		jsonx.Keep(&p.Extensions, D, "fileData", w.FileData.Unknown)
	case w.FunctionCall != nil:
		fc := w.FunctionCall
		if fc.Name == "" {
			return nil, translate.Invalid(path+".functionCall.name", "required field name is missing")
		}
		args := string(fc.Args)
		if args == "" {
			args = "{}"
		} else if fc.Args.Kind() != '{' {
			return nil, translate.Invalid(path+".functionCall.args", "args must be an object")
		}
		id := fc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", d.turn, index)
			jsonx.KeepValue(&p.Extensions, D, extSyntheticID, jsontext.Value("true"))
		}
		p.Kind = &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: id, Name: fc.Name, Arguments: args}}
		jsonx.Keep(&p.Extensions, D, "functionCall", fc.Unknown)
	case w.FunctionResponse != nil:
		fr := w.FunctionResponse
		if fr.Name == "" {
			return nil, translate.Invalid(path+".functionResponse.name", "required field name is missing")
		}
		// The result's text is the response object, compact: the
		// client's indentation is not worth tokens upstream.
		response := "{}"
		if len(fr.Response) > 0 {
			compact := slices.Clone(fr.Response)
			if err := compact.Compact(); err != nil {
				return nil, translate.Invalid(path+".functionResponse.response", "%v", err)
			}
			response = string(compact)
		}
		tr := &parleyv1.ToolResult{CallId: fr.ID, Name: fr.Name, Content: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: response}}}}}
		p.Kind = &parleyv1.Part_ToolResult{ToolResult: tr}
		if fr.ID == "" {
			jsonx.KeepValue(&p.Extensions, D, extSyntheticID, jsontext.Value("true"))
		}
		jsonx.Keep(&p.Extensions, D, "functionResponse", fr.Unknown)
	case w.ExecutableCode != nil:
		ec := w.ExecutableCode
		lang := parleyv1.CodeLanguage_CODE_LANGUAGE_UNSPECIFIED
		switch strings.ToUpper(ec.Language) {
		case "PYTHON":
			lang = parleyv1.CodeLanguage_CODE_LANGUAGE_PYTHON
		case "", "LANGUAGE_UNSPECIFIED":
		default:
			return nil, translate.Invalid(path+".executableCode.language", "language must be PYTHON or LANGUAGE_UNSPECIFIED")
		}
		p.Kind = &parleyv1.Part_ExecutableCode{ExecutableCode: &parleyv1.ExecutableCode{Language: lang, Code: ec.Code, Id: ec.ID}}
		if ec.Language != "" && ec.Language != "PYTHON" && ec.Language != "LANGUAGE_UNSPECIFIED" {
			jsonx.KeepValue(&p.Extensions, D, "@language", jsontext.Value(quote(ec.Language)))
		}
		jsonx.Keep(&p.Extensions, D, "executableCode", ec.Unknown)
	case w.CodeExecutionResult != nil:
		cr := w.CodeExecutionResult
		outcome, ok := outcomes[strings.ToUpper(cr.Outcome)]
		if !ok {
			return nil, translate.Invalid(path+".codeExecutionResult.outcome", "unknown outcome %q", cr.Outcome)
		}
		if cr.Outcome != "" && !strings.HasPrefix(cr.Outcome, "OUTCOME_") {
			jsonx.KeepValue(&p.Extensions, D, extOutcome, jsontext.Value(quote(cr.Outcome)))
		}
		p.Kind = &parleyv1.Part_CodeExecutionResult{CodeExecutionResult: &parleyv1.CodeExecutionResult{Outcome: outcome, Output: cr.Output, Id: cr.ID}}
		jsonx.Keep(&p.Extensions, D, "codeExecutionResult", cr.Unknown)
	default:
		if w.ThoughtSignature == "" && len(w.Unknown) == 0 {
			return nil, translate.Invalid(path, "a part must hold text, inlineData, fileData, functionCall, functionResponse, executableCode or codeExecutionResult")
		}
		// A part of a kind Parley does not model: kept whole for this
		// dialect.
		raw, err := jsonx.Marshal(w)
		if err != nil {
			return nil, err
		}
		jsonx.KeepValue(&p.Extensions, D, extBlock, raw)
		return p, nil
	}
	if w.ThoughtSignature != "" {
		o := translate.OpenOpaque(w.ThoughtSignature, D)
		switch {
		case o.Kind == translate.SealEncrypted && p.GetReasoning() != nil:
			p.GetReasoning().EncryptedContent = o.Opaque
		default:
			p.Signature = o.Opaque
		}
	}
	jsonx.Keep(&p.Extensions, D, "", w.Unknown)
	return p, nil
}

var outcomes = map[string]parleyv1.CodeOutcome{
	"":                          parleyv1.CodeOutcome_CODE_OUTCOME_UNSPECIFIED,
	"OUTCOME_UNSPECIFIED":       parleyv1.CodeOutcome_CODE_OUTCOME_UNSPECIFIED,
	"OUTCOME_OK":                parleyv1.CodeOutcome_CODE_OUTCOME_OK,
	"OK":                        parleyv1.CodeOutcome_CODE_OUTCOME_OK,
	"OUTCOME_FAILED":            parleyv1.CodeOutcome_CODE_OUTCOME_FAILED,
	"FAILED":                    parleyv1.CodeOutcome_CODE_OUTCOME_FAILED,
	"OUTCOME_DEADLINE_EXCEEDED": parleyv1.CodeOutcome_CODE_OUTCOME_DEADLINE_EXCEEDED,
	"DEADLINE_EXCEEDED":         parleyv1.CodeOutcome_CODE_OUTCOME_DEADLINE_EXCEEDED,
}

// nameResults gives function responses without an id the id of the call
// they answer: the first unanswered call of the same name in the model turn
// before them, else the first unanswered call, in order.
func (d *decoder) nameResults(msgs []*parleyv1.Message) {
	var calls []*parleyv1.ToolCall
	answered := map[*parleyv1.ToolCall]bool{}
	for _, m := range msgs {
		if m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
			calls = calls[:0]
			for _, p := range m.GetParts() {
				if tc := p.GetToolCall(); tc != nil {
					calls = append(calls, tc)
				}
			}
			continue
		}
		for _, p := range m.GetParts() {
			tr := p.GetToolResult()
			if tr == nil {
				continue
			}
			if tr.GetCallId() != "" {
				for _, c := range calls {
					if c.GetId() == tr.GetCallId() {
						answered[c] = true
					}
				}
				continue
			}
			var match *parleyv1.ToolCall
			for _, c := range calls {
				if !answered[c] && c.GetName() == tr.GetName() {
					match = c
					break
				}
			}
			if match == nil {
				for _, c := range calls {
					if !answered[c] {
						match = c
						break
					}
				}
			}
			if match != nil {
				answered[match] = true
				tr.CallId = match.GetId()
			} else {
				tr.CallId = translate.NewID("call_")
			}
		}
	}
}

func inlineMedia(b *Blob, path string) (*parleyv1.Media, error) {
	if b.MimeType == "" {
		return nil, translate.Invalid(path+".mimeType", "required field mimeType is missing")
	}
	data, err := decodeBase64(b.Data)
	if err != nil {
		return nil, translate.Invalid(path+".data", "invalid base64 data")
	}
	return &parleyv1.Media{Kind: kindOf(b.MimeType), MimeType: b.MimeType, Source: &parleyv1.Media_Data{Data: data}}, nil
}

// decodeBase64 reads standard or URL-safe base64, padded or not, as Google
// APIs accept both.
func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("invalid base64")
}

func kindOf(mime string) parleyv1.MediaKind {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return parleyv1.MediaKind_MEDIA_KIND_IMAGE
	case strings.HasPrefix(mime, "audio/"):
		return parleyv1.MediaKind_MEDIA_KIND_AUDIO
	case strings.HasPrefix(mime, "video/"):
		return parleyv1.MediaKind_MEDIA_KIND_VIDEO
	case mime == "application/pdf" || strings.HasPrefix(mime, "text/"):
		return parleyv1.MediaKind_MEDIA_KIND_DOCUMENT
	}
	return parleyv1.MediaKind_MEDIA_KIND_FILE
}

// tool flattens one tool object: each function declaration and each
// built-in tool becomes a canonical tool.
func tool(w *Tool, path string) ([]*parleyv1.Tool, error) {
	var out []*parleyv1.Tool
	for i := range w.FunctionDeclarations {
		fd := &w.FunctionDeclarations[i]
		fpath := fmt.Sprintf("%s.functionDeclarations[%d]", path, i)
		if fd.Name == "" {
			return nil, translate.Invalid(fpath+".name", "required field name is missing")
		}
		ft := &parleyv1.FunctionTool{Name: fd.Name, Description: fd.Description}
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_Function{Function: ft}}
		switch {
		case len(fd.ParametersJSONSchema) > 0:
			ft.Parameters = string(fd.ParametersJSONSchema)
			jsonx.KeepValue(&t.Extensions, D, extJSONSchema, jsontext.Value("true"))
		case len(fd.Parameters) > 0:
			s, err := schemaToJSONSchema(fd.Parameters)
			if err != nil {
				return nil, decodeErrorAt(err, fpath+".parameters")
			}
			ft.Parameters = s
		}
		jsonx.Keep(&t.Extensions, D, "", fd.Unknown)
		out = append(out, t)
	}
	if w.CodeExecution != nil {
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_CodeExecution{CodeExecution: &parleyv1.CodeExecutionTool{}}}
		keepObject(&t.Extensions, "codeExecution", w.CodeExecution)
		out = append(out, t)
	}
	if w.GoogleSearch != nil {
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_WebSearch{WebSearch: &parleyv1.WebSearchTool{}}}
		keepObject(&t.Extensions, "googleSearch", w.GoogleSearch)
		out = append(out, t)
	}
	if gsr := w.GoogleSearchRetrieval; gsr != nil {
		ws := &parleyv1.WebSearchTool{Version: "google_search_retrieval", DynamicRetrieval: &parleyv1.DynamicRetrieval{}}
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_WebSearch{WebSearch: ws}}
		if drc := gsr.DynamicRetrievalConfig; drc != nil {
			if strings.EqualFold(drc.Mode, "MODE_DYNAMIC") {
				ws.DynamicRetrieval.Mode = parleyv1.DynamicRetrievalMode_DYNAMIC_RETRIEVAL_MODE_DYNAMIC
			}
			ws.DynamicRetrieval.Threshold = drc.DynamicThreshold
			if drc.Mode != "" && drc.Mode != "MODE_DYNAMIC" {
				jsonx.KeepValue(&t.Extensions, D, "@mode", jsontext.Value(quote(drc.Mode)))
			}
			jsonx.Keep(&t.Extensions, D, "googleSearchRetrieval/dynamicRetrievalConfig", drc.Unknown)
		}
		jsonx.Keep(&t.Extensions, D, "googleSearchRetrieval", gsr.Unknown)
		out = append(out, t)
	}
	if w.URLContext != nil {
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_UrlContext{UrlContext: &parleyv1.UrlContextTool{}}}
		keepObject(&t.Extensions, "urlContext", w.URLContext)
		out = append(out, t)
	}
	if cu := w.ComputerUse; cu != nil {
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_ComputerUse{ComputerUse: &parleyv1.ComputerUseTool{Environment: cu.Environment}}}
		jsonx.Keep(&t.Extensions, D, "computerUse", cu.Unknown)
		out = append(out, t)
	}
	if len(w.Unknown) > 0 {
		// Tools Parley does not model (maps, file search stores, MCP ...).
		raw, err := jsonx.Marshal(Tool{Unknown: w.Unknown})
		if err != nil {
			return nil, err
		}
		t := &parleyv1.Tool{}
		jsonx.KeepValue(&t.Extensions, D, extBlock, raw)
		out = append(out, t)
	}
	return out, nil
}

// keepObject keeps the members of a built-in tool's settings object.
func keepObject(ext **parleyv1.Extensions, name string, raw jsontext.Value) {
	var u jsonx.Unknown
	if jsonx.Unmarshal(raw, &u) == nil && len(u) > 0 {
		jsonx.Keep(ext, D, name, u)
	}
}

func toolConfig(req *parleyv1.Request, tc *ToolConfig) error {
	jsonx.Keep(&req.Extensions, D, "toolConfig", tc.Unknown)
	fcc := tc.FunctionCallingConfig
	if fcc == nil {
		return nil
	}
	out := &parleyv1.ToolChoice{AllowedNames: fcc.AllowedFunctionNames}
	switch strings.ToUpper(fcc.Mode) {
	case "AUTO":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
	case "ANY":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED
	case "NONE":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE
	case "", "MODE_UNSPECIFIED":
	case "VALIDATED":
		// Calls are checked against the schemas; the canonical model has no
		// such mode, so it is the model's choice, with the word kept.
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
	default:
		return translate.Invalid("toolConfig.functionCallingConfig.mode", "mode must be one of MODE_UNSPECIFIED, AUTO, ANY, NONE, VALIDATED")
	}
	if fcc.Mode != "" && fcc.Mode != strings.ToUpper(fcc.Mode) || strings.ToUpper(fcc.Mode) == "VALIDATED" || strings.ToUpper(fcc.Mode) == "MODE_UNSPECIFIED" {
		jsonx.KeepValue(&req.Extensions, D, "@mode", jsontext.Value(quote(fcc.Mode)))
	}
	jsonx.Keep(&req.Extensions, D, "toolConfig/functionCallingConfig", fcc.Unknown)
	req.ToolChoice = out
	return nil
}

func safetySettings(req *parleyv1.Request, ss []SafetySetting) error {
	mapped := true
	for i, s := range ss {
		cat, okc := parleyv1.HarmCategory_value[strings.ToUpper(s.Category)]
		thr, okt := parleyv1.HarmBlockThreshold_value["HARM_BLOCK_THRESHOLD_"+strings.ToUpper(strings.TrimPrefix(s.Threshold, "HARM_BLOCK_THRESHOLD_"))]
		if s.Category == "" {
			return translate.Invalid(fmt.Sprintf("safetySettings[%d].category", i), "required field category is missing")
		}
		if s.Threshold == "" {
			return translate.Invalid(fmt.Sprintf("safetySettings[%d].threshold", i), "required field threshold is missing")
		}
		if !okc || !okt || len(s.Unknown) > 0 || s.Category != strings.ToUpper(s.Category) || s.Threshold != strings.ToUpper(s.Threshold) {
			mapped = false
			if !okc || !okt {
				continue // a category or threshold newer than Parley: kept raw below
			}
		}
		req.SafetySettings = append(req.SafetySettings, &parleyv1.SafetySetting{Category: parleyv1.HarmCategory(cat), Threshold: parleyv1.HarmBlockThreshold(thr)})
	}
	if !mapped {
		raw, err := jsonx.Marshal(ss)
		if err != nil {
			return err
		}
		jsonx.KeepValue(&req.Extensions, D, extSafety, raw)
	}
	return nil
}

var modalities = map[string]parleyv1.Modality{
	"TEXT": parleyv1.Modality_MODALITY_TEXT, "IMAGE": parleyv1.Modality_MODALITY_IMAGE,
	"AUDIO": parleyv1.Modality_MODALITY_AUDIO, "VIDEO": parleyv1.Modality_MODALITY_VIDEO,
	"DOCUMENT": parleyv1.Modality_MODALITY_DOCUMENT,
}

var mediaResolutions = map[string]parleyv1.MediaResolution{
	"MEDIA_RESOLUTION_LOW":    parleyv1.MediaResolution_MEDIA_RESOLUTION_LOW,
	"MEDIA_RESOLUTION_MEDIUM": parleyv1.MediaResolution_MEDIA_RESOLUTION_MEDIUM,
	"MEDIA_RESOLUTION_HIGH":   parleyv1.MediaResolution_MEDIA_RESOLUTION_HIGH,
}

var levels = map[string]parleyv1.ReasoningEffort{
	"MINIMAL": parleyv1.ReasoningEffort_REASONING_EFFORT_MINIMAL,
	"LOW":     parleyv1.ReasoningEffort_REASONING_EFFORT_LOW,
	"MEDIUM":  parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
	"HIGH":    parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH,
}

func generationConfig(req *parleyv1.Request, gc *GenerationConfig) error {
	g := &parleyv1.GenerationConfig{
		StopSequences:        gc.StopSequences,
		Temperature:          gc.Temperature,
		TopP:                 gc.TopP,
		PresencePenalty:      gc.PresencePenalty,
		FrequencyPenalty:     gc.FrequencyPenalty,
		Seed:                 gc.Seed,
		Logprobs:             gc.ResponseLogprobs,
		EnhancedCivicAnswers: gc.EnableEnhancedCivicAnswers,
	}
	const p = "generationConfig."
	if len(gc.StopSequences) > 5 {
		return translate.Invalid(p+"stopSequences", "at most 5 stop sequences are allowed")
	}
	if t := gc.Temperature; t != nil && (*t < 0 || *t > 2) {
		return translate.Invalid(p+"temperature", "temperature must be in [0.0, 2.0]")
	}
	if gc.TopK != nil {
		g.TopK = ptr(int32(*gc.TopK))
		if float64(int32(*gc.TopK)) != *gc.TopK {
			jsonx.KeepValue(&req.Extensions, D, "generationConfig/topK", jsontext.Value(fmt.Sprint(*gc.TopK)))
		}
	}
	if gc.MaxOutputTokens != nil {
		g.MaxOutputTokens = ptr(clampInt32(*gc.MaxOutputTokens))
	}
	if gc.CandidateCount != nil {
		g.CandidateCount = ptr(clampInt32(*gc.CandidateCount))
	}
	if gc.Logprobs != nil {
		g.TopLogprobs = ptr(clampInt32(*gc.Logprobs))
	}
	for i, m := range gc.ResponseModalities {
		mod, ok := modalities[strings.ToUpper(m)]
		if !ok {
			return translate.Invalid(fmt.Sprintf("%sresponseModalities[%d]", p, i), "modality must be one of TEXT, IMAGE, AUDIO")
		}
		g.OutputModalities = append(g.OutputModalities, mod)
	}
	if gc.MediaResolution != "" {
		mr, ok := mediaResolutions[strings.ToUpper(gc.MediaResolution)]
		if !ok && !strings.EqualFold(gc.MediaResolution, "MEDIA_RESOLUTION_UNSPECIFIED") {
			return translate.Invalid(p+"mediaResolution", "unknown media resolution %q", gc.MediaResolution)
		}
		g.MediaResolution = mr
	}
	if sc := gc.SpeechConfig; sc != nil {
		g.Speech = &parleyv1.SpeechConfig{LanguageCode: sc.LanguageCode}
		if vc := sc.VoiceConfig; vc != nil && vc.PrebuiltVoiceConfig != nil {
			g.Speech.Voice = vc.PrebuiltVoiceConfig.VoiceName
		}
		if ms := sc.MultiSpeakerVoiceConfig; ms != nil {
			for _, s := range ms.SpeakerVoiceConfigs {
				sv := &parleyv1.SpeakerVoice{Speaker: s.Speaker}
				if s.VoiceConfig != nil && s.VoiceConfig.PrebuiltVoiceConfig != nil {
					sv.Voice = s.VoiceConfig.PrebuiltVoiceConfig.VoiceName
				}
				g.Speech.Speakers = append(g.Speech.Speakers, sv)
			}
		}
		if hasUnknownSpeech(sc) {
			raw, err := jsonx.Marshal(sc)
			if err != nil {
				return err
			}
			jsonx.KeepValue(&req.Extensions, D, "@speechConfig", raw)
		}
	}
	if tc := gc.ThinkingConfig; tc != nil {
		rc := &parleyv1.ReasoningConfig{IncludeThoughts: tc.IncludeThoughts}
		if b := tc.ThinkingBudget; b != nil {
			switch {
			case *b == 0:
				rc.Mode = parleyv1.ReasoningMode_REASONING_MODE_DISABLED
			case *b < 0:
				rc.Mode = parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE
			default:
				rc.Mode = parleyv1.ReasoningMode_REASONING_MODE_ENABLED
				rc.BudgetTokens = ptr(clampInt32(*b))
			}
			if *b < -1 {
				jsonx.KeepValue(&req.Extensions, D, "generationConfig/thinkingConfig/thinkingBudget", jsontext.Value(fmt.Sprint(*b)))
			}
		}
		if tc.ThinkingLevel != "" {
			e, ok := levels[strings.ToUpper(tc.ThinkingLevel)]
			if !ok && !strings.EqualFold(tc.ThinkingLevel, "THINKING_LEVEL_UNSPECIFIED") {
				return translate.Invalid(p+"thinkingConfig.thinkingLevel", "thinkingLevel must be one of MINIMAL, LOW, MEDIUM, HIGH")
			}
			rc.Effort = e
			jsonx.KeepValue(&req.Extensions, D, extLevel, jsontext.Value(quote(tc.ThinkingLevel)))
		}
		jsonx.Keep(&req.Extensions, D, "generationConfig/thinkingConfig", tc.Unknown)
		req.Reasoning = rc
	}
	if err := responseFormat(req, gc); err != nil {
		return err
	}
	jsonx.Keep(&req.Extensions, D, "generationConfig", gc.Unknown)
	req.Generation = g
	return nil
}

func hasUnknownSpeech(sc *SpeechConfig) bool {
	if len(sc.Unknown) > 0 {
		return true
	}
	if vc := sc.VoiceConfig; vc != nil && (len(vc.Unknown) > 0 || vc.PrebuiltVoiceConfig == nil || len(vc.PrebuiltVoiceConfig.Unknown) > 0) {
		return true
	}
	if ms := sc.MultiSpeakerVoiceConfig; ms != nil {
		if len(ms.Unknown) > 0 {
			return true
		}
		for _, s := range ms.SpeakerVoiceConfigs {
			if len(s.Unknown) > 0 || s.VoiceConfig == nil || s.VoiceConfig.PrebuiltVoiceConfig == nil || len(s.VoiceConfig.Unknown) > 0 {
				return true
			}
		}
	}
	return false
}

func responseFormat(req *parleyv1.Request, gc *GenerationConfig) error {
	const p = "generationConfig."
	schema := ""
	switch {
	case len(gc.ResponseJSONSchema) > 0:
		schema = string(gc.ResponseJSONSchema)
		jsonx.KeepValue(&req.Extensions, D, extJSONSchema, jsontext.Value("true"))
	case len(gc.ResponseSchema) > 0:
		s, err := schemaToJSONSchema(gc.ResponseSchema)
		if err != nil {
			return decodeErrorAt(err, p+"responseSchema")
		}
		schema = s
	}
	rf := &parleyv1.ResponseFormat{Schema: schema}
	switch gc.ResponseMimeType {
	case "":
		if schema == "" {
			return nil
		}
		rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA
		jsonx.KeepValue(&req.Extensions, D, "@mime", jsontext.Value(`""`))
	case "text/plain":
		rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT
	case "application/json":
		rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT
		if schema != "" {
			rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA
		}
	case "text/x.enum":
		rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_ENUM
	default:
		return translate.Invalid(p+"responseMimeType", "responseMimeType must be text/plain, application/json or text/x.enum, not %q", gc.ResponseMimeType)
	}
	req.ResponseFormat = rf
	return nil
}

func ptr[T any](v T) *T { return &v }

func clampInt32(v int64) int32 {
	switch {
	case v > 1<<31-1:
		return 1<<31 - 1
	case v < -1<<31:
		return -1 << 31
	}
	return int32(v)
}

// APIKey implements translate.Client: x-goog-api-key, as the SDKs send
// it, else the key query parameter, else an Authorization: Bearer token.
func (Client) APIKey(in *translate.Incoming) string {
	if k := strings.TrimSpace(in.Header.Get("X-Goog-Api-Key")); k != "" {
		return k
	}
	if k := strings.TrimSpace(in.Query.Get("key")); k != "" {
		return k
	}
	return translate.BearerToken(in.Header)
}
