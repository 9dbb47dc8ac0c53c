package responses

import (
	"sync"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// requestWalkers read request bodies; each is let go of what it read
// before it goes back (jsonx.Walker.Release), since a body may be as large
// as an agent's conversation.
var requestWalkers = sync.Pool{New: func() any { return new(jsonx.Walker) }}

// readRequest reads a request body into w as jsonx.Unmarshal would,
// without reflection: the input as a string or as items (messages with
// text, image and file parts, function calls and their outputs, reasoning,
// and every other item's modelled members), instructions, function and
// built-in tools, the tool choice, the text format, reasoning and every
// setting, with members Parley does not model kept as they are. Anything
// it does not expect (a repeated member, a value of an unexpected kind, a
// tool choice's list of tools) makes it return false with w zero, and jsonx.Unmarshal reads the request
// (TestQuickReadIsTheUnmarshalledRequest, FuzzQuickRequest).
func readRequest(data []byte, w *Request) bool {
	return readWhole(data, w, requestReader.member)
}

// readWhole reads a whole body into *w, each of its members with member,
// or leaves *w zero when it declines the body.
func readWhole[T any](data []byte, w *T, member func(q requestReader, name []byte, w *T) error) bool {
	r := requestWalkers.Get().(*jsonx.Walker)
	defer func() {
		r.Release()
		requestWalkers.Put(r)
	}()
	r.Reset(data)
	q := requestReader{r: r}
	var zero T
	*w = zero
	if err := r.Object(func(name []byte) error { return member(q, name, w) }); err != nil || !r.End() {
		*w = zero
		return false
	}
	return true
}

// requestReader reads the members of a request.
type requestReader struct{ r *jsonx.Walker }

func (q requestReader) member(name []byte, w *Request) error {
	r := q.r
	var err error
	switch string(name) {
	case "model":
		w.Model, err = r.String()
	case "input":
		w.Input, err = q.input()
	case "instructions":
		w.Instructions, err = r.WordPtr()
	case "tools":
		w.Tools, err = q.tools()
	case "tool_choice":
		w.ToolChoice, err = q.toolChoice()
	case "text":
		if r.Null() {
			return nil
		}
		t := &textConfig{}
		w.Text = t
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "format":
				t.Format, err = q.format()
			case "verbosity":
				t.Verbosity, err = r.WordPtr("low", "medium", "high")
			default:
				t.Unknown, err = r.Keep(t.Unknown, name)
			}
			return err
		})
	case "reasoning":
		if r.Null() {
			return nil
		}
		rc := &reasoningConfig{}
		w.Reasoning = rc
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "effort":
				rc.Effort, err = r.WordPtr("minimal", "low", "medium", "high")
			case "summary":
				rc.Summary, err = r.WordPtr("auto", "concise", "detailed")
			case "generate_summary":
				rc.GenerateSummary, err = r.WordPtr()
			default:
				rc.Unknown, err = r.Keep(rc.Unknown, name)
			}
			return err
		})
	case "include":
		w.Include, err = q.r.Strings()
	case "max_output_tokens":
		w.MaxOutputTokens, err = r.IntPtr()
	case "metadata":
		w.Metadata, err = q.metadata()
	case "parallel_tool_calls":
		w.ParallelToolCalls, err = r.BoolPtr(new(bool))
	case "previous_response_id":
		w.PreviousResponseID, err = r.WordPtr()
	case "service_tier":
		w.ServiceTier, err = r.WordPtr("auto", "default", "flex", "priority")
	case "store":
		w.Store, err = r.BoolPtr(new(bool))
	case "stream":
		w.Stream, err = r.BoolPtr(new(bool))
	case "temperature":
		w.Temperature, err = r.FloatPtr()
	case "top_p":
		w.TopP, err = r.FloatPtr()
	case "top_logprobs":
		w.TopLogprobs, err = r.IntPtr()
	case "truncation":
		w.Truncation, err = r.WordPtr("auto", "disabled")
	case "user":
		w.User, err = r.WordPtr()
	case "prompt_cache_key":
		w.PromptCacheKey, err = r.WordPtr()
	default:
		w.Unknown, err = r.Keep(w.Unknown, name)
	}
	return err
}

// input reads the input: a string, or an array of items.
func (q requestReader) input() (*Input, error) {
	r := q.r
	switch r.Kind() {
	case 'n':
		r.Null()
		return nil, nil
	case '"':
		s, err := r.String()
		return &Input{String: true, Text: s}, err
	}
	in := &Input{Items: []Item{}}
	_, err := r.Array(func() error {
		in.Items = append(in.Items, Item{})
		return q.item(&in.Items[len(in.Items)-1])
	})
	return in, err
}

