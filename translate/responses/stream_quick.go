package responses

import (
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// eventReader reads a stream's events without reflection: the deltas most
// streams are made of, and the events around them. It reads their
// members by name, in any order, and leaves an event of a type it does
// not know, or with a member it does not know or a value of an unexpected
// kind, to jsonx.Unmarshal, which is the reference: FuzzQuickEvent holds
// the two to the same event, but for the members the stream decoder never
// reads (item_id, sequence_number, logprobs, obfuscation, the texts and
// arguments a done event repeats, annotation_index), which the reader
// checks and passes over.
//
// The objects an event carries (a response, an item, a content part, an
// annotation) are kept as they came, and read only when the event's type
// needs them (open), by hand where they take the common forms: an
// in_progress snapshot or a part's done event is not read through, and
// what is read starts one level down, off the depth of the stream's loop.
//
// The event read lives in the reader until its next read.
type eventReader struct {
	jsonx.Walker
	w            event
	output, part int64
	summary      int64
	// The objects of the event read, as they came; nil when absent.
	response, item, contentPart, annotation jsontext.Value
	// What read took of the response or the item where it came
	// (readHere), for open; nil and false when it did not.
	started, ended *Response
	it             streamItem
	itemRead       bool
}

var eventReaders = sync.Pool{New: func() any { return new(eventReader) }}

// eventTypes are the types the reader reads, as written: the deltas
// first.
var eventTypes = [...]string{
	"response.output_text.delta",
	"response.refusal.delta",
	"response.function_call_arguments.delta",
	"response.reasoning_summary_text.delta",
	"response.reasoning_text.delta",
	"response.created",
	"response.in_progress",
	"response.queued",
	"response.output_item.added",
	"response.content_part.added",
	"response.output_text.done",
	"response.refusal.done",
	"response.output_text.annotation.added",
	"response.content_part.done",
	"response.function_call_arguments.done",
	"response.reasoning_summary_part.added",
	"response.reasoning_summary_text.done",
	"response.reasoning_summary_part.done",
	"response.reasoning_text.done",
	"response.output_item.done",
	"response.completed",
	"response.incomplete",
	"response.failed",
	"error",
	"response.web_search_call.in_progress",
	"response.web_search_call.searching",
	"response.web_search_call.completed",
	"response.file_search_call.in_progress",
	"response.file_search_call.searching",
	"response.file_search_call.completed",
}

// read reads data into the reader's event; when ok is false the event is
// zero, ready for the reflective decoder. The objects it carries are read
// by open.
func (r *eventReader) read(data []byte) (w *event, ok bool) {
	r.Reset(data)
	w = &r.w
	*w = event{}
	r.response, r.item, r.contentPart, r.annotation = nil, nil, nil, nil
	r.started, r.ended, r.it, r.itemRead = nil, nil, streamItem{}, false
	if err := r.Object(func(name []byte) error { return r.member(name, w) }); err == nil && w.Type != "" && r.End() {
		return w, true
	}
	*w = event{}
	return w, false
}

func (r *eventReader) member(name []byte, w *event) error {
	var err error
	switch string(name) {
	case "type":
		if r.Kind() != '"' {
			return jsonx.ErrForm
		}
		raw, err := r.Raw()
		if err != nil || len(raw) < 2 {
			return jsonx.ErrForm
		}
		for _, t := range eventTypes {
			if string(raw[1:len(raw)-1]) == t {
				w.Type = t
				return nil
			}
		}
		return jsonx.ErrForm
	case "output_index":
		w.OutputIndex, err = r.intPtr(&r.output)
	case "content_index":
		w.ContentIndex, err = r.intPtr(&r.part)
	case "summary_index":
		w.SummaryIndex, err = r.intPtr(&r.summary)
	case "delta":
		w.Delta, err = r.StringPtr()
	case "message":
		if !r.Null() {
			w.Message, err = r.String()
		}
	case "param":
		w.Param, err = r.StringPtr()
	case "code":
		w.Code, err = r.Copy()
	case "response":
		if r.response = r.readHere(w.Type, true); r.response == nil {
			r.response, err = r.object()
		}
	case "item":
		if r.item = r.readHere(w.Type, false); r.item == nil {
			r.item, err = r.object()
		}
	case "part":
		r.contentPart, err = r.object()
	case "annotation":
		r.annotation, err = r.object()
	case "sequence_number", "annotation_index":
		if !r.Null() {
			_, err = r.Int()
		}
	case "item_id", "obfuscation", "text", "arguments", "input", "refusal":
		if !r.Null() {
			err = r.SkipString()
		}
	case "logprobs":
		err = r.Skip()
	default:
		return jsonx.ErrForm
	}
	return err
}

// object reads an object member as it came; null is nil, as Unmarshal
// leaves a pointer nil for it.
func (r *eventReader) object() (jsontext.Value, error) {
	if r.Null() {
		return nil, nil
	}
	if r.Kind() != '{' {
		return nil, jsonx.ErrForm
	}
	return r.Raw()
}

// readHere reads the response of an event that starts or ends a stream,
// or the item of an item added or done, where it is in the event, when
// the event's type came before it, as every service writes it: read from
// its copy in open, it would be passed over twice, the longest values of
// a stream (a start's echo of the request, an end's output). It returns
// the value as it came, for what open reads whole; nil when it read
// nothing, the Walker where it was, for object to take the value.
func (r *eventReader) readHere(typ string, response bool) jsontext.Value {
	p := r.Place()
	switch {
	case !response && (typ == "response.output_item.added" || typ == "response.output_item.done"):
		if r.it, r.itemRead = r.streamItemHere(); r.itemRead {
			return r.Since(p)
		}
	case response && typ == "response.created":
		if r.started, _ = r.startHere(); r.started != nil {
			return r.Since(p)
		}
	case response && (typ == "response.completed" || typ == "response.incomplete" || typ == "response.failed"):
		if r.ended, _ = r.endHere(); r.ended != nil {
			return r.Since(p)
		}
	default:
		return nil
	}
	r.Back(p)
	return nil
}

// open reads into w the objects its type needs: the response of a
// snapshot that starts or ends the stream, the item of an item added or
// done, the part of a part added, an annotation. Of an item of the kinds
// a stream streams (a message, a function call, reasoning) it reads
// streamItem, of the response that ends a stream its status and usage
// (end), the response that starts it (start), and a part added or an
// annotation as a request's are read, all by hand: what the stream
// decoder reads of them, not their content, which arrived as deltas.
// What the hand readers decline, Unmarshal reads. Read whole, they go through nested lists deeper than a
// stream's 8 KB stack; what must be read whole (a hosted tool's item, an
// end with an error or incomplete, a start with output) is read off it
// (deep).
func (r *eventReader) open(w *event) error {
	switch w.Type {
	case "response.created":
		if r.started != nil {
			w.Response = r.started
			return nil
		}
		if r.response != nil {
			if start, ok := r.start(); ok {
				w.Response = start
				return nil
			}
			return r.deep(w, true, false)
		}
	case "response.completed", "response.incomplete", "response.failed":
		if r.ended != nil {
			w.Response = r.ended
			return nil
		}
		if r.response != nil {
			if end, ok := r.end(); ok {
				w.Response = end
				return nil
			}
			return r.deep(w, true, false)
		}
	case "response.output_item.added", "response.output_item.done":
		if r.item != nil {
			it, ok := r.it, r.itemRead
			if !ok {
				it, ok = r.streamItem()
			}
			if !ok {
				it = streamItem{}
				if err := jsonx.Unmarshal(r.item, &it); err != nil {
					return err
				}
			}
			if it.Type != "message" && it.Type != "function_call" && it.Type != "reasoning" {
				return r.deep(w, false, true)
			}
			w.Item = &Item{Type: it.Type, ID: it.ID, Status: it.Status, Role: it.Role, CallID: it.CallID, Name: it.Name,
				Arguments: it.Arguments, Namespace: it.Namespace, EncryptedContent: it.EncryptedContent}
		}
	case "response.content_part.added":
		if r.contentPart != nil {
			w.Part = new(ContentPart)
			r.Reset(r.contentPart)
			if (requestReader{&r.Walker}).part(w.Part) == nil && r.End() {
				return nil
			}
			*w.Part = ContentPart{}
			return jsonx.Unmarshal(r.contentPart, w.Part)
		}
	case "response.output_text.annotation.added":
		if r.annotation != nil {
			w.Annotation = new(annotation)
			r.Reset(r.annotation)
			if (requestReader{&r.Walker}).annotation(w.Annotation) == nil && r.End() {
				return nil
			}
			*w.Annotation = annotation{}
			return jsonx.Unmarshal(r.annotation, w.Annotation)
		}
	}
	return nil
}

// streamItem reads what the stream decoder reads of an item, by hand;
// its other members (content, summary) are passed over, as Unmarshal
// passes over what streamItem does not model. ok is false for a form
// Unmarshal may read otherwise (a repeated member, a value of another
// kind).
func (r *eventReader) streamItem() (it streamItem, ok bool) {
	r.Reset(r.item)
	it, ok = r.streamItemHere()
	return it, ok && r.End()
}

// streamItemHere reads an item, as streamItem does, where the Walker is.
func (r *eventReader) streamItemHere() (it streamItem, ok bool) {
	err := r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			it.Type, err = r.Word("message", "function_call", "reasoning")
		case "id":
			it.ID, err = r.String()
		case "status":
			it.Status, err = r.Word("in_progress", "completed", "incomplete")
		case "role":
			it.Role, err = r.Word("assistant")
		case "call_id":
			it.CallID, err = r.String()
		case "name":
			it.Name, err = r.String()
		case "arguments":
			it.Arguments, err = r.WordPtr()
		case "namespace":
			it.Namespace, err = r.String()
		case "encrypted_content":
			it.EncryptedContent, err = r.WordPtr()
		default:
			err = r.Skip()
		}
		return err
	})
	return it, err == nil
}

