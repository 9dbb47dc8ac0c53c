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

// Parts, in all four directions: a part of a client's request to a
// canonical part (decoder.part), a canonical part to a part of an
// upstream's request (encoder.part), a part of an upstream's reply to a
// canonical part (responseDecoder.part) and a canonical part to a part of
// a client's reply (clientEncoder.part). Each switch names every part
// kind; the rules of each kind are in reasoning.go, tools.go and media.go.

func (d *decoder) part(w *Part, path string, index int) (*parleyv1.Part, error) {
	if w.Text == nil && w.ThoughtSignature != "" && onlySigned(w) {
		// A signature on an empty (thought) text part, as the service
		// sends one, comes back from the SDKs without its empty text.
		signed := *w
		signed.Text = new("")
		w = &signed
	}
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
			jsonx.KeepValue(&p.Extensions, thisDialect, "thought", jsontext.Value("false"))
		}
	case w.InlineData != nil:
		m, err := inlineMedia(w.InlineData, path+".inlineData")
		if err != nil {
			return nil, err
		}
		p.Kind = &parleyv1.Part_Media{Media: m}
		jsonx.Keep(&p.Extensions, thisDialect, "inlineData", w.InlineData.Unknown)
	case w.FileData != nil:
		if w.FileData.FileURI == "" {
			return nil, translate.Invalid(path+".fileData.fileUri", "required field fileUri is missing")
		}
		p.Kind = &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: kindOf(w.FileData.MimeType), MimeType: w.FileData.MimeType, Source: &parleyv1.Media_Uri{Uri: w.FileData.FileURI}}}
		jsonx.Keep(&p.Extensions, thisDialect, "fileData", w.FileData.Unknown)
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
			markSyntheticID.Keep(&p.Extensions, jsontext.Value("true"))
		}
		p.Kind = &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: id, Name: fc.Name, Arguments: args}}
		jsonx.Keep(&p.Extensions, thisDialect, "functionCall", fc.Unknown)
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
		tr := &parleyv1.ToolResult{CallId: fr.ID, Name: fr.Name, Content: translate.TextParts(response)}
		for j := range fr.Parts {
			mp, err := responseMedia(&fr.Parts[j], translate.Index(path+".functionResponse.parts", j))
			if err != nil {
				return nil, err
			}
			tr.Content = append(tr.Content, mp)
		}
		p.Kind = &parleyv1.Part_ToolResult{ToolResult: tr}
		if fr.ID == "" {
			markSyntheticID.Keep(&p.Extensions, jsontext.Value("true"))
		}
		jsonx.Keep(&p.Extensions, thisDialect, "functionResponse", fr.Unknown)
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
			markLanguage.KeepString(&p.Extensions, ec.Language)
		}
		jsonx.Keep(&p.Extensions, thisDialect, "executableCode", ec.Unknown)
	case w.CodeExecutionResult != nil:
		cr := w.CodeExecutionResult
		outcome, ok := outcomes[strings.ToUpper(cr.Outcome)]
		if !ok {
			return nil, translate.Invalid(path+".codeExecutionResult.outcome", "unknown outcome %q", cr.Outcome)
		}
		if cr.Outcome != "" && !strings.HasPrefix(cr.Outcome, "OUTCOME_") {
			markOutcome.KeepString(&p.Extensions, cr.Outcome)
		}
		p.Kind = &parleyv1.Part_CodeExecutionResult{CodeExecutionResult: &parleyv1.CodeExecutionResult{Outcome: outcome, Output: cr.Output, Id: cr.ID}}
		jsonx.Keep(&p.Extensions, thisDialect, "codeExecutionResult", cr.Unknown)
	default:
		if w.ThoughtSignature == "" && len(w.Unknown) == 0 {
			return nil, translate.Invalid(path, "a part must hold text, inlineData, fileData, functionCall, functionResponse, executableCode or codeExecutionResult")
		}
		// A part of a kind Parley does not model: kept whole for this
		// dialect, marshalled off the request's stack (what it keeps as
		// it came is reformatted as deep as it nests).
		raw, err := jsonx.MarshalOffStack(w)
		if err != nil {
			return nil, err
		}
		markBlock.Keep(&p.Extensions, raw)
		return p, nil
	}
	if w.ThoughtSignature != "" {
		o := translate.OpenOpaque(w.ThoughtSignature, thisDialect)
		switch {
		case o.Kind == translate.SealEncrypted && p.GetReasoning() != nil:
			p.GetReasoning().EncryptedContent, p.ItemId = o.Opaque, o.ItemID
		default:
			p.Signature = o.Opaque
		}
	}
	jsonx.Keep(&p.Extensions, thisDialect, "", w.Unknown)
	return p, nil
}

