package translate

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Dialect describes one dialect to the layers above translate: its name,
// its codecs and the HTTP endpoints its clients call. Each dialect package
// exports one; the list of them is built once, in package dialects, and
// the server, the dispatcher, the command and the tests range over it. No
// layer above translate names a dialect, so adding one is one package and
// one line in that list.
type Dialect struct {
	// Enum is the canonical model's name for the dialect; Name derives the
	// configuration's spelling from it.
	Enum parleyv1.Dialect
	// Provider is how traces name the services that speak it
	// (gen_ai.provider.name in the OpenTelemetry GenAI conventions).
	Provider string
	// Client serves clients that speak the dialect; nil when Parley does
	// not accept it from clients.
	Client Client
	// Upstream calls chat services that speak it; nil when none does
	// (a music service is not a chat upstream).
	Upstream Upstream
	// TaskClient and TaskUpstream are the two sides of a task dialect;
	// nil for chat dialects.
	TaskClient   TaskClient
	TaskUpstream TaskUpstream
	// Routes are the endpoints through which clients speak it.
	Routes []Route
	// Framing says how a stream reply is framed for a request; nil frames
	// every stream as server-sent events.
	Framing func(in *Incoming) Framing
	// RateLimitHeaders sets on a reply the rate-limit headers the
	// dialect's own service sends, for a key with per-minute limits; nil
	// when the service sends none.
	RateLimitHeaders func(h http.Header, rl *RateLimits, now time.Time)
	// Try is a streamed request of one user message to a model, as the
	// dialect's clients send it (the console's try-it view sends it);
	// nil for dialects without chat clients.
	Try func(model, prompt string) TryRequest
	// Socket is how the dialect's clients speak over a WebSocket; nil
	// when they do not.
	Socket *Socket
}

// Socket is a dialect's WebSocket transport: on one connection, each
// message the client sends is a streamed generation request, answered by
// the events of its stream, one message each, as the dialect's stream
// would carry them; the next request may follow on the same connection.
type Socket struct {
	// Pattern is the endpoint the connection's upgrade request comes to;
	// its headers carry the client's key.
	Pattern string
	// Request turns a client's message into the body of the streamed
	// request it stands for, or an *InputError naming what is wrong.
	Request func(msg []byte) ([]byte, error)
	// Error is the message that reports an error answered before any
	// event: the HTTP status and the dialect's JSON error body.
	Error func(status int, body []byte) []byte
}

// TryRequest is a request as a client of a dialect sends it.
type TryRequest struct {
	Method, Path string
	Body         []byte
}

// Name is the dialect's name as configuration, metrics and logs spell it.
func (d *Dialect) Name() string { return DialectName(d.Enum) }

// Op is what a client endpoint does, whatever dialect it belongs to.
type Op int

// The operations of client endpoints. Each is served by the server the
// same way for every dialect, through the dialect's Client and the
// optional interfaces the operation needs (CountClient, ModelClient,
// StoredClient).
const (
	// OpGenerate answers a generation request, whole or streamed as the
	// request (or its path) asks.
	OpGenerate Op = iota + 1
	// OpCount counts a request's input tokens (CountClient).
	OpCount
	// OpListModels lists the models the caller may use (ModelClient).
	OpListModels
	// OpGetModel describes the model named by the {model} wildcard.
	OpGetModel
	// OpGetStored returns the stored response named by the {id} wildcard
	// (StoredClient).
	OpGetStored
	// OpDeleteStored deletes it.
	OpDeleteStored
	// OpListStoredInput pages through its input (StoredClient).
	OpListStoredInput
	// OpSubmitTask submits a task (TaskClient).
	OpSubmitTask
	// OpQueryTasks returns the tasks a query names.
	OpQueryTasks
	// OpGetTask returns the task named by the {id} wildcard.
	OpGetTask
	// OpCompact compacts a conversation into a summary its client carries
	// on with (CompactClient).
	OpCompact
)

// Route is one client endpoint of a dialect.
type Route struct {
	// Pattern is the net/http.ServeMux pattern: method and path, with the
	// wildcards {model} and {id} where the operation reads them.
	Pattern string
	// Op is the operation the endpoint serves; Resolve, when set, decides
	// it per request instead.
	Op Op
	// Resolve reads the operation from the request path, for dialects that
	// name the method there; it fills in what the path carries (the model,
	// whether a stream was asked for). An error is rendered in the dialect.
	Resolve func(r *http.Request, in *Incoming) (Op, error)
	// Claims, set on a pattern that several dialects share, says whether
	// this dialect answers the request; the one dialect without Claims on
	// that pattern answers the rest.
	Claims func(h http.Header) bool
}

// Framing is how a stream reply is put on the wire.
type Framing int

const (
	// FramingSSE frames each event as a server-sent event.
	FramingSSE Framing = iota
	// FramingJSONArray sends the events as the elements of one JSON array.
	FramingJSONArray
)

// StoredClient is the client side of a stateful dialect: one whose clients
// expect Parley to keep their responses, continue them by id, read them
// back and delete them. The rules of keeping (chains, truncation, expiry)
// are the same for every such dialect; what is the dialect's own is how
// they are shown and how their failures read.
type StoredClient interface {
	// StoredNotFound is the error for a stored response that is unknown to
	// the caller. continued says it was named as the response to continue,
	// in the dialect's own field; otherwise field names where the id came
	// from ("" for a path).
	StoredNotFound(id, field string, continued bool) error
	// ContextTooLong is the error for an input over the model's context
	// window, in tokens by Parley's estimate.
	ContextTooLong(window, given int64) error
	// EncodeDeleted renders the reply to a deletion.
	EncodeDeleted(id string) ([]byte, error)
	// EncodeInputItems renders the page of a stored response's input that
	// the query q asks for; bad paging parameters yield an *InputError.
	EncodeInputItems(input []*parleyv1.Message, responseID string, q url.Values) ([]byte, error)
}

// Dialects is the list of every dialect Parley speaks.
type Dialects []*Dialect

// Named returns the dialect configuration calls name, or nil.
func (ds Dialects) Named(name string) *Dialect {
	i := slices.IndexFunc(ds, func(d *Dialect) bool { return d.Name() == strings.ToLower(name) })
	if i < 0 {
		return nil
	}
	return ds[i]
}

// Names lists the dialects' names in order.
func (ds Dialects) Names() []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name()
	}
	return out
}

// Clients lists the chat dialects that clients may speak.
func (ds Dialects) Clients() Dialects {
	return slices.DeleteFunc(slices.Clone(ds), func(d *Dialect) bool { return d.Client == nil })
}

// Tasks lists the task dialects.
func (ds Dialects) Tasks() Dialects {
	return slices.DeleteFunc(slices.Clone(ds), func(d *Dialect) bool { return d.TaskClient == nil && d.TaskUpstream == nil })
}
