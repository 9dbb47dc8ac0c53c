package generatecontent

import (
	"net/url"
	"strconv"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// modelInfo is one model of GET /v1beta/models.
type modelInfo struct {
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId,omitempty"`
	Version                    string   `json:"version"`
	DisplayName                string   `json:"displayName,omitempty"`
	Description                string   `json:"description,omitempty"`
	InputTokenLimit            int64    `json:"inputTokenLimit,omitempty"`
	OutputTokenLimit           int64    `json:"outputTokenLimit,omitempty"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	Thinking                   bool     `json:"thinking,omitempty"`
}

// modelList is the body of GET /v1beta/models.
type modelList struct {
	Models        []modelInfo `json:"models"`
	NextPageToken string      `json:"nextPageToken,omitempty"`
}

var _ translate.ModelClient = Client{}

// generationMethods are what every model behind Parley answers.
var generationMethods = []string{"generateContent", "streamGenerateContent", "countTokens"}

func newModelInfo(m *parleyv1.Model) modelInfo {
	return modelInfo{
		Name: "models/" + m.GetId(), BaseModelID: m.GetId(), Version: "parley",
		DisplayName: m.GetDisplayName(), Description: m.GetDescription(),
		InputTokenLimit: m.GetInputTokenLimit(), OutputTokenLimit: m.GetOutputTokenLimit(),
		SupportedGenerationMethods: generationMethods, Thinking: m.GetReasoning(),
	}
}

// EncodeModel implements translate.ModelClient.
func (Client) EncodeModel(m *parleyv1.Model) ([]byte, error) { return jsonx.Marshal(newModelInfo(m)) }

// EncodeModels implements translate.ModelClient with the service's paging:
// pageSize (default 50, at most 1000) and the pageToken of the previous
// page, which Parley makes the offset of the next model.
func (Client) EncodeModels(models []*parleyv1.Model, q url.Values) ([]byte, error) {
	size := 50
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, translate.Invalid("pageSize", "must be a non-negative integer")
		}
		if n > 0 {
			size = min(n, 1000)
		}
	}
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 || n > len(models) {
			return nil, translate.Invalid("pageToken", "is not a token from an earlier page")
		}
		start = n
	}
	end := min(start+size, len(models))
	out := modelList{Models: make([]modelInfo, 0, end-start)}
	for _, m := range models[start:end] {
		out.Models = append(out.Models, newModelInfo(m))
	}
	if end < len(models) {
		out.NextPageToken = strconv.Itoa(end)
	}
	return jsonx.Marshal(out)
}