func (e *encoder) part(p *parleyv1.Part, field string) (Part, bool, error) {
	w := Part{Unknown: e.partUnknown(p, ""), ThoughtSignature: e.signature(p.GetSignature())}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		if k.Text.GetText() == "" && w.ThoughtSignature == "" && !e.same {
			return Part{}, false, nil
		}
		w.Text = ptr(k.Text.GetText())
		if v, ok := jsonx.Value(p.GetExtensions(), thisDialect, "thought"); ok && e.same && string(v) == "false" {
			w.Thought = ptr(false)
			delete(w.Unknown, "thought")
		}
	case *parleyv1.Part_Refusal:
		w.Text = ptr(k.Refusal.GetText())
	case *parleyv1.Part_Reasoning:
		r := k.Reasoning
		if w.ThoughtSignature == "" {
			if sig := e.signature(r.GetEncryptedContent()); sig != "" {
				w.ThoughtSignature = sig
			}
		}
		if w.ThoughtSignature == "" && (!e.same || p.GetSignature() != nil || r.GetEncryptedContent() != nil) {
			// Another service's thinking (for a client of this dialect,
			// a thought Parley sealed for it): nothing this one can use.
			return Part{}, false, nil
		}
		w.Text, w.Thought = ptr(r.GetText()), ptr(true)
	case *parleyv1.Part_Media:
		if err := e.media(&w, k.Media, p, field); err != nil {
			return Part{}, false, err
		}
	case *parleyv1.Part_ToolCall:
		tc := k.ToolCall
		args := strings.TrimSpace(tc.GetArguments())
		if args == "" {
			args = "{}"
		}
		if !jsonx.IsObject(args) {
			return Part{}, false, translate.Unsupported(thisDialect, field+".tool_call.arguments", "the arguments of tool call %q are not a JSON object", tc.GetId())
		}
		fc := &FunctionCall{Name: translate.CallName(tc), Args: jsontext.Value(args), Unknown: e.partUnknown(p, "functionCall")}
		if !synthetic(p, tc.GetId()) {
			fc.ID = tc.GetId()
		}
		w.FunctionCall = fc
	case *parleyv1.Part_ToolResult:
		fr, err := e.functionResponse(p, k.ToolResult, field)
		if err != nil {
			return Part{}, false, err
		}
		w.FunctionResponse = fr
	case *parleyv1.Part_ExecutableCode:
		ec := k.ExecutableCode
		w.ExecutableCode = &executableCode{Code: ec.GetCode(), ID: ec.GetId(), Unknown: e.partUnknown(p, "executableCode")}
		switch ec.GetLanguage() {
		case parleyv1.CodeLanguage_CODE_LANGUAGE_PYTHON:
			w.ExecutableCode.Language = "PYTHON"
		default:
			w.ExecutableCode.Language = "LANGUAGE_UNSPECIFIED"
		}
		if s, ok := markLanguage.String(p.GetExtensions()); ok && e.same {
			w.ExecutableCode.Language = s
		}
	case *parleyv1.Part_CodeExecutionResult:
		cr := k.CodeExecutionResult
		w.CodeExecutionResult = &codeExecutionResult{Outcome: wireOutcome(cr.GetOutcome()), Output: cr.GetOutput(), ID: cr.GetId(), Unknown: e.partUnknown(p, "codeExecutionResult")}
		if s, ok := markOutcome.String(p.GetExtensions()); ok && e.same {
			w.CodeExecutionResult.Outcome = s
		}
	case *parleyv1.Part_HostedToolCall, *parleyv1.Part_HostedToolResult:
		return Part{}, false, nil // another service's server tools
	case *parleyv1.Part_ItemReference:
		return Part{}, false, translate.Unsupported(thisDialect, field+".item_reference", "an item reference needs the stored response it points to")
	case nil:
		if v, ok := markBlock.Value(p.GetExtensions()); ok {
			var raw Part
			if err := jsonx.Unmarshal(v, &raw); err != nil {
				return Part{}, false, err
			}
			return raw, true, nil
		}
		// Another dialect's item kept whole for that dialect alone.
		e.dropped = append(e.dropped, field)
		return Part{}, false, nil
	}
	return w, true, nil
}

func (d responseDecoder) part(w *Part, cand, index int) (*parleyv1.Part, error) {
	dec := decoder{}
	p, err := dec.part(w, "", index)
	if err != nil {
		return nil, err
	}
	if tc := p.GetToolCall(); tc != nil && markSyntheticID.In(p.GetExtensions()) {
		tc.Id = syntheticID(d.id, cand, index)
	}
	if p.Signature != nil {
		p.Signature = translate.Stamp(p.Signature.GetValue(), thisDialect, d.t)
	}
	if r := p.GetReasoning(); r != nil && r.EncryptedContent != nil {
		r.EncryptedContent = translate.Stamp(r.EncryptedContent.GetValue(), thisDialect, d.t)
	}
	return p, nil
}