// item reads one input item: the members of every item type, as Item
// models them.
func (q requestReader) item(it *Item) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			it.Type, err = r.Word("message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output")
		case "id":
			it.ID, err = r.String()
		case "status":
			it.Status, err = r.Word("completed", "in_progress", "incomplete")
		case "role":
			it.Role, err = r.Word("user", "assistant", "system", "developer")
		case "content":
			it.Content, err = q.content()
		case "call_id":
			it.CallID, err = r.String()
		case "name":
			it.Name, err = r.String()
		case "arguments":
			it.Arguments, err = r.WordPtr()
		case "output":
			it.Output, err = r.Copy()
		case "namespace":
			it.Namespace, err = r.String()
		case "summary":
			it.Summary, err = q.summary()
		case "encrypted_content":
			it.EncryptedContent, err = r.WordPtr()
		case "action":
			it.Action, err = r.Copy()
		case "queries":
			it.Queries, err = q.r.Strings()
		case "results":
			it.Results, err = r.Copy()
		default:
			it.Unknown, err = r.Keep(it.Unknown, name)
		}
		return err
	})
}

// content reads a message's content: a string, or an array of parts.
func (q requestReader) content() (*Content, error) {
	r := q.r
	switch r.Kind() {
	case 'n':
		r.Null()
		return nil, nil
	case '"':
		s, err := r.String()
		return &Content{String: true, Text: s}, err
	}
	c := &Content{Parts: []ContentPart{}}
	_, err := r.Array(func() error {
		c.Parts = append(c.Parts, ContentPart{})
		return q.part(&c.Parts[len(c.Parts)-1])
	})
	return c, err
}

// part reads one content part.
func (q requestReader) part(p *ContentPart) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			p.Type, err = r.Word("input_text", "output_text", "input_image", "input_file", "refusal")
		case "text":
			p.Text, err = r.WordPtr()
		case "annotations":
			var isNull bool
			p.Annotations = nil
			isNull, err = r.Array(func() error {
				p.Annotations = append(p.Annotations, annotation{})
				return q.annotation(&p.Annotations[len(p.Annotations)-1])
			})
			if err == nil && !isNull && p.Annotations == nil {
				p.Annotations = []annotation{}
			}
		case "image_url":
			p.ImageURL, err = r.WordPtr()
		case "file_id":
			p.FileID, err = r.WordPtr()
		case "detail":
			p.Detail, err = r.Word("auto", "low", "high")
		case "file_data":
			p.FileData, err = r.WordPtr()
		case "file_url":
			p.FileURL, err = r.WordPtr()
		case "filename":
			p.Filename, err = r.WordPtr()
		case "refusal":
			p.Refusal, err = r.WordPtr()
		default:
			p.Unknown, err = r.Keep(p.Unknown, name)
		}
		return err
	})
}

// annotation reads a citation on output text.
func (q requestReader) annotation(a *annotation) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			a.Type, err = r.Word("url_citation", "file_citation", "container_file_citation", "file_path")
		case "file_id":
			a.FileID, err = r.String()
		case "filename":
			a.Filename, err = r.String()
		case "index":
			a.Index, err = r.IntPtr()
		case "url":
			a.URL, err = r.String()
		case "title":
			a.Title, err = r.String()
		case "start_index":
			a.StartIndex, err = r.IntPtr()
		case "end_index":
			a.EndIndex, err = r.IntPtr()
		default:
			a.Unknown, err = r.Keep(a.Unknown, name)
		}
		return err
	})
}

// summary reads a reasoning item's summary parts.
func (q requestReader) summary() ([]summaryPart, error) {
	r := q.r
	var list []summaryPart
	isNull, err := r.Array(func() error {
		list = append(list, summaryPart{})
		s := &list[len(list)-1]
		return r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "type":
				s.Type, err = r.Word("summary_text")
			case "text":
				s.Text, err = r.String()
			default:
				s.Unknown, err = r.Keep(s.Unknown, name)
			}
			return err
		})
	})
	if err == nil && !isNull && list == nil {
		list = []summaryPart{}
	}
	return list, err
}

