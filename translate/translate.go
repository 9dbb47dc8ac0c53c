// Package translate holds the contracts that every dialect implements, the
// errors they share, and the pull-based stream plumbing between them.
//
// A dialect has two roles, each its own interface:
//
//   - Client: the dialect a client speaks to Parley. It decodes the client's
//     request into a canonical parleyv1.Request, and encodes canonical
//     responses, streams and errors into what that dialect's clients expect
//     ("wire in, wire out").
//   - Upstream: the dialect an upstream service speaks. It encodes a canonical
//     request into the HTTP request such a service accepts, and decodes its
//     responses, event streams and error bodies back into canonical form
//     ("canonical in, canonical out").
//
// Dialects meet only in the canonical model: a dialect package never imports
// another, so N dialects cost N translators. This package knows no dialect's
// field names.
//
// Each dialect package also exports a Dialect descriptor: its codecs, its
// client endpoints with the operation each serves, and its stream framing.
// The layers above (server, dispatch, stored, tasks) are handed the list
// of descriptors and name no dialect; task dialects (music tasks) have
// their own two sides, TaskClient and TaskUpstream. Retry policy (Retry)
// and the canonical stream's order (StreamChecker) are decided here, once,
// for every dialect.
//
// Streams are pulled, not pushed. An upstream stream is an
// iter.Seq2[*parleyv1.StreamEvent, error] built by DecodeStream from the
// shared SSE reader and a dialect's StreamDecoder; the HTTP handler ranges
// over it and hands each event to the client dialect's StreamEncoder, which
// writes that dialect's frames. No goroutine or channel sits in between, and
// cancelling the request context ends the upstream read.
package translate

import (
	"net/http"
	"net/url"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/sse"
)

// Incoming is a client's HTTP request as a dialect's decoder sees it. The
// server has already routed it, so path parameters arrive parsed.
type Incoming struct {
	Header http.Header
	Query  url.Values
	// Model named by the path, for dialects that put the model there.
	Model string
	// Stream is true when the path itself asked for a stream.
	Stream bool
	Body   []byte
}

// Outgoing is an HTTP request toward an upstream. Path and Query are
// relative to the upstream's configured base URL.
type Outgoing struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// Stream is true when the reply will be an event stream.
	Stream bool
	// Dropped names, by canonical field path, what the request asked for
	// that this upstream's dialect has no way to carry, so that the
	// gateway can tell the client instead of dropping it silently.
	Dropped []string
}

// Target says where an upstream request goes and as whom.
type Target struct {
	// Upstream is the configured upstream's name; decoders stamp it into the
	// Origin of every opaque value the upstream makes, so that the value is
	// only ever sent back to it.
	Upstream string
	// Model is the upstream's name for the model.
	Model string
	// APIKey is the upstream credential. Encoders put it where the dialect
	// expects it and nowhere else.
	APIKey string
	// Shared is set when other configured upstreams speak the same
	// dialect; decoders stamp it into every Origin (Origin.shared), so
	// that clients of that dialect, too, get the upstream's opaque values
	// sealed with the name of their maker.
	Shared bool
}

// Client is the client-facing side of a dialect.
type Client interface {
	Dialect() parleyv1.Dialect
	// APIKey returns the key the client presented, from wherever clients
	// of the dialect put it, or "" when it presented none.
	APIKey(in *Incoming) string
	// DecodeRequest turns a client request into canonical form. Bad input
	// yields an *InputError naming the field in the dialect's own spelling.
	DecodeRequest(in *Incoming) (*parleyv1.Request, error)
	// EncodeResponse renders a whole response as the body of a 200 reply.
	// The request is the one the response answers; dialects that echo
	// request settings take them from it.
	EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error)
	// NewStreamEncoder returns the state machine that renders one canonical
	// stream for one request.
	NewStreamEncoder(req *parleyv1.Request) StreamEncoder
	// EncodeError renders an error before any byte of the reply has been
	// written: the HTTP status and the dialect's JSON error body.
	EncodeError(e *parleyv1.Error) (status int, body []byte)
}

// CountClient is the client side of a dialect's count-tokens endpoint,
// for the dialects that have one.
type CountClient interface {
	// DecodeCountRequest turns the body of a count-tokens call into the
	// request whose input is to be counted.
	DecodeCountRequest(in *Incoming) (*parleyv1.Request, error)
	// EncodeCount renders a count as the body of a 200 reply.
	EncodeCount(c *parleyv1.TokenCount) ([]byte, error)
}

// CountUpstream is the upstream side of a dialect's count-tokens endpoint.
type CountUpstream interface {
	EncodeCountRequest(req *parleyv1.Request, t Target) (*Outgoing, error)
	DecodeCount(body []byte) (*parleyv1.TokenCount, error)
}

// Upstream is the upstream-facing side of a dialect.
type Upstream interface {
	Dialect() parleyv1.Dialect
	// EncodeRequest builds the HTTP request a service of this dialect
	// accepts. A request the dialect cannot express yields an
	// *UnsupportedError.
	EncodeRequest(req *parleyv1.Request, t Target) (*Outgoing, error)
	// DecodeResponse turns a whole 2xx reply body into canonical form.
	DecodeResponse(t Target, body []byte) (*parleyv1.Response, error)
	// NewStreamDecoder returns the state machine that reads one event
	// stream from this upstream.
	NewStreamDecoder(t Target) StreamDecoder
	// DecodeError turns a non-2xx reply into a canonical error, keeping the
	// upstream's status.
	DecodeError(status int, header http.Header, body []byte) *parleyv1.Error
}

// StreamEncoder renders canonical stream events as one client dialect's
// frames. Its states only move forward: an event out of order is an error,
// never papered over.
type StreamEncoder interface {
	// Encode writes the frames for one event (possibly none).
	Encode(w *sse.Writer, ev *parleyv1.StreamEvent) error
	// Fail ends the stream with the dialect's in-stream error. It is used
	// once bytes have gone to the client; before that, errors are rendered
	// by Client.EncodeError.
	Fail(w *sse.Writer, e *parleyv1.Error) error
}

// StreamDecoder turns one upstream's SSE events into canonical events. Its
// states only move forward, and it never swallows a parse error.
type StreamDecoder interface {
	// Decode appends the canonical events for one SSE event to dst.
	Decode(dst []*parleyv1.StreamEvent, ev sse.Event) ([]*parleyv1.StreamEvent, error)
	// End is called when the upstream body ends cleanly. It appends any
	// closing events, or returns an error when the stream stopped before
	// the dialect's end marker.
	End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error)
}

// BearerToken returns the token of an "Authorization: Bearer" header, or "".
func BearerToken(h http.Header) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// ModelClient renders model listings in a dialect's own shape, for the
// dialects that list models.
type ModelClient interface {
	// EncodeModels renders one page of a listing; q holds the dialect's
	// paging parameters, and bad ones yield an *InputError.
	EncodeModels(models []*parleyv1.Model, q url.Values) ([]byte, error)
	// EncodeModel renders one model.
	EncodeModel(m *parleyv1.Model) ([]byte, error)
}
