package generatecontent

import (
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Replies written without reflection: the same bytes jsonx.Marshal writes
// (TestRepliesAreTheMarshalledReplies, FuzzReplyWrite) for what a stream
// toward a client is made of: candidates whose content holds text,
// thoughts, calls and media (and code, and a function's response, which
// requests hold), their finish, index and kept members, and the reply's
// usage, model and id. What they do not model (safety ratings,
// citations, grounding, log probabilities, prompt feedback, an error)
// they decline, and the reply is marshalled. A stream's last chunk would otherwise be marshalled by
// reflection deep in its loop, past a handler's 8 KB stack
// (TestStreamsRunOnSmallStacks).

// appendReply appends r as jsonx.Marshal writes it; ok is false for what
// it leaves to Marshal.
func appendReply(b []byte, r *Response) (_ []byte, ok bool) {
	if r.PromptFeedback != nil || r.Error != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if r.Candidates != nil {
		if b, ok = jsonx.AppendList(m.Name(b, `"candidates":`), r.Candidates, appendCandidate); !ok {
			return b, false
		}
	}
	if r.UsageMetadata != nil {
		if b, ok = appendUsage(m.Name(b, `"usageMetadata":`), r.UsageMetadata); !ok {
			return b, false
		}
	}
	if b, ok = m.NonEmpty(b, `"modelVersion":`, r.ModelVersion); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"responseId":`, r.ResponseID); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, r.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendCandidate appends a candidate: its content, finish, token count
// and index.
func appendCandidate(b []byte, c *candidate) (_ []byte, ok bool) {
	if c.SafetyRatings != nil || c.CitationMetadata != nil || c.GroundingAttributions != nil ||
		c.GroundingMetadata != nil || c.LogprobsResult != nil || c.URLContextMetadata != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if c.Content != nil {
		if b, ok = appendContent(m.Name(b, `"content":`), c.Content); !ok {
			return b, false
		}
	}
	if b, ok = m.NonEmpty(b, `"finishReason":`, c.FinishReason); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"finishMessage":`, c.FinishMessage); !ok {
		return b, false
	}
	b = m.Int(b, `"tokenCount":`, c.TokenCount)
	if b, ok = m.Float(b, `"avgLogprobs":`, c.AvgLogprobs); !ok {
		return b, false
	}
	b = m.Int(b, `"index":`, c.Index)
	if b, ok = m.Kept(b, c.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendContent appends a content: its role and parts (an empty list
// when it has none, as Marshal writes a nil slice).
func appendContent(b []byte, c *Content) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.NonEmpty(b, `"role":`, c.Role); !ok {
		return b, false
	}
	if b, ok = jsonx.AppendList(m.Name(b, `"parts":`), c.Parts, appendPart); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, c.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendPart appends a part of text or thought, a call or its response,
// inline or referenced media, or code and its result.
func appendPart(b []byte, p *Part) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if p.Text != nil {
		if b, ok = m.String(b, `"text":`, *p.Text); !ok {
			return b, false
		}
	}
	b = m.Bool(b, `"thought":`, p.Thought)
	if b, ok = m.NonEmpty(b, `"thoughtSignature":`, p.ThoughtSignature); !ok {
		return b, false
	}
	if d := p.InlineData; d != nil {
		var dm jsonx.Members
		b = append(m.Name(b, `"inlineData":`), '{')
		if b, ok = dm.String(b, `"mimeType":`, d.MimeType); !ok {
			return b, false
		}
		if b, ok = dm.String(b, `"data":`, d.Data); !ok {
			return b, false
		}
		if b, ok = dm.Kept(b, d.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if f := p.FileData; f != nil {
		var fm jsonx.Members
		b = append(m.Name(b, `"fileData":`), '{')
		if b, ok = fm.NonEmpty(b, `"mimeType":`, f.MimeType); !ok {
			return b, false
		}
		if b, ok = fm.String(b, `"fileUri":`, f.FileURI); !ok {
			return b, false
		}
		if b, ok = fm.Kept(b, f.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if p.FunctionCall != nil {
		if b, ok = appendCall(m.Name(b, `"functionCall":`), p.FunctionCall); !ok {
			return b, false
		}
	}
	if p.FunctionResponse != nil {
		if b, ok = appendFunctionResponse(m.Name(b, `"functionResponse":`), p.FunctionResponse); !ok {
			return b, false
		}
	}
	if c := p.ExecutableCode; c != nil {
		if b, ok = appendCode(m.Name(b, `"executableCode":`), `"language":`, c.Language, `"code":`, c.Code, c.ID, c.Unknown, false); !ok {
			return b, false
		}
	}
	if r := p.CodeExecutionResult; r != nil {
		if b, ok = appendCode(m.Name(b, `"codeExecutionResult":`), `"outcome":`, r.Outcome, `"output":`, r.Output, r.ID, r.Unknown, true); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, p.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendCall appends a whole call: its id, name and arguments.
func appendCall(b []byte, c *FunctionCall) (_ []byte, ok bool) {
	if c.PartialArgs != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.NonEmpty(b, `"id":`, c.ID); !ok {
		return b, false
	}
	if b, ok = m.String(b, `"name":`, c.Name); !ok {
		return b, false
	}
	if len(c.Args) > 0 {
		if b, ok = jsonx.AppendRaw(m.Name(b, `"args":`), c.Args); !ok {
			return b, false
		}
	}
	b = m.Bool(b, `"willContinue":`, c.WillContinue)
	if b, ok = m.Kept(b, c.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendFunctionResponse appends a client's answer to a call; one with
// media (parts) is left to Marshal.
func appendFunctionResponse(b []byte, f *functionResponse) (_ []byte, ok bool) {
	if f.Parts != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.NonEmpty(b, `"id":`, f.ID); !ok {
		return b, false
	}
	if b, ok = m.String(b, `"name":`, f.Name); !ok {
		return b, false
	}
	if len(f.Response) > 0 {
		if b, ok = jsonx.AppendRaw(m.Name(b, `"response":`), f.Response); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, f.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendCode appends code the model wrote (its language, always-written
// code and id) or the result of running it (its outcome, output and id,
// the output omitted when empty: omitSecond).
func appendCode(b []byte, first, firstValue, second, secondValue, id string, kept jsonx.Unknown, omitSecond bool) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.NonEmpty(b, first, firstValue); !ok {
		return b, false
	}
	if omitSecond {
		b, ok = m.NonEmpty(b, second, secondValue)
	} else {
		b, ok = m.String(b, second, secondValue)
	}
	if !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"id":`, id); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, kept); !ok {
		return b, false
	}
	return append(b, '}'), true
}