// streamItem is what the stream decoder reads of an item a stream
// streams: the members of Item but its content and summary.
type streamItem struct {
	Type             string  `json:"type,omitzero"`
	ID               string  `json:"id,omitzero"`
	Status           string  `json:"status,omitzero"`
	Role             string  `json:"role,omitzero"`
	CallID           string  `json:"call_id,omitzero"`
	Name             string  `json:"name,omitzero"`
	Arguments        *string `json:"arguments,omitzero"`
	Namespace        string  `json:"namespace,omitzero"`
	EncryptedContent *string `json:"encrypted_content,omitzero"`
}

// streamEnd is what the stream decoder reads of the response that ends a
// stream: its status, error, incomplete details and usage.
type streamEnd struct {
	Status            string         `json:"status,omitzero"`
	Error             *responseError `json:"error"`
	IncompleteDetails *incomplete    `json:"incomplete_details"`
	Usage             *usage         `json:"usage"`
}

// start reads the response that starts a stream, by hand: its members
// are strings, numbers and the request's echo, kept raw. ok is false for
// one with output, usage, an error or incomplete details (read by deep),
// or a member of a form Unmarshal may read otherwise.
func (r *eventReader) start() (_ *Response, ok bool) {
	r.Reset(r.response)
	s, ok := r.startHere()
	return s, ok && r.End()
}

