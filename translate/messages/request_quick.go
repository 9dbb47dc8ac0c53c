package messages

import (
	"bytes"
	"sync"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// marshalRequest writes w: by hand where appendRequest can, else with
// jsonx.Marshal.
func marshalRequest(w *Request) ([]byte, error) {
	buf := requestBuffers.Get().(*[]byte)
	b, ok := appendRequest((*buf)[:0], w)
	var out []byte
	if ok {
		out = bytes.Clone(b)
	}
	if cap(b) <= maxPooledRequest {
		*buf = b[:0]
		requestBuffers.Put(buf)
	}
	if ok {
		return out, nil
	}
	return jsonx.Marshal(w)
}

// requestBuffers are where appendRequest writes, so that a body's bytes
// are allocated once, at their size; a buffer grown past
// maxPooledRequest (a long conversation) is let go.
var requestBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledRequest = 256 << 10

// appendRequest appends the request w as jsonx.Marshal writes it, without
// reflection (TestQuickRequestIsTheMarshalledRequest): turns of any
// blocks appendBlock writes, the system prompt, custom tools and every
// setting. ok is false for what it leaves to jsonx.Marshal: a built-in
// tool's settings, more than one kept member of an object, and what
// Marshal would refuse.
func appendRequest(b []byte, w *Request) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"model":`, w.Model); !ok {
		return b, false
	}
	b = m.Int(b, `"max_tokens":`, w.MaxTokens)
	b = m.Name(b, `"messages":[`)
	for i := range w.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		t := &w.Messages[i]
		var tm jsonx.Members
		if b, ok = tm.String(append(b, '{'), `"role":`, t.Role); !ok {
			return b, false
		}
		if b, ok = appendContent(tm.Name(b, `"content":`), &t.Content); !ok {
			return b, false
		}
		if b, ok = tm.Kept(b, t.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if w.System != nil {
		if b, ok = appendContent(m.Name(b, `"system":`), w.System); !ok {
			return b, false
		}
	}
	if md := w.Metadata; md != nil {
		b = m.Name(b, `"metadata":{`)
		var mm jsonx.Members
		if md.UserID != nil {
			if b, ok = mm.String(b, `"user_id":`, *md.UserID); !ok {
				return b, false
			}
		}
		if b, ok = mm.Kept(b, md.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if w.StopSequences != nil {
		if b, ok = appendStrings(m.Name(b, `"stop_sequences":[`), w.StopSequences); !ok {
			return b, false
		}
	}
	b = m.Bool(b, `"stream":`, w.Stream)
	if b, ok = m.Float(b, `"temperature":`, w.Temperature); !ok {
		return b, false
	}
	b = m.Int(b, `"top_k":`, w.TopK)
	if b, ok = m.Float(b, `"top_p":`, w.TopP); !ok {
		return b, false
	}
	if th := w.Thinking; th != nil {
		var tm jsonx.Members
		if b, ok = tm.String(append(m.Name(b, `"thinking":`), '{'), `"type":`, th.Type); !ok {
			return b, false
		}
		b = tm.Int(b, `"budget_tokens":`, th.BudgetTokens)
		if b, ok = tm.Kept(b, th.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if tc := w.ToolChoice; tc != nil {
		var cm jsonx.Members
		if b, ok = cm.String(append(m.Name(b, `"tool_choice":`), '{'), `"type":`, tc.Type); !ok {
			return b, false
		}
		if tc.Name != "" {
			if b, ok = cm.String(b, `"name":`, tc.Name); !ok {
				return b, false
			}
		}
		b = cm.Bool(b, `"disable_parallel_tool_use":`, tc.DisableParallelToolUse)
		if b, ok = cm.Kept(b, tc.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if w.Tools != nil {
		b = m.Name(b, `"tools":[`)
		for i := range w.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendTool(b, &w.Tools[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	if w.ServiceTier != "" {
		if b, ok = m.String(b, `"service_tier":`, w.ServiceTier); !ok {
			return b, false
		}
	}
	if oc := w.OutputConfig; oc != nil {
		b = m.Name(b, `"output_config":{`)
		var om jsonx.Members
		if oc.Effort != "" {
			if b, ok = om.String(b, `"effort":`, oc.Effort); !ok {
				return b, false
			}
		}
		if f := oc.Format; f != nil {
			var fm jsonx.Members
			if b, ok = fm.String(append(om.Name(b, `"format":`), '{'), `"type":`, f.Type); !ok {
				return b, false
			}
			if f.Schema != nil {
				if b, ok = jsonx.AppendRaw(fm.Name(b, `"schema":`), f.Schema); !ok {
					return b, false
				}
			}
			if b, ok = fm.Kept(b, f.Unknown); !ok {
				return b, false
			}
			b = append(b, '}')
		}
		if b, ok = om.Kept(b, oc.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if b, ok = m.Kept(b, w.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendContent appends a turn's or the system prompt's content: a
// string, or a list of blocks.
func appendContent(b []byte, c *Content) (_ []byte, ok bool) {
	if c.String {
		return jsonx.AppendQuote(b, c.Text)
	}
	b = append(b, '[')
	for i := range c.Blocks {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendBlock(b, &c.Blocks[i]); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// appendTool appends a custom or a built-in tool.
func appendTool(b []byte, t *tool) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if t.Type != "" {
		if b, ok = m.String(b, `"type":`, t.Type); !ok {
			return b, false
		}
	}
	if b, ok = m.String(b, `"name":`, t.Name); !ok {
		return b, false
	}
	if t.Description != nil {
		if b, ok = m.String(b, `"description":`, *t.Description); !ok {
			return b, false
		}
	}
	if t.InputSchema != nil {
		if b, ok = jsonx.AppendRaw(m.Name(b, `"input_schema":`), t.InputSchema); !ok {
			return b, false
		}
	}
	b = m.Bool(b, `"strict":`, t.Strict)
	if t.CacheControl != nil {
		if b, ok = appendCacheControl(m.Name(b, `"cache_control":`), t.CacheControl); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"display_width_px":`, t.DisplayWidthPx)
	b = m.Int(b, `"display_height_px":`, t.DisplayHeightPx)
	b = m.Int(b, `"display_number":`, t.DisplayNumber)
	b = m.Int(b, `"max_characters":`, t.MaxCharacters)
	b = m.Int(b, `"max_uses":`, t.MaxUses)
	for _, f := range [...]struct {
		name string
		list []string
	}{{`"allowed_domains":[`, t.AllowedDomains}, {`"blocked_domains":[`, t.BlockedDomains}} {
		if f.list != nil {
			if b, ok = appendStrings(m.Name(b, f.name), f.list); !ok {
				return b, false
			}
		}
	}
	if u := t.UserLocation; u != nil {
		var um jsonx.Members
		if b, ok = um.String(append(m.Name(b, `"user_location":`), '{'), `"type":`, u.Type); !ok {
			return b, false
		}
		for _, f := range [...]struct{ name, v string }{{`"city":`, u.City}, {`"region":`, u.Region}, {`"country":`, u.Country}, {`"timezone":`, u.Timezone}} {
			if f.v != "" {
				if b, ok = um.String(b, f.name, f.v); !ok {
					return b, false
				}
			}
		}
		if b, ok = um.Kept(b, u.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if b, ok = m.Kept(b, t.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendStrings appends the strings of a list opened before it, and closes
// it.
func appendStrings(b []byte, list []string) (_ []byte, ok bool) {
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = jsonx.AppendQuote(b, s); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}
