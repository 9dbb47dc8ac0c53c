package responses

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The events of a stream toward a client, written without reflection:
// the same bytes jsonx.Marshal writes (TestEventsAreTheMarshalledEvents,
// FuzzEventWrite), for the events a stream is made of: the snapshots and
// their response, the items and parts added and done, the deltas and the
// texts done, annotations. What a writer here does not model (a failed
// response's error) it declines, and emit marshals the event.

// appendEvent appends e as jsonx.Marshal writes it; ok is false for what
// it leaves to Marshal.
func appendEvent(b []byte, e *event) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, e.Type); !ok {
		return b, false
	}
	b = m.Int(b, `"sequence_number":`, e.SequenceNumber)
	if e.Response != nil {
		if b, ok = appendResponse(m.Name(b, `"response":`), e.Response); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"output_index":`, e.OutputIndex)
	if e.Item != nil {
		if b, ok = appendItem(m.Name(b, `"item":`), e.Item); !ok {
			return b, false
		}
	}
	if b, ok = m.NonEmpty(b, `"item_id":`, e.ItemID); !ok {
		return b, false
	}
	b = m.Int(b, `"content_index":`, e.ContentIndex)
	b = m.Int(b, `"summary_index":`, e.SummaryIndex)
	if e.Part != nil {
		if b, ok = appendContentPart(m.Name(b, `"part":`), e.Part); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct {
		name string
		s    *string
	}{{`"delta":`, e.Delta}, {`"text":`, e.Text}, {`"arguments":`, e.Arguments}, {`"input":`, e.Input}, {`"refusal":`, e.Refusal}} {
		if b, ok = omitNilString(&m, b, f.name, f.s); !ok {
			return b, false
		}
	}
	if e.Annotation != nil {
		if b, ok = appendAnnotation(m.Name(b, `"annotation":`), e.Annotation); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"annotation_index":`, e.AnnotationIdx)
	if b, ok = m.Raw(b, `"logprobs":`, e.Logprobs); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"obfuscation":`, e.Obfuscation); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"code":`, e.Code); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"message":`, e.Message); !ok {
		return b, false
	}
	if b, ok = omitNilString(&m, b, `"param":`, e.Param); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, e.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendResponse appends a response (a snapshot's) as jsonx.Marshal
// writes it; a failed response's error it leaves to Marshal.
func appendResponse(b []byte, r *Response) (_ []byte, ok bool) {
	if r.Error != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"id":`, r.ID); !ok {
		return b, false
	}
	if b, ok = m.String(b, `"object":`, r.Object); !ok {
		return b, false
	}
	b = strconv.AppendInt(m.Name(b, `"created_at":`), r.CreatedAt, 10)
	if b, ok = m.NonEmpty(b, `"status":`, r.Status); !ok {
		return b, false
	}
	b = m.Name(b, `"error":null`)
	if d := r.IncompleteDetails; d == nil {
		b = m.Name(b, `"incomplete_details":null`)
	} else {
		var dm jsonx.Members
		if b, ok = dm.String(append(m.Name(b, `"incomplete_details":`), '{'), `"reason":`, d.Reason); !ok {
			return b, false
		}
		if b, ok = dm.Kept(b, d.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if b, ok = echoMember(&m, b, `"instructions":`, r.Instructions, r.echoWritten); !ok {
		return b, false
	}
	if b, ok = echoMember(&m, b, `"max_output_tokens":`, r.MaxOutputTokens, r.echoWritten); !ok {
		return b, false
	}
	if b, ok = m.String(b, `"model":`, r.Model); !ok {
		return b, false
	}
	// A list, nil or not.
	if b, ok = jsonx.List(m.Name(b, `"output":[`), r.Output, appendItem); !ok {
		return b, false
	}
	if b, ok = echoMember(&m, b, `"parallel_tool_calls":`, r.ParallelToolCalls, r.echoWritten); !ok {
		return b, false
	}
	if r.PreviousResponseID == nil {
		b = m.Name(b, `"previous_response_id":null`)
	} else if b, ok = m.String(b, `"previous_response_id":`, *r.PreviousResponseID); !ok {
		return b, false
	}
	for _, f := range [...]struct {
		name string
		v    jsontext.Value
	}{
		{`"reasoning":`, r.Reasoning}, {`"store":`, r.Store}, {`"temperature":`, r.Temperature}, {`"text":`, r.Text},
		{`"tool_choice":`, r.ToolChoice}, {`"tools":`, r.Tools}, {`"top_p":`, r.TopP}, {`"truncation":`, r.Truncation},
	} {
		if b, ok = echoMember(&m, b, f.name, f.v, r.echoWritten); !ok {
			return b, false
		}
	}
	if r.Usage == nil {
		b = m.Name(b, `"usage":null`)
	} else if b, ok = appendUsage(m.Name(b, `"usage":`), r.Usage); !ok {
		return b, false
	}
	if b, ok = echoMember(&m, b, `"user":`, r.User, r.echoWritten); !ok {
		return b, false
	}
	if b, ok = echoMember(&m, b, `"metadata":`, r.Metadata, r.echoWritten); !ok {
		return b, false
	}
	if b, ok = omitNilString(&m, b, `"service_tier":`, r.ServiceTier); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, r.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// echoMember appends a member that echoes the request: as it is when the
// echo was written as AppendRaw writes it (Response.echoWritten), else
// through AppendRaw. An agent's echo is tens of kilobytes of tools, and
// a stream's snapshots repeat it: walked once, when the echo is made, it
// is copied after that.
func echoMember(m *jsonx.Members, b []byte, name string, v jsontext.Value, written bool) (_ []byte, ok bool) {
	if !written {
		return m.Raw(b, name, v)
	}
	if v == nil {
		return b, true
	}
	return append(m.Name(b, name), v...), true
}

// appendUsage appends a response's usage as jsonx.Marshal writes it.
func appendUsage(b []byte, u *usage) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	b = strconv.AppendInt(m.Name(b, `"input_tokens":`), u.InputTokens, 10)
	if d := u.InputTokensDetails; d != nil {
		if b, ok = appendCount(m.Name(b, `"input_tokens_details":`), `"cached_tokens":`, d.CachedTokens, d.Unknown); !ok {
			return b, false
		}
	}
	b = strconv.AppendInt(m.Name(b, `"output_tokens":`), u.OutputTokens, 10)
	if d := u.OutputTokensDetails; d != nil {
		if b, ok = appendCount(m.Name(b, `"output_tokens_details":`), `"reasoning_tokens":`, d.ReasoningTokens, d.Unknown); !ok {
			return b, false
		}
	}
	b = strconv.AppendInt(m.Name(b, `"total_tokens":`), u.TotalTokens, 10)
	if b, ok = m.Kept(b, u.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendCount appends a usage detail: one count and the members kept.
func appendCount(b []byte, name string, n int64, kept jsonx.Unknown) (_ []byte, ok bool) {
	var m jsonx.Members
	b = strconv.AppendInt(m.Name(append(b, '{'), name), n, 10)
	if b, ok = m.Kept(b, kept); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendItem appends an output item as jsonx.Marshal writes it.
func appendItem(b []byte, it *Item) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.NonEmpty(b, `"type":`, it.Type); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"id":`, it.ID); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"status":`, it.Status); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"role":`, it.Role); !ok {
		return b, false
	}
	if c := it.Content; c != nil {
		if c.String {
			b, ok = m.String(b, `"content":`, c.Text)
		} else {
			b, ok = jsonx.List(m.Name(b, `"content":[`), c.Parts, appendContentPart)
		}
		if !ok {
			return b, false
		}
	}
	if b, ok = m.NonEmpty(b, `"call_id":`, it.CallID); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"name":`, it.Name); !ok {
		return b, false
	}
	if b, ok = omitNilString(&m, b, `"arguments":`, it.Arguments); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"output":`, it.Output); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"namespace":`, it.Namespace); !ok {
		return b, false
	}
	if it.Summary != nil {
		if b, ok = jsonx.List(m.Name(b, `"summary":[`), it.Summary, appendSummary); !ok {
			return b, false
		}
	}
	if b, ok = omitNilString(&m, b, `"encrypted_content":`, it.EncryptedContent); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"action":`, it.Action); !ok {
		return b, false
	}
	if it.Queries != nil {
		if b, ok = jsonx.List(m.Name(b, `"queries":[`), it.Queries, appendString); !ok {
			return b, false
		}
	}
	if b, ok = m.Raw(b, `"results":`, it.Results); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, it.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendContentPart appends a content part as jsonx.Marshal writes it.
func appendContentPart(b []byte, p *ContentPart) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, p.Type); !ok {
		return b, false
	}
	if b, ok = omitNilString(&m, b, `"text":`, p.Text); !ok {
		return b, false
	}
	if p.Annotations != nil {
		if b, ok = jsonx.List(m.Name(b, `"annotations":[`), p.Annotations, appendAnnotation); !ok {
			return b, false
		}
	}
	if b, ok = omitNilString(&m, b, `"image_url":`, p.ImageURL); !ok {
		return b, false
	}
	if b, ok = omitNilString(&m, b, `"file_id":`, p.FileID); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"detail":`, p.Detail); !ok {
		return b, false
	}
	for _, f := range [...]struct {
		name string
		s    *string
	}{{`"file_data":`, p.FileData}, {`"file_url":`, p.FileURL}, {`"filename":`, p.Filename}, {`"refusal":`, p.Refusal}} {
		if b, ok = omitNilString(&m, b, f.name, f.s); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, p.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendAnnotation appends a citation on output text.
func appendAnnotation(b []byte, a *annotation) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, a.Type); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"file_id":`, a.FileID); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"filename":`, a.Filename); !ok {
		return b, false
	}
	b = m.Int(b, `"index":`, a.Index)
	if b, ok = m.NonEmpty(b, `"url":`, a.URL); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"title":`, a.Title); !ok {
		return b, false
	}
	b = m.Int(b, `"start_index":`, a.StartIndex)
	b = m.Int(b, `"end_index":`, a.EndIndex)
	if b, ok = m.Kept(b, a.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendSummary appends a reasoning item's summary part.
func appendSummary(b []byte, s *summaryPart) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, s.Type); !ok {
		return b, false
	}
	if b, ok = m.String(b, `"text":`, s.Text); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, s.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

func appendString(b []byte, s *string) ([]byte, bool) { return jsonx.AppendQuote(b, *s) }

// omitNilString appends a string member unless it is nil.
func omitNilString(m *jsonx.Members, b []byte, name string, v *string) ([]byte, bool) {
	if v == nil {
		return b, true
	}
	return m.String(b, name, *v)
}
