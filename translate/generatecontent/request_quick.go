package generatecontent

import (
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// requestWalkers read request bodies; each is let go of what it read
// before it goes back, so that a pooled Walker holds no conversation.
var requestWalkers = sync.Pool{New: func() any { return new(jsonx.Walker) }}

// readRequest reads a client's request into w as jsonx.Unmarshal would,
// without reflection: contents (a list or one content) whose parts are
// text, thoughts, signatures, inline and file media, function calls and
// responses and code with its results; the system instruction; function
// declarations and the built-in tools that carry their settings as they
// come; the tool config, safety settings, generation config (thinking
// included) and the cached content; members Parley does not model are
// kept as they came. The reflective decoder matches most names
// regardless of case, dashes and underscores (snake_case from REST
// callers): a name spelled otherwise than the service spells it that
// folds to a known one is declined, as are a repeated member, a value
// of an unexpected kind, a speech config, a search-retrieval or
// computer-use tool, a streamed call's pieces and a function response's
// media, and jsonx.Unmarshal then reads the whole body
// (TestQuickReadIsTheUnmarshalledRequest, FuzzQuickRequest).
func readRequest(data []byte, w *Request) (ok bool) {
	r := requestWalkers.Get().(*jsonx.Walker)
	defer func() {
		r.Release()
		requestWalkers.Put(r)
	}()
	r.Reset(data)
	q := requestReader{r}
	*w = Request{}
	if err := r.Object(func(name []byte) error { return q.member(name, w) }); err != nil || !r.End() {
		*w = Request{}
		return false
	}
	return true
}

// requestReader reads the members of a request; what it reads is its
// own, not the Walker's.
type requestReader struct{ r *jsonx.Walker }

// requestNames and the other name sets are the members the reflective
// decoder knows of each object, folded as it folds them (folds).
var (
	requestNames = names("model", "contents", "tools", "toolConfig", "safetySettings", "systemInstruction",
		"generationConfig", "cachedContent")
	contentNames = names("role", "parts")
	partNames    = names("text", "thought", "thoughtSignature", "inlineData", "fileData", "functionCall",
		"functionResponse", "executableCode", "codeExecutionResult")
	blobNames     = names("mimeType", "data", "fileUri")
	callNames     = names("id", "name", "args", "partialArgs", "willContinue", "response", "parts")
	codeNames     = names("language", "code", "id", "outcome", "output")
	toolNames     = names("functionDeclarations", "codeExecution", "googleSearch", "googleSearchRetrieval", "urlContext", "computerUse")
	declNames     = names("name", "description", "parameters", "parametersJsonSchema")
	toolConfNames = names("functionCallingConfig", "mode", "allowedFunctionNames")
	safetyNames   = names("category", "threshold")
	genNames      = names("stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema", "responseModalities",
		"candidateCount", "maxOutputTokens", "temperature", "topP", "topK", "seed", "presencePenalty", "frequencyPenalty",
		"responseLogprobs", "logprobs", "enableEnhancedCivicAnswers", "speechConfig", "thinkingConfig", "mediaResolution")
	thinkingNames = names("includeThoughts", "thinkingBudget", "thinkingLevel")
)

// names folds each of list as folds does, into a set.
func names(list ...string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, n := range list {
		b := make([]byte, 0, len(n))
		for _, c := range []byte(n) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
		set[string(b)] = true
	}
	return set
}

// keep keeps a member not modelled, unless its name folds to one of
// known: the reflective decoder reads that one into its field.
func (q requestReader) keep(kept jsonx.Unknown, name []byte, known map[string]bool) (jsonx.Unknown, error) {
	if folds(name, known) {
		return kept, jsonx.ErrForm
	}
	return q.r.Keep(kept, name)
}

// objectInto reads an object member by member into a new T that *dst
// then points to, or null as nil, as Unmarshal reads a pointer to a
// struct.
func objectInto[T any](q requestReader, dst **T, member func(name []byte, v *T) error) error {
	*dst = nil
	if q.r.Null() {
		return nil
	}
	v := new(T)
	*dst = v
	return q.r.Object(func(name []byte) error { return member(name, v) })
}

// oneOrList reads an array of T, or one T as a list of one, as the
// dialect's lists (ContentList, PartList, ToolList) are read; null and
// other kinds are left to the reflective decoder.
func oneOrList[T any](q requestReader, read func(*T) error) ([]T, error) {
	switch q.r.Kind() {
	case '{':
		list := make([]T, 1)
		return list, read(&list[0])
	case '[':
		list := []T{}
		_, err := q.r.Array(func() error {
			list = append(list, *new(T))
			return read(&list[len(list)-1])
		})
		return list, err
	}
	return nil, jsonx.ErrForm
}

// objects reads an array of objects into a []T, each member by member,
// or null as nil, as Unmarshal reads a slice of structs.
func objects[T any](q requestReader, member func(name []byte, v *T) error) ([]T, error) {
	var list []T
	isNull, err := q.r.Array(func() error {
		list = append(list, *new(T))
		v := &list[len(list)-1]
		return q.r.Object(func(name []byte) error { return member(name, v) })
	})
	if err == nil && !isNull && list == nil {
		list = []T{}
	}
	return list, err
}

// text reads a string, or null as nil, into a string of its own.
func (q requestReader) text() (*string, error) {
	if q.r.Null() {
		return nil, nil
	}
	s, err := q.r.String()
	return &s, err
}

// value reads any value into bytes of its own, as a jsontext.Value
// member is read.
func (q requestReader) value() (jsontext.Value, error) { return q.r.Copy() }

func (q requestReader) member(name []byte, w *Request) error {
	r := q.r
	var err error
	switch string(name) {
	case "model":
		w.Model, err = r.String()
	case "contents":
		w.Contents = nil
		if r.Null() {
			return nil
		}
		var c []Content
		c, err = oneOrList(q, q.content)
		w.Contents = (*ContentList)(&c)
	case "tools":
		w.Tools, err = oneOrList(q, q.tool)
	case "toolConfig":
		err = objectInto(q, &w.ToolConfig, q.toolConfig)
	case "safetySettings":
		w.SafetySettings, err = objects(q, func(name []byte, s *safetySetting) error {
			var err error
			switch string(name) {
			case "category":
				s.Category, err = r.String()
			case "threshold":
				s.Threshold, err = r.String()
			default:
				s.Unknown, err = q.keep(s.Unknown, name, safetyNames)
			}
			return err
		})
	case "systemInstruction":
		err = objectInto(q, &w.SystemInstruction, q.contentMember)
	case "generationConfig":
		err = objectInto(q, &w.GenerationConfig, q.generation)
	case "cachedContent":
		w.CachedContent, err = r.String()
	default:
		w.Unknown, err = q.keep(w.Unknown, name, requestNames)
	}
	return err
}

// content reads one turn, an object (null is left to the reflective
// decoder, which reads it as a zero turn).
func (q requestReader) content(c *Content) error {
	if q.r.Kind() != '{' {
		return jsonx.ErrForm
	}
	return q.r.Object(func(name []byte) error { return q.contentMember(name, c) })
}

func (q requestReader) contentMember(name []byte, c *Content) error {
	r := q.r
	var err error
	switch string(name) {
	case "role":
		c.Role, err = r.Word("user", "model")
	case "parts":
		c.Parts, err = oneOrList(q, q.part)
	default:
		c.Unknown, err = q.keep(c.Unknown, name, contentNames)
	}
	return err
}

func (q requestReader) part(p *Part) error {
	if q.r.Kind() != '{' {
		return jsonx.ErrForm
	}
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "text":
			p.Text, err = q.text()
		case "thought":
			p.Thought, err = r.BoolPtr(new(bool))
		case "thoughtSignature":
			p.ThoughtSignature, err = r.String()
		case "inlineData":
			err = objectInto(q, &p.InlineData, func(name []byte, b *blob) error {
				return q.blob(name, "data", &b.MimeType, &b.Data, &b.Unknown)
			})
		case "fileData":
			err = objectInto(q, &p.FileData, func(name []byte, f *fileData) error {
				return q.blob(name, "fileUri", &f.MimeType, &f.FileURI, &f.Unknown)
			})
		case "functionCall":
			// A streamed call's pieces come only from services.
			err = objectInto(q, &p.FunctionCall, func(name []byte, c *FunctionCall) error {
				return q.call(name, "args", &c.ID, &c.Name, &c.Args, &c.Unknown)
			})
		case "functionResponse":
			// Its media (parts) are left to the reflective decoder.
			err = objectInto(q, &p.FunctionResponse, func(name []byte, f *functionResponse) error {
				return q.call(name, "response", &f.ID, &f.Name, &f.Response, &f.Unknown)
			})
		case "executableCode":
			err = objectInto(q, &p.ExecutableCode, func(name []byte, e *executableCode) error {
				return q.code(name, "language", "code", &e.Language, &e.Code, &e.ID, &e.Unknown)
			})
		case "codeExecutionResult":
			err = objectInto(q, &p.CodeExecutionResult, func(name []byte, e *codeExecutionResult) error {
				return q.code(name, "outcome", "output", &e.Outcome, &e.Output, &e.ID, &e.Unknown)
			})
		default:
			p.Unknown, err = q.keep(p.Unknown, name, partNames)
		}
		return err
	})
}

