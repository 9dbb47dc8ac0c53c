// Package dialecttest describes each chat dialect once for the tests that
// every dialect shares: the golden round trip of its own cases (Run), the
// cross-dialect tests (translate/cross), the fuzz targets and the
// benchmarks. Adding a dialect is one more Spec in All; a test checks All
// against the list in package dialects.
//
// Paths are relative to a package directory under translate/
// (translate/messages, translate/cross, ...), where the tests that read
// them run.
package dialecttest

import (
	"net/http"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
)

// Spec describes one dialect to the shared tests.
type Spec struct {
	// Dialect is the dialect's own descriptor, so that the codecs under
	// test are the ones the gateway serves, and its Name is the one the
	// cross cases use.
	*translate.Dialect

	// Cases holds the golden case folders; their request.json and
	// stream.sse files also seed the fuzz targets.
	Cases string
	// CaseModel is the model the golden cases run with: replies and
	// streams are decoded for it, and a client that names its model
	// outside the body names it unless the case's SDK call named another.
	CaseModel string
	// Model is the model an upstream of the dialect is asked for, and a
	// client of it names, in the cross-dialect tests.
	Model string
	// Incoming wraps a client's request body, its headers and the model
	// it named outside the body, as the server hands them to the client
	// codec.
	Incoming func(h http.Header, model string, body []byte) *translate.Incoming

	// Schemas pins the JSON Schemas of the wire types and returns
	// validators of a request and a reply.
	Schemas func(t *testing.T) (request, response *golden.Validator)
	// ClientRequest is the request a reply or stream of the dialect's own
	// upstream is rendered for, in the golden cases and the benchmarks.
	ClientRequest *parleyv1.Request
	// PinStreams pins every re-encoded stream in stream.client.sse, for a
	// dialect whose chunking is the encoder's choice.
	PinStreams bool
	// CheckUpstream checks a golden upstream request apart from its body;
	// model is the one the client named.
	CheckUpstream func(t *testing.T, req *parleyv1.Request, out *translate.Outgoing, model string)

	// The official SDK's checks. SDKStream compares what the SDK reads in
	// a stream with what it reads in the whole reply of the same response;
	// SDKSameStream, where set, compares what it reads in a re-encoded
	// stream with what it reads in the upstream's own stream. An error
	// must reach the SDK with its message and, where the dialect's error
	// carries them, its status and reason (any reason when "").
	SDKRequest     func(t testing.TB, body []byte)
	SDKReply       func(t testing.TB, body []byte)
	SDKStream      func(t testing.TB, stream, whole []byte)
	SDKSameStream  func(t testing.TB, upstream, stream []byte)
	SDKStreamError func(t testing.TB, stream []byte, status int, reason, message string)
	SDKError       func(t testing.TB, status int, body []byte, reason, message string)

	// BenchRequest is a representative client request, a file under
	// Cases; Stream500 builds an upstream stream of about 500 events,
	// which decodes to at least Stream500Events canonical ones.
	BenchRequest    string
	Stream500       func() []byte
	Stream500Events int
	// StreamText is a short recorded stream of text from the dialect's
	// service, a file under Cases, or "" for a dialect without one: a
	// stream of a dozen events, where what a stream costs once (its start
	// and its end) weighs as it does in real traffic.
	StreamText string
	// Reply is a whole reply of text from the dialect's service, a file
	// under Cases.
	Reply string
}

// All describes every chat dialect, in the order of dialects.All().
var All = []*Spec{Messages, GenerateContent, Responses, ChatCompletions}

// Named returns the description of the dialect of that name, or nil.
func Named(name string) *Spec {
	for _, s := range All {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// testdata is the repository's testdata folder.
const testdata = "../../testdata/"

// withHeaders is Incoming for a dialect whose client names the model in
// the body.
func withHeaders(h http.Header, _ string, body []byte) *translate.Incoming {
	return &translate.Incoming{Header: h, Body: body}
}
