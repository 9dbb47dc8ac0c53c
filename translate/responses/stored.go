package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// itemList is the reply of GET /v1/responses/{id}/input_items.
type itemList struct {
	Object  string  `json:"object"`
	Data    []Item  `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// deleted is the reply of DELETE /v1/responses/{id}.
type deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// EncodeDeleted renders the reply to a deletion.
func EncodeDeleted(id string) ([]byte, error) {
	return jsonx.Marshal(deleted{ID: id, Object: "response.deleted", Deleted: true})
}

// EncodeItemList renders one page of input items.
func EncodeItemList(items []Item, hasMore bool) ([]byte, error) {
	l := itemList{Object: "list", Data: items, HasMore: hasMore}
	if l.Data == nil {
		l.Data = []Item{}
	}
	if len(items) > 0 {
		first, last := items[0].ID, items[len(items)-1].ID
		l.FirstID, l.LastID = &first, &last
	}
	return jsonx.Marshal(l)
}

// itemPrefixes are the id prefixes the service gives each kind of item.
var itemPrefixes = map[string]string{
	"message": "msg_", "function_call": "fc_", "function_call_output": "fco_", "reasoning": "rs_",
	"computer_call": "cu_", "computer_call_output": "cuo_", "web_search_call": "ws_", "file_search_call": "fs_",
	"item_reference": "ref_",
}

// InputItems renders a stored conversation as the items the input-items
// listing shows, oldest first: every item typed, message content as an
// array of parts, every item with an id — its own when it had one, else
// one derived from seed (the response id) and its position, so that it is
// the same on every read — and message items completed.
func InputItems(msgs []*parleyv1.Message, seed string) ([]Item, error) {
	e := &encoder{req: &parleyv1.Request{Messages: msgs}, same: true}
	out := make([]Item, 0, len(msgs))
	for i, m := range msgs {
		var err error
		if out, err = e.turn(out, m, "input["+strconv.Itoa(i)+"]"); err != nil {
			return nil, err
		}
	}
	for i := range out {
		it := &out[i]
		if it.Type == "" {
			it.Type = "message"
		}
		if it.Type == "message" {
			if it.Status == "" {
				it.Status = "completed"
			}
			if c := it.Content; c != nil && c.String {
				kind := "input_text"
				if it.Role == "assistant" {
					kind = "output_text"
				}
				text := c.Text
				it.Content = &Content{Parts: []ContentPart{{Type: kind, Text: &text}}}
			}
		}
		if it.ID == "" {
			sum := sha256.Sum256([]byte(seed + ":" + strconv.Itoa(i)))
			prefix, ok := itemPrefixes[it.Type]
			if !ok {
				prefix = "item_"
			}
			it.ID = prefix + hex.EncodeToString(sum[:20])
		}
	}
	return out, nil
}