// blob reads a member of inline media (mimeType and data) or of media by
// URI (mimeType and fileUri): second names the member value holds.
func (q requestReader) blob(name []byte, second string, mimeType, value *string, kept *jsonx.Unknown) error {
	var err error
	switch string(name) {
	case "mimeType":
		*mimeType, err = q.r.Word("image/png", "image/jpeg", "application/pdf")
	case second:
		*value, err = q.r.String()
	default:
		*kept, err = q.keep(*kept, name, blobNames)
	}
	return err
}

// call reads a member of a call (id, name, args) or of its response (id,
// name, response): value names the member kept as it came.
func (q requestReader) call(name []byte, value string, id, fn *string, v *jsontext.Value, kept *jsonx.Unknown) error {
	var err error
	switch string(name) {
	case "id":
		*id, err = q.r.String()
	case "name":
		*fn, err = q.r.String()
	case value:
		*v, err = q.value()
	default:
		*kept, err = q.keep(*kept, name, callNames)
	}
	return err
}

// code reads a member of code the model wrote (language, code, id) or of
// its result (outcome, output, id): first and second name the members
// the first two strings hold.
func (q requestReader) code(name []byte, first, second string, firstValue, secondValue, id *string, kept *jsonx.Unknown) error {
	var err error
	switch string(name) {
	case first:
		*firstValue, err = q.r.String()
	case second:
		*secondValue, err = q.r.String()
	case "id":
		*id, err = q.r.String()
	default:
		*kept, err = q.keep(*kept, name, codeNames)
	}
	return err
}

