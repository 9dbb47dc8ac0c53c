package chatcompletions

import (
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// readRequest reads a client's request into w as jsonx.Unmarshal would,
// without reflection, handing each message to w.Messages.Fn as it is
// read: turns of text and images with their tool calls, function tools,
// a tool choice, a response format and the common settings, with members
// Parley does not model kept as they are. Anything else (audio and file
// parts, logprobs, logit bias, a repeated member, a value of an
// unexpected kind) makes it return false, and the general way reads the
// whole body again from the start: Reset clears what Fn built
// (TestQuickRequestDecodesAsTheGeneralWay, FuzzQuickRequest).
func readRequest(data []byte, w *requestIn) (ok bool) {
	cr := chunkReaders.Get().(*chunkReader)
	defer func() {
		cr.Release()
		chunkReaders.Put(cr)
	}()
	r := requestReader{replyReader{&cr.Walker}}
	r.Reset(data)
	if err := r.Object(func(name []byte) error { return r.member(name, w) }); err != nil || !r.End() {
		w.Request = Request{}
		return false
	}
	return true
}

// requestReader reads a client's request; what it reads outlives the
// Walker, as a reply's does.
type requestReader struct{ replyReader }

func (r requestReader) member(name []byte, w *requestIn) error {
	var err error
	q := &w.Request
	switch string(name) {
	case "model":
		q.Model, err = r.String()
	case "messages":
		err = r.messages(&w.Messages)
	case "tools":
		var isNull bool
		q.Tools = nil
		isNull, err = r.Array(func() error {
			q.Tools = append(q.Tools, tool{})
			return r.tool(&q.Tools[len(q.Tools)-1])
		})
		if !isNull && q.Tools == nil {
			q.Tools = []tool{}
		}
	case "tool_choice":
		err = r.toolChoice(q)
	case "response_format":
		if r.Null() {
			q.ResponseFormat = nil
			return nil
		}
		f := &responseFormat{}
		q.ResponseFormat = f
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "type":
				f.Type, err = r.Word("text", "json_object", "json_schema")
			case "json_schema":
				if r.Null() {
					f.JSONSchema = nil
					return nil
				}
				js := &jsonSchema{}
				f.JSONSchema = js
				err = r.Object(func(name []byte) error {
					var err error
					switch string(name) {
					case "name":
						js.Name, err = r.String()
					case "description":
						js.Description, err = r.WordPtr()
					case "schema":
						js.Schema, err = r.Copy()
					case "strict":
						js.Strict, err = r.BoolPtr(new(bool))
					default:
						js.Unknown, err = r.Keep(js.Unknown, name)
					}
					return err
				})
			default:
				f.Unknown, err = r.Keep(f.Unknown, name)
			}
			return err
		})
	case "parallel_tool_calls":
		q.ParallelToolCalls, err = r.BoolPtr(new(bool))
	case "max_tokens":
		q.MaxTokens, err = r.IntPtr()
	case "max_completion_tokens":
		q.MaxCompletionTokens, err = r.IntPtr()
	case "n":
		q.N, err = r.IntPtr()
	case "seed":
		q.Seed, err = r.IntPtr()
	case "stop":
		err = r.stop(q)
	case "presence_penalty":
		q.PresencePenalty, err = r.FloatPtr()
	case "frequency_penalty":
		q.FrequencyPenalty, err = r.FloatPtr()
	case "temperature":
		q.Temperature, err = r.FloatPtr()
	case "top_p":
		q.TopP, err = r.FloatPtr()
	case "reasoning_effort":
		q.ReasoningEffort, err = r.Word("minimal", "low", "medium", "high")
	case "verbosity":
		q.Verbosity, err = r.Word("low", "medium", "high")
	case "stream":
		q.Stream, err = r.BoolPtr(new(bool))
	case "stream_options":
		if r.Null() {
			q.StreamOptions = nil
			return nil
		}
		o := &streamOptions{}
		q.StreamOptions = o
		err = r.Object(func(name []byte) error {
			var err error
			if string(name) == "include_usage" {
				o.IncludeUsage, err = r.BoolPtr(new(bool))
			} else {
				o.Unknown, err = r.Keep(o.Unknown, name)
			}
			return err
		})
	case "user":
		q.User, err = r.WordPtr()
	case "prompt_cache_key":
		q.PromptCacheKey, err = r.WordPtr()
	case "metadata":
		if r.Null() {
			q.Metadata = nil
			return nil
		}
		q.Metadata = map[string]string{}
		err = r.Object(func(name []byte) error {
			v, err := r.String()
			q.Metadata[string(name)] = v
			return err
		})
	case "service_tier":
		q.ServiceTier, err = r.Word("auto", "default", "flex", "priority", "scale")
	case "store":
		q.Store, err = r.BoolPtr(new(bool))
	case "logprobs", "top_logprobs", "logit_bias", "modalities", "audio", "web_search_options":
		return jsonx.ErrForm // the general way reads these
	default:
		q.Unknown, err = r.Keep(q.Unknown, name)
	}
	return err
}