// startHere reads a start's response, as start does, where the Walker
// is; nil when it declines.
func (r *eventReader) startHere() (_ *Response, ok bool) {
	s := new(Response)
	err := r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "id":
			s.ID, err = r.text()
		case "object":
			s.Object, err = r.text()
		case "model":
			s.Model, err = r.text()
		case "status":
			s.Status, err = r.text()
		case "created_at":
			err = r.count(&s.CreatedAt)
		case "previous_response_id":
			s.PreviousResponseID, err = r.StringPtr()
		case "service_tier":
			s.ServiceTier, err = r.StringPtr()
		case "output":
			// A stream's output comes item by item: its start has none.
			if r.Null() {
				return nil
			}
			if isNull, err := r.Array(func() error { return jsonx.ErrForm }); err != nil || isNull {
				return jsonx.ErrForm
			}
			s.Output = []Item{}
		case "error", "incomplete_details", "usage":
			if !r.Null() {
				return jsonx.ErrForm
			}
		case "instructions", "max_output_tokens", "parallel_tool_calls", "reasoning", "store", "temperature",
			"text", "tool_choice", "tools", "top_p", "truncation", "user", "metadata":
			// Left pointing into the event: decodeResponse keeps them,
			// copied into one string, while the event is decoded.
			*echoField(s, string(name)), err = r.Raw()
		default:
			s.Unknown, err = r.Keep(s.Unknown, name)
		}
		return err
	})
	if err != nil {
		return nil, false
	}
	return s, true
}