func (q requestReader) tool(t *Tool) error {
	if q.r.Kind() != '{' {
		return jsonx.ErrForm
	}
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "functionDeclarations":
			t.FunctionDeclarations, err = objects(q, func(name []byte, d *functionDeclaration) error {
				var err error
				switch string(name) {
				case "name":
					d.Name, err = r.String()
				case "description":
					d.Description, err = r.String()
				// A schema is the body's own bytes: decoding reads it once
				// more, into the canonical tool's string (converted from
				// the Schema form, or copied), and nothing keeps the wire
				// declaration.
				case "parameters":
					d.Parameters, err = r.Raw()
				case "parametersJsonSchema":
					d.ParametersJSONSchema, err = r.Raw()
				default:
					d.Unknown, err = q.keep(d.Unknown, name, declNames)
				}
				return err
			})
		case "codeExecution":
			t.CodeExecution, err = q.value()
		case "googleSearch":
			t.GoogleSearch, err = q.value()
		case "urlContext":
			t.URLContext, err = q.value()
		default:
			// googleSearchRetrieval and computerUse among them.
			t.Unknown, err = q.keep(t.Unknown, name, toolNames)
		}
		return err
	})
}

func (q requestReader) toolConfig(name []byte, c *toolConfig) error {
	r := q.r
	if string(name) != "functionCallingConfig" {
		var err error
		c.Unknown, err = q.keep(c.Unknown, name, toolConfNames)
		return err
	}
	return objectInto(q, &c.FunctionCallingConfig, func(name []byte, f *functionCallingConfig) error {
		var err error
		switch string(name) {
		case "mode":
			f.Mode, err = r.Word("AUTO", "ANY", "NONE", "VALIDATED")
		case "allowedFunctionNames":
			f.AllowedFunctionNames, err = r.Strings()
		default:
			f.Unknown, err = q.keep(f.Unknown, name, toolConfNames)
		}
		return err
	})
}

func (q requestReader) generation(name []byte, g *generationConfig) error {
	r := q.r
	var err error
	switch string(name) {
	case "stopSequences":
		g.StopSequences, err = r.Strings()
	case "responseMimeType":
		g.ResponseMimeType, err = r.Word("application/json", "text/plain")
	case "responseSchema":
		g.ResponseSchema, err = q.value()
	case "responseJsonSchema":
		g.ResponseJSONSchema, err = q.value()
	case "responseModalities":
		g.ResponseModalities, err = r.Strings()
	case "candidateCount":
		g.CandidateCount, err = r.IntPtr()
	case "maxOutputTokens":
		g.MaxOutputTokens, err = r.IntPtr()
	case "temperature":
		g.Temperature, err = r.FloatPtr()
	case "topP":
		g.TopP, err = r.FloatPtr()
	case "topK":
		g.TopK, err = r.FloatPtr()
	case "seed":
		g.Seed, err = r.IntPtr()
	case "presencePenalty":
		g.PresencePenalty, err = r.FloatPtr()
	case "frequencyPenalty":
		g.FrequencyPenalty, err = r.FloatPtr()
	case "responseLogprobs":
		g.ResponseLogprobs, err = r.BoolPtr(new(bool))
	case "logprobs":
		g.Logprobs, err = r.IntPtr()
	case "enableEnhancedCivicAnswers":
		g.EnableEnhancedCivicAnswers, err = r.BoolPtr(new(bool))
	case "thinkingConfig":
		err = objectInto(q, &g.ThinkingConfig, func(name []byte, t *thinkingConfig) error {
			var err error
			switch string(name) {
			case "includeThoughts":
				t.IncludeThoughts, err = r.BoolPtr(new(bool))
			case "thinkingBudget":
				t.ThinkingBudget, err = r.IntPtr()
			case "thinkingLevel":
				t.ThinkingLevel, err = r.Word("LOW", "MEDIUM", "HIGH", "MINIMAL")
			default:
				t.Unknown, err = q.keep(t.Unknown, name, thinkingNames)
			}
			return err
		})
	case "mediaResolution":
		g.MediaResolution, err = r.String()
	default:
		// speechConfig among them.
		g.Unknown, err = q.keep(g.Unknown, name, genNames)
	}
	return err
}
