package messages

import (
	"net/url"
	"slices"
	"strconv"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// modelInfo is one model of GET /v1/models.
type modelInfo struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

// modelList is the body of GET /v1/models.
type modelList struct {
	Data    []modelInfo `json:"data"`
	HasMore bool        `json:"has_more"`
	FirstID *string     `json:"first_id"`
	LastID  *string     `json:"last_id"`
}

var _ translate.ModelClient = Client{}

func newModelInfo(m *parleyv1.Model) modelInfo {
	created := time.Unix(0, 0).UTC()
	if m.GetCreatedAt() != nil {
		created = m.GetCreatedAt().AsTime().UTC()
	}
	name := m.GetDisplayName()
	if name == "" {
		name = m.GetId()
	}
	return modelInfo{Type: "model", ID: m.GetId(), DisplayName: name, CreatedAt: created.Format(time.RFC3339)}
}

// EncodeModel implements translate.ModelClient.
func (Client) EncodeModel(m *parleyv1.Model) ([]byte, error) { return jsonx.Marshal(newModelInfo(m)) }

// EncodeModels implements translate.ModelClient with the service's paging:
// limit (1 to 1000, default 20), after_id and before_id.
func (Client) EncodeModels(models []*parleyv1.Model, q url.Values) ([]byte, error) {
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return nil, translate.Invalid("limit", "must be an integer from 1 to 1000")
		}
		limit = n
	}
	index := func(id string) int {
		return slices.IndexFunc(models, func(m *parleyv1.Model) bool { return m.GetId() == id })
	}
	lo, hi := 0, len(models)
	if id := q.Get("after_id"); id != "" {
		lo = index(id) + 1
	}
	if id := q.Get("before_id"); id != "" {
		if i := index(id); i >= 0 {
			hi = i
		}
	}
	if lo > hi {
		lo = hi
	}
	page := models[lo:hi]
	more := len(page) > limit
	if more {
		if q.Get("before_id") != "" && q.Get("after_id") == "" {
			page = page[len(page)-limit:]
		} else {
			page = page[:limit]
		}
	}
	out := modelList{Data: make([]modelInfo, 0, len(page)), HasMore: more}
	for _, m := range page {
		out.Data = append(out.Data, newModelInfo(m))
	}
	if len(out.Data) > 0 {
		out.FirstID, out.LastID = &out.Data[0].ID, &out.Data[len(out.Data)-1].ID
	}
	return jsonx.Marshal(out)
}