// part renders one answer part. Signatures another dialect made are
// sealed; every part here can carry one.
func (e clientEncoder) part(p *parleyv1.Part) (Part, bool, error) {
	w := Part{}
	if e.same {
		w.Unknown = jsonx.Take(p.GetExtensions(), thisDialect, "")
	}
	if sig := p.GetSignature(); sig != nil {
		w.ThoughtSignature = translate.SealOpaque(sig, thisDialect, translate.SealAsIs)
	}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		w.Text = ptr(k.Text.GetText())
		if e.same {
			if v, ok := jsonx.Value(p.GetExtensions(), thisDialect, "thought"); ok && string(v) == "false" {
				w.Thought = ptr(false)
				delete(w.Unknown, "thought")
			}
		}
	case *parleyv1.Part_Refusal:
		w.Text = ptr(k.Refusal.GetText())
	case *parleyv1.Part_Reasoning:
		r := k.Reasoning
		text := r.GetText()
		if text == "" && len(r.GetSummary()) > 0 {
			text = strings.Join(r.GetSummary(), "\n\n")
		}
		w.Text, w.Thought = ptr(text), ptr(true)
		if w.ThoughtSignature == "" && r.GetEncryptedContent() != nil {
			w.ThoughtSignature = translate.SealItem(r.GetEncryptedContent(), thisDialect, translate.SealEncrypted, p.GetItemId())
		}
	case *parleyv1.Part_Media:
		m := k.Media
		switch s := m.GetSource().(type) {
		case *parleyv1.Media_Data:
			w.InlineData = &blob{MimeType: m.GetMimeType(), Data: base64.StdEncoding.EncodeToString(s.Data)}
		case *parleyv1.Media_Uri:
			w.FileData = &fileData{MimeType: m.GetMimeType(), FileURI: s.Uri}
		case *parleyv1.Media_FileId:
			w.FileData = &fileData{MimeType: m.GetMimeType(), FileURI: s.FileId}
		}
		if e.same {
			if w.InlineData != nil {
				w.InlineData.Unknown = jsonx.Take(p.GetExtensions(), thisDialect, "inlineData")
			}
			if w.FileData != nil {
				w.FileData.Unknown = jsonx.Take(p.GetExtensions(), thisDialect, "fileData")
			}
		}
	case *parleyv1.Part_ToolCall:
		tc := k.ToolCall
		fc := &FunctionCall{Name: translate.CallName(tc), Args: toolArgs(tc.GetArguments())}
		if !e.same || !markSyntheticID.In(p.GetExtensions()) {
			fc.ID = tc.GetId()
		}
		if e.same {
			fc.Unknown = jsonx.Take(p.GetExtensions(), thisDialect, "functionCall")
		}
		w.FunctionCall = fc
	case *parleyv1.Part_ExecutableCode:
		ec := k.ExecutableCode
		w.ExecutableCode = &executableCode{Code: ec.GetCode(), ID: ec.GetId(), Language: "PYTHON"}
		if ec.GetLanguage() != parleyv1.CodeLanguage_CODE_LANGUAGE_PYTHON {
			w.ExecutableCode.Language = "LANGUAGE_UNSPECIFIED"
		}
		if e.same {
			w.ExecutableCode.Unknown = jsonx.Take(p.GetExtensions(), thisDialect, "executableCode")
		}
	case *parleyv1.Part_CodeExecutionResult:
		cr := k.CodeExecutionResult
		w.CodeExecutionResult = &codeExecutionResult{Outcome: wireOutcome(cr.GetOutcome()), Output: cr.GetOutput(), ID: cr.GetId()}
		if e.same {
			if s, ok := markOutcome.String(p.GetExtensions()); ok {
				w.CodeExecutionResult.Outcome = s
			}
			w.CodeExecutionResult.Unknown = jsonx.Take(p.GetExtensions(), thisDialect, "codeExecutionResult")
		}
	case nil:
		if v, ok := markBlock.Value(p.GetExtensions()); ok {
			var raw Part
			if err := jsonx.Unmarshal(v, &raw); err != nil {
				return Part{}, false, err
			}
			return raw, true, nil
		}
		return Part{}, false, nil
	default:
		// Hosted tool calls of another service, tool results and item
		// references have no place in an answer of this dialect.
		return Part{}, false, nil
	}
	return w, true, nil
}
