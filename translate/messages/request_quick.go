package messages

import (
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

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
	if b, ok = jsonx.List(m.Name(b, `"messages":[`), w.Messages, appendTurn); !ok {
		return b, false
	}
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
		if b, ok = jsonx.List(m.Name(b, `"tools":[`), w.Tools, appendTool); !ok {
			return b, false
		}
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

// appendTurn appends one turn of a request.
func appendTurn(b []byte, t *message) (_ []byte, ok bool) {
	var m jsonx.Members
	if b, ok = m.String(append(b, '{'), `"role":`, t.Role); !ok {
		return b, false
	}
	if b, ok = appendContent(m.Name(b, `"content":`), &t.Content); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, t.Unknown); !ok {
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
	return jsonx.List(append(b, '['), c.Blocks, appendBlock)
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

// readRequest reads a client's request into w as jsonx.Unmarshal would,
// without reflection: turns and a system prompt of blocks of every type,
// tools, and every setting, with members Parley does not model kept as
// they are. Anything it does not expect (a repeated member, a value of an
// unexpected kind) makes it return false with w zero, and the general way
// reads the request (TestQuickReadIsTheUnmarshalledRequest,
// FuzzQuickRequest).
func readRequest(data []byte, w *Request) (ok bool) {
	r := walkers.Get().(*jsonx.Walker)
	defer func() {
		r.Release()
		walkers.Put(r)
	}()
	r.Reset(data)
	q := quickEvent{r: r}
	*w = Request{}
	if err := r.Object(func(name []byte) error { return q.requestMember(name, w) }); err != nil || !r.End() {
		*w = Request{}
		return false
	}
	return true
}

func (q *quickEvent) requestMember(name []byte, w *Request) error {
	r := q.r
	var err error
	switch string(name) {
	case "model":
		w.Model, err = r.String()
	case "max_tokens":
		w.MaxTokens, err = q.r.IntPtr()
	case "messages":
		var isNull bool
		w.Messages = nil
		isNull, err = r.Array(func() error {
			w.Messages = append(w.Messages, message{})
			t := &w.Messages[len(w.Messages)-1]
			return r.Object(func(name []byte) error {
				var err error
				switch string(name) {
				case "role":
					t.Role, err = r.Word("user", "assistant")
				case "content":
					err = q.content(&t.Content)
				default:
					t.Unknown, err = q.r.Keep(t.Unknown, name)
				}
				return err
			})
		})
		if !isNull && w.Messages == nil {
			w.Messages = []message{}
		}
	case "system":
		if r.Null() {
			w.System = nil
			return nil
		}
		w.System = &Content{}
		err = q.content(w.System)
	case "metadata":
		if r.Null() {
			w.Metadata = nil
			return nil
		}
		md := &metadata{}
		w.Metadata = md
		err = r.Object(func(name []byte) error {
			var err error
			if string(name) == "user_id" {
				md.UserID, err = q.r.WordPtr()
			} else {
				md.Unknown, err = q.r.Keep(md.Unknown, name)
			}
			return err
		})
	case "stop_sequences":
		w.StopSequences, err = q.r.Strings()
	case "stream":
		w.Stream, err = r.BoolPtr(new(bool))
	case "temperature":
		w.Temperature, err = q.r.FloatPtr()
	case "top_k":
		w.TopK, err = q.r.IntPtr()
	case "top_p":
		w.TopP, err = q.r.FloatPtr()
	case "thinking":
		if r.Null() {
			w.Thinking = nil
			return nil
		}
		th := &thinking{}
		w.Thinking = th
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "type":
				th.Type, err = r.Word("enabled", "disabled", "adaptive")
			case "budget_tokens":
				th.BudgetTokens, err = q.r.IntPtr()
			default:
				th.Unknown, err = q.r.Keep(th.Unknown, name)
			}
			return err
		})
	case "tool_choice":
		if r.Null() {
			w.ToolChoice = nil
			return nil
		}
		tc := &toolChoice{}
		w.ToolChoice = tc
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "type":
				tc.Type, err = r.Word("auto", "any", "tool", "none")
			case "name":
				tc.Name, err = r.String()
			case "disable_parallel_tool_use":
				tc.DisableParallelToolUse, err = r.BoolPtr(new(bool))
			default:
				tc.Unknown, err = q.r.Keep(tc.Unknown, name)
			}
			return err
		})
	case "tools":
		var isNull bool
		w.Tools = nil
		isNull, err = r.Array(func() error {
			w.Tools = append(w.Tools, tool{})
			return q.tool(&w.Tools[len(w.Tools)-1])
		})
		if !isNull && w.Tools == nil {
			w.Tools = []tool{}
		}
	case "service_tier":
		w.ServiceTier, err = r.Word("auto", "standard_only")
	case "output_config":
		if r.Null() {
			w.OutputConfig = nil
			return nil
		}
		oc := &outputConfig{}
		w.OutputConfig = oc
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "effort":
				oc.Effort, err = r.Word("low", "medium", "high")
			case "format":
				if r.Null() {
					oc.Format = nil
					return nil
				}
				f := &outputFormat{}
				oc.Format = f
				err = r.Object(func(name []byte) error {
					var err error
					switch string(name) {
					case "type":
						f.Type, err = r.Word("json_schema")
					case "schema":
						f.Schema, err = q.r.Copy()
					default:
						f.Unknown, err = q.r.Keep(f.Unknown, name)
					}
					return err
				})
			default:
				oc.Unknown, err = q.r.Keep(oc.Unknown, name)
			}
			return err
		})
	default:
		w.Unknown, err = q.r.Keep(w.Unknown, name)
	}
	return err
}

