package openai

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Model is one model of GET /v1/models.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelList is the body of GET /v1/models: the service lists every model
// in one page.
type ModelList struct {
	Object string  `json:"object"`
	Data   []Model `json:"data"`
}

func model(m *parleyv1.Model) Model {
	var created int64
	if m.GetCreatedAt() != nil {
		created = m.GetCreatedAt().AsTime().Unix()
	}
	owner := m.GetOwnedBy()
	if owner == "" {
		owner = "parley"
	}
	return Model{ID: m.GetId(), Object: "model", Created: created, OwnedBy: owner}
}

// EncodeModel renders one model.
func EncodeModel(m *parleyv1.Model) ([]byte, error) { return jsonx.Marshal(model(m)) }

// EncodeModels renders the list.
func EncodeModels(models []*parleyv1.Model) ([]byte, error) {
	out := ModelList{Object: "list", Data: make([]Model, 0, len(models))}
	for _, m := range models {
		out.Data = append(out.Data, model(m))
	}
	return jsonx.Marshal(out)
}
