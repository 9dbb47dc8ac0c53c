package generatecontent

import (
	"sync"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// chunkReader reads the chunks of a stream without reflection
// when they hold what most do: candidates whose parts are text, thoughts,
// thought signatures and whole calls, an index, a finish reason, and the
// usage. Every
// member of a candidate or a part must be one it knows, spelled as the
// service spells it (the reflective decoder matches names regardless of
// case and underscores, and keeps unknown members of a part for this
// dialect's clients): anything else leaves the chunk to jsonx.Unmarshal,
// the reference, which FuzzQuickChunk holds the reader to. At the top
// level, the members the decoder reads only from the first chunk
// (modelVersion, responseId) are read in the first and passed over in
// the others; createTime, which the decoder keeps from the first chunk
// among the members it does not model, leaves the first to Unmarshal.
//
// The chunk read lives in the reader until its next read.
type chunkReader struct {
	jsonx.Walker
	w       Response
	cands   [1]candidate
	content [1]Content
	parts   [2]Part
	index   [1]int64
	thought [2]bool
	// usage is a chunk's usage, read again on every chunk; its counts
	// are read into a box of their own (usageBox), allocated per chunk,
	// which the canonical usage is made in. The details are copied.
	usage    usageMetadata
	details  [8]modalityTokenCount
	tokens   [8]int64
	ndetails int
	// first is set while the stream's first chunk is read, whole while
	// a whole reply is (readWhole).
	first, whole bool
}

var chunkReaders = sync.Pool{New: func() any { return new(chunkReader) }}

// read reads data, the stream's first chunk or a later one, into the
// reader's chunk; when ok is false the chunk is zero, ready for the
// reflective decoder.
func (r *chunkReader) read(data []byte, first bool) (w *Response, ok bool) {
	r.Reset(data)
	r.first = first
	w = &r.w
	*w = Response{}
	if err := r.Object(func(name []byte) error { return r.member(name, w) }); err == nil && r.End() {
		return w, true
	}
	*w = Response{}
	return w, false
}

// readWhole reads a whole reply, as a stream's first chunk is read but
// for the usage's members Parley does not model, which a whole reply's
// decoder keeps and a stream's passes over.
func (r *chunkReader) readWhole(data []byte) (w *Response, ok bool) {
	r.whole = true
	w, ok = r.read(data, true)
	r.whole = false
	return w, ok
}

// release lets go of what the reader last read, for a reader kept after
// reading a whole reply, as long as the text it answered with.
func (r *chunkReader) release() {
	r.Release()
	r.w, r.cands, r.content, r.parts, r.usage = Response{}, [1]candidate{}, [1]Content{}, [2]Part{}, usageMetadata{}
}

func (r *chunkReader) member(name []byte, w *Response) error {
	switch string(name) {
	case "candidates":
		w.Candidates = r.cands[:0]
		isNull, err := r.Array(func() error {
			w.Candidates = append(w.Candidates, candidate{})
			c := &w.Candidates[len(w.Candidates)-1]
			return r.Object(func(name []byte) error { return r.candidateMember(name, c, len(w.Candidates) == 1) })
		})
		if isNull {
			w.Candidates = nil
		}
		return err
	case "usageMetadata":
		if r.Null() {
			return nil
		}
		u := &r.usage
		*u = usageMetadata{}
		w.UsageMetadata = u
		r.ndetails = 0
		return r.Object(func(name []byte) error { return r.usageMember(name, u) })
	case "modelVersion", "responseId":
		if !r.first {
			return r.SkipString()
		}
		if r.Kind() != '"' {
			return jsonx.ErrForm
		}
		s, err := r.String()
		if string(name) == "modelVersion" {
			w.ModelVersion = s
		} else {
			w.ResponseID = s
		}
		return err
	case "createTime":
		if r.first {
			// Kept among the first chunk's unmodelled members.
			return jsonx.ErrForm
		}
		return r.SkipString()
	}
	return jsonx.ErrForm
}

func (r *chunkReader) candidateMember(name []byte, c *candidate, first bool) error {
	var err error
	switch string(name) {
	case "content":
		if r.Null() {
			return nil
		}
		var content *Content
		if first {
			content = &r.content[0]
			*content = Content{}
		} else {
			content = new(Content)
		}
		c.Content = content
		return r.Object(func(name []byte) error { return r.contentMember(name, content) })
	case "index":
		if r.Null() {
			return nil
		}
		var at *int64
		if first {
			at = &r.index[0]
		} else {
			at = new(int64)
		}
		*at, err = r.Int()
		c.Index = at
	case "finishReason":
		c.FinishReason, err = r.String()
	default:
		return jsonx.ErrForm
	}
	return err
}

func (r *chunkReader) contentMember(name []byte, c *Content) error {
	var err error
	switch string(name) {
	case "role":
		if r.Kind() == '"' {
			raw, err := r.Raw()
			if err != nil {
				return err
			}
			if string(raw) == `"model"` {
				c.Role = "model"
				return nil
			}
			s, ok := jsonx.Unquote(raw)
			if !ok {
				return jsonx.ErrForm
			}
			c.Role = s
			return nil
		}
		c.Role, err = r.String()
	case "parts":
		if r.Kind() != '[' {
			return jsonx.ErrForm
		}
		// The first candidate's parts live in the reader; another's are
		// its own.
		own := c == &r.content[0]
		parts := PartList(r.parts[:0])
		if !own {
			parts = nil
		}
		_, err = r.Array(func() error {
			parts = append(parts, Part{})
			i := len(parts) - 1
			return r.Object(func(name []byte) error { return r.partMember(name, &parts[i], own, i) })
		})
		if parts == nil {
			parts = PartList{}
		}
		c.Parts = parts
	default:
		return jsonx.ErrForm
	}
	return err
}

func (r *chunkReader) partMember(name []byte, p *Part, own bool, i int) error {
	var err error
	switch string(name) {
	case "text":
		p.Text, err = r.StringPtr()
	case "thought":
		var at *bool
		if own && i < len(r.thought) {
			at = &r.thought[i]
		} else {
			at = new(bool)
		}
		p.Thought, err = r.BoolPtr(at)
	case "thoughtSignature":
		p.ThoughtSignature, err = r.String()
	case "functionCall":
		if r.Null() {
			return nil
		}
		c := new(FunctionCall)
		p.FunctionCall = c
		err = r.Object(func(name []byte) error { return r.callMember(name, c) })
	default:
		return jsonx.ErrForm
	}
	return err
}

// callMember reads a member of a whole call: its id, name and arguments,
// kept as they came. A streamed call's pieces (partialArgs,
// willContinue) are left to the reflective decoder.
func (r *chunkReader) callMember(name []byte, c *FunctionCall) error {
	var err error
	switch string(name) {
	case "id":
		if !r.Null() {
			c.ID, err = r.String()
		}
	case "name":
		if !r.Null() {
			c.Name, err = r.String()
		}
	case "args":
		c.Args, err = r.Copy()
	default:
		return jsonx.ErrForm
	}
	return err
}

// usageNames are the usage members the reflective decoder knows, folded
// as it matches them (case and underscores aside): a member spelled
// another way than the service's that folds to one of them is left to
// it.
var usageNames = map[string]bool{
	"prompttokencount": true, "cachedcontenttokencount": true, "candidatestokencount": true,
	"tooluseprompttokencount": true, "thoughtstokencount": true, "totaltokencount": true,
	"prompttokensdetails": true, "cachetokensdetails": true, "candidatestokensdetails": true,
	"tooluseprompttokensdetails": true,
}

// folds reports whether name, folded as the reflective decoder folds
// names tagged case:ignore, is one of known.
func folds(name []byte, known map[string]bool) bool {
	var buf [48]byte
	b := buf[:0]
	for _, c := range name {
		switch {
		case c == '_' || c == '-':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c >= 0x80:
			return true // a non-ASCII fold: leave it to reflection
		}
		b = append(b, c)
	}
	return known[string(b)]
}

func (r *chunkReader) usageMember(name []byte, u *usageMetadata) error {
	switch string(name) {
	case "promptTokenCount":
		return r.count(&u.PromptTokenCount, 0)
	case "cachedContentTokenCount":
		return r.count(&u.CachedContentTokenCount, 1)
	case "candidatesTokenCount":
		return r.count(&u.CandidatesTokenCount, 2)
	case "toolUsePromptTokenCount":
		return r.count(&u.ToolUsePromptTokenCount, 3)
	case "thoughtsTokenCount":
		return r.count(&u.ThoughtsTokenCount, 4)
	case "totalTokenCount":
		return r.count(&u.TotalTokenCount, 5)
	case "promptTokensDetails":
		return r.modalities(&u.PromptTokensDetails)
	case "cacheTokensDetails":
		return r.modalities(&u.CacheTokensDetails)
	case "candidatesTokensDetails":
		return r.modalities(&u.CandidatesTokensDetails)
	case "toolUsePromptTokensDetails":
		return r.modalities(&u.ToolUsePromptTokensDetails)
	}
	if folds(name, usageNames) {
		return jsonx.ErrForm
	}
	if r.whole {
		var err error
		u.Unknown, err = r.Keep(u.Unknown, name)
		return err
	}
	return r.Skip()
}

func (r *chunkReader) count(dst **int64, i int) error {
	if r.Null() {
		*dst = nil
		return nil
	}
	n, err := r.Int()
	if err != nil {
		return err
	}
	u := &r.usage
	if u.box == nil {
		u.box = new(usageBox)
	}
	u.box.n[i] = n
	*dst = &u.box.n[i]
	return nil
}

// modalityWords are the modalities as the service spells them, so that
// reading one allocates nothing.
var modalityWords = []string{"TEXT", "IMAGE", "AUDIO", "VIDEO", "DOCUMENT", "MODALITY_UNSPECIFIED"}

var modalityCountNames = map[string]bool{"tokencount": true}

func (r *chunkReader) modalities(dst *[]modalityTokenCount) error {
	start := r.ndetails
	var list []modalityTokenCount
	isNull, err := r.Array(func() error {
		var m *modalityTokenCount
		slot := -1
		if r.ndetails < len(r.details) && list == nil {
			slot = r.ndetails
			r.details[slot] = modalityTokenCount{}
			m = &r.details[slot]
			r.ndetails++
		} else {
			if list == nil {
				list = append([]modalityTokenCount(nil), r.details[start:r.ndetails]...)
			}
			list = append(list, modalityTokenCount{})
			m = &list[len(list)-1]
		}
		return r.Object(func(name []byte) error { return r.modalityMember(name, m, slot) })
	})
	switch {
	case err != nil:
		return err
	case isNull:
		*dst = nil
	case list != nil:
		*dst = list
	default:
		*dst = r.details[start:r.ndetails:r.ndetails]
	}
	return nil
}

// modalityMember reads a member of m, which is the reader's details[slot]
// (slot -1 when m is not the reader's).
func (r *chunkReader) modalityMember(name []byte, m *modalityTokenCount, slot int) error {
	switch string(name) {
	case "modality":
		if r.Null() {
			return nil
		}
		if r.Kind() != '"' {
			return jsonx.ErrForm
		}
		raw, err := r.Raw()
		if err != nil || len(raw) < 2 {
			return jsonx.ErrForm
		}
		for _, word := range modalityWords {
			if string(raw[1:len(raw)-1]) == word {
				m.Modality = word
				return nil
			}
		}
		s, ok := jsonx.Unquote(raw)
		if !ok {
			return jsonx.ErrForm
		}
		m.Modality = s
		return nil
	case "tokenCount":
		if r.Null() {
			return nil
		}
		n, err := r.Int()
		if err != nil {
			return err
		}
		var at *int64
		if slot >= 0 {
			at = &r.tokens[slot]
		} else {
			at = new(int64)
		}
		*at = n
		m.TokenCount = at
		return nil
	}
	if folds(name, modalityCountNames) {
		return jsonx.ErrForm
	}
	if r.whole {
		var err error
		m.Unknown, err = r.Keep(m.Unknown, name)
		return err
	}
	return r.Skip()
}
