package chatcompletions

import (
	"net/http"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Errors, both ways. Both OpenAI-family dialects share the error shape,
// in translate/internal/openai.

// EncodeError implements translate.Client.
func (Client) EncodeError(e *parleyv1.Error) (int, []byte) { return openai.EncodeError(e) }

// DecodeError implements translate.Upstream.
func (Upstream) DecodeError(status int, header http.Header, body []byte) *parleyv1.Error {
	return openai.DecodeError(thisDialect, status, header, body)
}