// text reads a string member; null leaves it empty, as Unmarshal does.
func (r *eventReader) text() (string, error) {
	if r.Null() {
		return "", nil
	}
	return r.String()
}

// end reads what the stream decoder reads of the response that ends a
// stream, by hand: its status and usage. ok is false for a response with
// an error or incomplete details (read by deep), or a member of a form
// Unmarshal may read otherwise.
func (r *eventReader) end() (_ *Response, ok bool) {
	r.Reset(r.response)
	end, ok := r.endHere()
	return end, ok && r.End()
}

// endHere reads an end's response, as end does, where the Walker is; nil
// when it declines.
func (r *eventReader) endHere() (_ *Response, ok bool) {
	end := new(Response)
	err := r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "status":
			if !r.Null() {
				end.Status, err = r.String()
			}
		case "usage":
			if !r.Null() {
				end.Usage = new(usage)
				err = r.usage(end.Usage)
			}
		case "error", "incomplete_details":
			if !r.Null() {
				return jsonx.ErrForm
			}
		default:
			err = r.Skip()
		}
		return err
	})
	if err != nil {
		return nil, false
	}
	return end, true
}

// usage reads a response's usage: its counts, and their details.
func (r *eventReader) usage(u *usage) error {
	return r.Object(func(name []byte) error {
		switch string(name) {
		case "input_tokens":
			return r.count(&u.InputTokens)
		case "output_tokens":
			return r.count(&u.OutputTokens)
		case "total_tokens":
			return r.count(&u.TotalTokens)
		case "input_tokens_details":
			if r.Null() {
				return nil
			}
			u.InputTokensDetails = new(inputDetails)
			return r.detail("cached_tokens", &u.InputTokensDetails.CachedTokens)
		case "output_tokens_details":
			if r.Null() {
				return nil
			}
			u.OutputTokensDetails = new(outputDetails)
			return r.detail("reasoning_tokens", &u.OutputTokensDetails.ReasoningTokens)
		}
		return r.Skip()
	})
}

// detail reads an object of token details, the count called name into
// *n.
func (r *eventReader) detail(name string, n *int64) error {
	return r.Object(func(member []byte) error {
		if string(member) == name {
			return r.count(n)
		}
		return r.Skip()
	})
}

// count reads a token count; null leaves it, as Unmarshal does.
func (r *eventReader) count(n *int64) error {
	if r.Null() {
		return nil
	}
	v, err := r.Int()
	*n = v
	return err
}

// deep reads the event's response or item off the stream's stack: a
// goroutine's hop, for a hosted tool's item, a failed or incomplete end,
// or a start start declines. Of an end it reads streamEnd.
func (r *eventReader) deep(w *event, response, item bool) error {
	var err error
	offstack.Run(func() {
		if response && w.Type != "response.created" {
			var end streamEnd
			err = jsonx.Unmarshal(r.response, &end)
			w.Response = &Response{Status: end.Status, Error: end.Error, IncompleteDetails: end.IncompleteDetails, Usage: end.Usage}
		} else if response {
			w.Response = new(Response)
			err = jsonx.Unmarshal(r.response, w.Response)
		}
		if item {
			w.Item = new(Item)
			err = jsonx.Unmarshal(r.item, w.Item)
		}
	})
	return err
}

// intPtr reads an integer into *at, returning at; null is nil.
func (r *eventReader) intPtr(at *int64) (*int64, error) {
	if r.Null() {
		return nil, nil
	}
	n, err := r.Int()
	*at = n
	return at, err
}