// tools reads the tools: functions and the built-in tools' modelled
// members.
func (q requestReader) tools() ([]tool, error) {
	r := q.r
	var list []tool
	isNull, err := r.Array(func() error {
		list = append(list, tool{})
		return q.tool(&list[len(list)-1])
	})
	if err == nil && !isNull && list == nil {
		list = []tool{}
	}
	return list, err
}

func (q requestReader) tool(t *tool) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			t.Type, err = r.Word("function", "custom", "web_search", "file_search")
		case "name":
			t.Name, err = r.String()
		case "description":
			t.Description, err = r.WordPtr()
		case "parameters":
			// The body's own bytes: decoding reads them once more, into
			// the canonical tool's string (decodeToolList) or a kept
			// tool's marshalling, and nothing keeps the wire tool.
			t.Parameters, err = r.Raw()
		case "strict":
			t.Strict, err = r.BoolPtr(new(bool))
		case "vector_store_ids":
			t.VectorStoreIDs, err = q.r.Strings()
		case "filters":
			t.Filters, err = r.Copy()
		case "max_num_results":
			t.MaxNumResults, err = r.IntPtr()
		case "search_context_size":
			t.SearchContextSize, err = r.String()
		case "domains":
			t.Domains, err = q.r.Strings()
		case "display_width":
			t.DisplayWidth, err = r.IntPtr()
		case "display_height":
			t.DisplayHeight, err = r.IntPtr()
		case "environment":
			t.Environment, err = r.String()
		case "ranking_options":
			t.RankingOptions, err = q.rankingOptions()
		case "user_location":
			t.UserLocation, err = q.userLocation()
		default:
			t.Unknown, err = r.Keep(t.Unknown, name)
		}
		return err
	})
}

func (q requestReader) rankingOptions() (*rankingOptions, error) {
	r := q.r
	if r.Null() {
		return nil, nil
	}
	o := &rankingOptions{}
	err := r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "ranker":
			o.Ranker, err = r.String()
		case "score_threshold":
			o.ScoreThreshold, err = r.FloatPtr()
		default:
			o.Unknown, err = r.Keep(o.Unknown, name)
		}
		return err
	})
	return o, err
}

func (q requestReader) userLocation() (*userLocation, error) {
	r := q.r
	if r.Null() {
		return nil, nil
	}
	l := &userLocation{}
	err := r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			l.Type, err = r.Word("approximate")
		case "city":
			l.City, err = r.WordPtr()
		case "region":
			l.Region, err = r.WordPtr()
		case "country":
			l.Country, err = r.WordPtr()
		case "timezone":
			l.Timezone, err = r.WordPtr()
		default:
			l.Unknown, err = r.Keep(l.Unknown, name)
		}
		return err
	})
	return l, err
}

// toolChoice reads a mode string or an object naming a tool; the object's
// list of allowed tools is left to the general way.
func (q requestReader) toolChoice() (*ToolChoice, error) {
	r := q.r
	switch r.Kind() {
	case 'n':
		r.Null()
		return nil, nil
	case '"':
		s, err := r.Word("auto", "none", "required")
		return &ToolChoice{Mode: s}, err
	}
	tc := &ToolChoice{}
	err := r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			tc.Type, err = r.Word("function", "allowed_tools", "custom")
		case "name":
			tc.Name, err = r.String()
		case "mode":
			tc.AMode, err = r.Word("auto", "required")
		case "tools":
			return jsonx.ErrForm
		default:
			tc.Unknown, err = r.Keep(tc.Unknown, name)
		}
		return err
	})
	return tc, err
}

// format reads text.format.
func (q requestReader) format() (*format, error) {
	r := q.r
	if r.Null() {
		return nil, nil
	}
	f := &format{}
	err := r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			f.Type, err = r.Word("text", "json_schema", "json_object")
		case "name":
			f.Name, err = r.String()
		case "description":
			f.Description, err = r.WordPtr()
		case "schema":
			f.Schema, err = r.Copy()
		case "strict":
			f.Strict, err = r.BoolPtr(new(bool))
		default:
			f.Unknown, err = r.Keep(f.Unknown, name)
		}
		return err
	})
	return f, err
}

// metadata reads the metadata's strings.
func (q requestReader) metadata() (map[string]string, error) {
	r := q.r
	if r.Null() {
		return nil, nil
	}
	md := map[string]string{}
	err := r.Object(func(name []byte) error {
		if r.Kind() != '"' {
			return jsonx.ErrForm
		}
		s, err := r.String()
		md[string(name)] = s
		return err
	})
	return md, err
}
