package responses

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Dialect describes the responses dialect to the layers above translate.
// It is stateful: its clients expect their responses kept, continued by
// previous_response_id, read back and deleted, which Parley does for every
// upstream (package stored); Client implements translate.StoredClient.
func Dialect() *translate.Dialect {
	return &translate.Dialect{
		Enum:             thisDialect,
		Provider:         "openai",
		Client:           Client{},
		Upstream:         Upstream{},
		RateLimitHeaders: openai.RateLimitHeaders,
		Try:              try,
		Socket:           socket,
		// A request is read, its stream encoder made and an upstream
		// request written on the handler's stack: what goes deep goes
		// off it by itself (unmarshalRequest, keptTool, NewStreamEncoder,
		// Upstream.EncodeRequest).
		Routes: []translate.Route{
			{Pattern: "POST /v1/responses", Op: translate.OpGenerate},
			{Pattern: "POST /v1/responses/input_tokens", Op: translate.OpCount},
			{Pattern: "POST /v1/responses/compact", Op: translate.OpCompact},
			{Pattern: "GET /v1/responses/{id}", Op: translate.OpGetStored},
			{Pattern: "DELETE /v1/responses/{id}", Op: translate.OpDeleteStored},
			{Pattern: "GET /v1/responses/{id}/input_items", Op: translate.OpListStoredInput},
		},
	}
}

var _ translate.StoredClient = Client{}

// errorWithCode is an error with the service's own code and param, which
// its clients read.
func errorWithCode(code parleyv1.Code, param, wireCode, format string, args ...any) error {
	e := &parleyv1.Error{
		Code:       code,
		Message:    fmt.Sprintf(format, args...),
		Origin:     &parleyv1.Origin{Dialect: thisDialect},
		Extensions: &parleyv1.Extensions{Dialect: thisDialect, Fields: map[string]string{"code": strconv.Quote(wireCode)}},
	}
	if param != "" {
		e.FieldViolations = []*parleyv1.FieldViolation{{Field: param, Description: e.GetMessage()}}
	}
	return &translate.StatusError{Err: e}
}

// StoredNotFound implements translate.StoredClient with the service's
// codes: previous_response_not_found (param previous_response_id) for the
// response to continue, not_found otherwise.
func (Client) StoredNotFound(id, field string, continued bool) error {
	if continued {
		return errorWithCode(parleyv1.Code_CODE_NOT_FOUND, "previous_response_id", "previous_response_not_found", "Previous response with id '%s' not found.", id)
	}
	return errorWithCode(parleyv1.Code_CODE_NOT_FOUND, field, "not_found", "Response with id '%s' not found.", id)
}

// ContextTooLong implements translate.StoredClient with the service's
// context_length_exceeded.
func (Client) ContextTooLong(window, given int64) error {
	return errorWithCode(parleyv1.Code_CODE_INVALID_ARGUMENT, "input", "context_length_exceeded",
		"Your input exceeds the context window of this model (%d tokens, about %d given). Please adjust your input and try again.", window, given)
}

// EncodeDeleted implements translate.StoredClient.
func (Client) EncodeDeleted(id string) ([]byte, error) { return EncodeDeleted(id) }

// EncodeInputItems implements translate.StoredClient: the whole input of a
// response (its rebuilt conversation and its own input), paged with the
// service's parameters: limit (1 to 100, default 20), order (asc or desc,
// default desc), after and before (item ids).
func (Client) EncodeInputItems(input []*parleyv1.Message, responseID string, q url.Values) ([]byte, error) {
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, translate.Invalid("limit", "must be an integer from 1 to 100; got %q", v)
		}
		limit = n
	}
	order := q.Get("order")
	switch order {
	case "":
		order = "desc"
	case "asc", "desc":
	default:
		return nil, translate.Invalid("order", "must be asc or desc; got %q", order)
	}
	items, err := InputItems(input, responseID)
	if err != nil {
		return nil, err
	}
	if order == "desc" {
		slices.Reverse(items)
	}
	for _, cursor := range []string{"after", "before"} {
		id := q.Get(cursor)
		if id == "" {
			continue
		}
		i := slices.IndexFunc(items, func(it Item) bool { return it.ID == id })
		if i < 0 {
			return nil, translate.Invalid(cursor, "no input item of this response has the id %q", id)
		}
		if cursor == "after" {
			items = items[i+1:]
		} else {
			items = items[:i]
		}
	}
	more := len(items) > limit
	if more {
		if q.Get("before") != "" && q.Get("after") == "" {
			// Paging backwards: the page ends at the cursor.
			items = items[len(items)-limit:]
		} else {
			items = items[:limit]
		}
	}
	return EncodeItemList(items, more)
}

var (
	_ translate.StreamEncoder = (*streamEncoder)(nil)
	_ translate.StreamDecoder = (*streamDecoder)(nil)
)

// Forward implements translate.Forwarder. A responses client's request
// goes on as it came, with the upstream's model, when every reasoning
// value in it is its own, it continues no stored response (Parley
// resolves those itself) and it asks for nothing this dialect cannot
// carry. Whether Parley keeps the response is the stored-response
// service's business: the server forwards only requests it leaves as
// they came.
func (Upstream) Forward(req *parleyv1.Request, src *translate.Source, t translate.Target) (*translate.Outgoing, bool, error) {
	if req.GetPreviousResponseId() != "" || len(translate.CacheHintPaths(req)) > 0 || markRewritten.In(req.GetExtensions()) {
		return nil, false, nil
	}
	body, ok := translate.ForwardBody(req, src, thisDialect, t)
	if !ok {
		return nil, false, nil
	}
	return &translate.Outgoing{Method: http.MethodPost, Path: Path, Header: openai.RequestHeader(t.APIKey, req.GetStream()), Body: body, Stream: req.GetStream()}, true, nil
}

var _ translate.Forwarder = Upstream{}

// try is a streamed response, as the service's clients send it.
func try(model, prompt string) translate.TryRequest {
	body, _ := json.Marshal(map[string]any{"model": model, "stream": true, "store": false, "input": prompt})
	return translate.TryRequest{Method: http.MethodPost, Path: "/v1/responses", Body: body}
}
