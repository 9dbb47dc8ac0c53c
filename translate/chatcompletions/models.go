package chatcompletions

import (
	"net/url"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/openai"
)

var _ translate.ModelClient = Client{}

// EncodeModel implements translate.ModelClient in the OpenAI shape.
func (Client) EncodeModel(m *parleyv1.Model) ([]byte, error) { return openai.EncodeModel(m) }

// EncodeModels implements translate.ModelClient: the service lists every
// model in one page and takes no paging parameters.
func (Client) EncodeModels(models []*parleyv1.Model, _ url.Values) ([]byte, error) {
	return openai.EncodeModels(models)
}