// messages reads the turns as jsonx.Each does: each to Fn as it is read.
func (r requestReader) messages(e *jsonx.Each[message]) error {
	if r.Kind() != '[' && r.Kind() != 'n' {
		return jsonx.ErrForm
	}
	e.N, e.Err = 0, nil
	if e.Reset != nil {
		e.Reset()
	}
	var m message
	_, err := r.Array(func() error {
		m = message{}
		if err := r.Object(func(name []byte) error { return r.turn(name, &m) }); err != nil {
			return err
		}
		if e.Err == nil {
			e.Err = e.Fn(e.N, &m)
		}
		e.N++
		return nil
	})
	return err
}

// turn reads a member of a message, as a reply's message is read, but
// for content parts of text and images, which requests have.
func (r requestReader) turn(name []byte, m *message) error {
	switch string(name) {
	case "role":
		var err error
		m.Role, err = r.Word("system", "developer", "user", "assistant", "tool")
		return err
	case "content":
		if r.Kind() == '[' {
			c := &Content{Parts: []ContentPart{}}
			m.Content = c
			_, err := r.Array(func() error {
				c.Parts = append(c.Parts, ContentPart{})
				return r.part(&c.Parts[len(c.Parts)-1])
			})
			return err
		}
	}
	return r.message(name, m)
}

// part reads a content part of text, a refusal or an image.
func (r requestReader) part(p *ContentPart) error {
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			p.Type, err = r.Word("text", "image_url")
		case "text":
			p.Text, err = r.WordPtr()
		case "refusal":
			p.Refusal, err = r.WordPtr()
		case "image_url":
			if r.Null() {
				p.ImageURL = nil
				return nil
			}
			u := &imageURL{}
			p.ImageURL = u
			err = r.Object(func(name []byte) error {
				var err error
				switch string(name) {
				case "url":
					u.URL, err = r.String()
				case "detail":
					u.Detail, err = r.Word("auto", "low", "high")
				default:
					u.Unknown, err = r.Keep(u.Unknown, name)
				}
				return err
			})
		case "input_audio", "file":
			return jsonx.ErrForm // the general way reads them
		default:
			p.Unknown, err = r.Keep(p.Unknown, name)
		}
		return err
	})
}

// tool reads a tool.
func (r requestReader) tool(t *tool) error {
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			t.Type, err = r.Word("function")
		case "function":
			if r.Null() {
				t.Function = nil
				return nil
			}
			f := &functionDef{}
			t.Function = f
			err = r.Object(func(name []byte) error {
				var err error
				switch string(name) {
				case "name":
					f.Name, err = r.String()
				case "description":
					f.Description, err = r.WordPtr()
				case "parameters":
					// The body's own bytes: decoding reads them once
					// more, into the canonical tool's string (or a kept
					// tool's marshalling), and nothing keeps the wire
					// tool.
					f.Parameters, err = r.Raw()
				case "strict":
					f.Strict, err = r.BoolPtr(new(bool))
				default:
					f.Unknown, err = r.Keep(f.Unknown, name)
				}
				return err
			})
		default:
			t.Unknown, err = r.Keep(t.Unknown, name)
		}
		return err
	})
}

// toolChoice reads a tool choice: a mode, or an object naming a function.
func (r requestReader) toolChoice(q *Request) error {
	switch r.Kind() {
	case '"':
		mode, err := r.Word("auto", "none", "required")
		if err == nil {
			q.ToolChoice = &ToolChoice{Mode: mode}
		}
		return err
	case '{':
	default:
		return jsonx.ErrForm // null and the rest: the general way
	}
	tc := &ToolChoice{}
	q.ToolChoice = tc
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			tc.Type, err = r.Word("function")
		case "function":
			if r.Null() {
				tc.Function = nil
				return nil
			}
			f := &namedFunc{}
			tc.Function = f
			err = r.Object(func(name []byte) error {
				var err error
				if string(name) == "name" {
					f.Name, err = r.String()
				} else {
					f.Unknown, err = r.Keep(f.Unknown, name)
				}
				return err
			})
		case "allowed_tools":
			return jsonx.ErrForm // the general way reads it
		default:
			tc.Unknown, err = r.Keep(tc.Unknown, name)
		}
		return err
	})
}

// stop reads stop sequences: a string or a list of them.
func (r requestReader) stop(q *Request) error {
	switch r.Kind() {
	case 'n':
		r.Null()
		q.Stop = nil
		return nil
	case '"':
		s, err := r.String()
		q.Stop = &Stop{String: true, Values: []string{s}}
		return err
	}
	st := &Stop{}
	q.Stop = st
	isNull, err := r.Array(func() error {
		if r.Kind() != '"' {
			return jsonx.ErrForm
		}
		s, err := r.String()
		st.Values = append(st.Values, s)
		return err
	})
	if err == nil && !isNull && st.Values == nil {
		st.Values = []string{}
	}
	return err
}
