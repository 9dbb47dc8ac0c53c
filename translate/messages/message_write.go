package messages

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// appendMessage appends m as jsonx.Marshal writes it: a message_start's
// message, or a whole reply (appendBlock says which blocks it writes). ok
// is false for what it leaves to jsonx.Marshal.
func appendMessage(b []byte, m *Response) (_ []byte, ok bool) {
	b = append(b, '{')
	var ms jsonx.Members
	for _, f := range [...]struct{ name, v string }{{`"id":`, m.ID}, {`"type":`, m.Type}, {`"role":`, m.Role}, {`"model":`, m.Model}} {
		if b, ok = ms.String(b, f.name, f.v); !ok {
			return b, false
		}
	}
	// A list, nil or not.
	if b, ok = jsonx.List(ms.Name(b, `"content":[`), m.Content, appendBlock); !ok {
		return b, false
	}
	if b, ok = appendNullable(ms.Name(b, `"stop_reason":`), m.StopReason); !ok {
		return b, false
	}
	if b, ok = appendNullable(ms.Name(b, `"stop_sequence":`), m.StopSequence); !ok {
		return b, false
	}
	if m.Usage != nil {
		if b, ok = appendUsage(ms.Name(b, `"usage":`), m.Usage); !ok {
			return b, false
		}
	}
	if b, ok = ms.Kept(b, m.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendBlock appends a content block as jsonx.Marshal writes it; ok is
// false for what Marshal would refuse.
func appendBlock(b []byte, k *Block) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, k.Type); !ok {
		return b, false
	}
	for _, f := range [...]struct {
		name string
		s    *string
		raw  jsontext.Value
	}{
		{name: `"text":`, s: k.Text}, {name: `"citations":`, raw: k.Citations}, {name: `"source":`, raw: k.Source},
		{name: `"title":`, s: k.Title}, {name: `"context":`, s: k.Context},
		{name: `"id":`, s: omitEmpty(&k.ID)}, {name: `"name":`, s: omitEmpty(&k.Name)}, {name: `"input":`, raw: k.Input},
		{name: `"tool_use_id":`, s: omitEmpty(&k.ToolUseID)}, {name: `"content":`, raw: k.Content},
	} {
		switch {
		case f.s != nil:
			if b, ok = m.String(b, f.name, *f.s); !ok {
				return b, false
			}
		case f.raw != nil:
			if b, ok = jsonx.AppendRaw(m.Name(b, f.name), f.raw); !ok {
				return b, false
			}
		}
	}
	if k.IsError != nil {
		b = strconv.AppendBool(m.Name(b, `"is_error":`), *k.IsError)
	}
	for _, f := range [...]struct {
		name string
		s    *string
	}{{`"thinking":`, k.Thinking}, {`"signature":`, k.Signature}, {`"data":`, omitEmpty(&k.Data)}} {
		if f.s != nil {
			if b, ok = m.String(b, f.name, *f.s); !ok {
				return b, false
			}
		}
	}
	if k.CacheControl != nil {
		if b, ok = appendCacheControl(m.Name(b, `"cache_control":`), k.CacheControl); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, k.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendCacheControl appends a prompt-caching breakpoint.
func appendCacheControl(b []byte, c *cacheControl) (_ []byte, ok bool) {
	var m jsonx.Members
	if b, ok = m.String(append(b, '{'), `"type":`, c.Type); !ok {
		return b, false
	}
	if c.TTL != "" {
		if b, ok = m.String(b, `"ttl":`, c.TTL); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, c.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// omitEmpty is s, or nil when it is empty: a string member omitzero
// leaves out.
func omitEmpty(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}