// content reads a turn's or the system prompt's content: a string or a
// list of blocks (null is an error, which the general way reports).
func (q *quickEvent) content(c *Content) error {
	r := q.r
	switch r.Kind() {
	case '"':
		s, err := r.String()
		*c = Content{String: true, Text: s}
		return err
	case '[':
	default:
		return jsonx.ErrForm
	}
	*c = Content{Blocks: []Block{}}
	_, err := r.Array(func() error {
		c.Blocks = append(c.Blocks, Block{})
		return q.anyBlock(&c.Blocks[len(c.Blocks)-1])
	})
	return err
}

// tool reads a tool, custom or built in.
func (q *quickEvent) tool(t *tool) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			t.Type, err = r.Word("custom")
		case "name":
			t.Name, err = r.String()
		case "description":
			t.Description, err = q.r.WordPtr()
		case "input_schema":
			// The body's own bytes: decoding reads them once more, into
			// the canonical tool's string or its kept member (readTool),
			// and nothing keeps the wire tool.
			t.InputSchema, err = q.r.Raw()
		case "strict":
			t.Strict, err = r.BoolPtr(new(bool))
		case "cache_control":
			t.CacheControl, err = q.cacheControl()
		case "display_width_px":
			t.DisplayWidthPx, err = q.r.IntPtr()
		case "display_height_px":
			t.DisplayHeightPx, err = q.r.IntPtr()
		case "display_number":
			t.DisplayNumber, err = q.r.IntPtr()
		case "max_characters":
			t.MaxCharacters, err = q.r.IntPtr()
		case "max_uses":
			t.MaxUses, err = q.r.IntPtr()
		case "allowed_domains":
			t.AllowedDomains, err = q.r.Strings()
		case "blocked_domains":
			t.BlockedDomains, err = q.r.Strings()
		case "user_location":
			if r.Null() {
				t.UserLocation = nil
				return nil
			}
			u := &userLocation{}
			t.UserLocation = u
			err = r.Object(func(name []byte) error {
				var err error
				switch string(name) {
				case "type":
					u.Type, err = r.Word("approximate")
				case "city":
					u.City, err = r.String()
				case "region":
					u.Region, err = r.String()
				case "country":
					u.Country, err = r.String()
				case "timezone":
					u.Timezone, err = r.String()
				default:
					u.Unknown, err = q.r.Keep(u.Unknown, name)
				}
				return err
			})
		default:
			t.Unknown, err = q.r.Keep(t.Unknown, name)
		}
		return err
	})
}
