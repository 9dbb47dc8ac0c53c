package converse

import (
	"io"
	"net/http"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/eventstream"
)

// thisDialect is this package's dialect.
const thisDialect = parleyv1.Dialect_DIALECT_CONVERSE

// Dialect describes the Converse dialect to the layers above translate:
// an upstream only, since clients do not speak it to Parley.
func Dialect() *translate.Dialect {
	return &translate.Dialect{
		Enum:     thisDialect,
		Provider: "aws.bedrock",
		Upstream: Upstream{},
	}
}

// Upstream is the Converse API as Amazon Bedrock serves it.
type Upstream struct{}

var (
	_ translate.Upstream      = Upstream{}
	_ translate.CountUpstream = Upstream{}
	_ translate.StreamDecoder = (*streamDecoder)(nil)
	_ translate.OpenFrames    = OpenFrames
)

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return thisDialect }

// OpenFrames opens a /converse-stream reply, which is framed as AWS
// event-stream messages rather than server-sent events: each message
// becomes the event its :event-type header names, and an exception
// message ends the stream with the service's error. The stream decoder
// reads the events it yields (translate.DecodeFramed).
func OpenFrames(body io.Reader, maxFrame int) translate.Frames {
	return eventstream.NewReader(thisDialect, body, maxFrame)
}

// DecodeError implements translate.Upstream: the exception named by
// X-Amzn-ErrorType (or the body's __type), with the body's message.
func (Upstream) DecodeError(status int, header http.Header, body []byte) *parleyv1.Error {
	return eventstream.DecodeError(thisDialect, status, header, body)
}
