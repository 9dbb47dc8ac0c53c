package responses

import (
	"bytes"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// Compaction (POST /v1/responses/compact; translate/compaction.go says
// how Parley compacts for every upstream). The reply is the service's
// compacted response, {"id", "object": "response.compaction",
// "created_at", "output", "usage"}, whose output is the conversation's
// user messages followed by one compaction item, {"type": "compaction",
// "id": "cmp_...", "encrypted_content"}, the summary sealed. When a client
// sends a compaction item Parley made back, it becomes a user turn holding
// the summary, so that any upstream, of this dialect too, reads it. A
// compaction item the service itself made (its encrypted content opens
// for it alone) goes whole to a service of this dialect only.

var _ translate.CompactClient = Client{}

// Compacts implements translate.CompactClient.
func (Client) Compacts(req *parleyv1.Request) bool {
	return markCompact.In(req.GetExtensions())
}

// EncodeCompacted implements translate.CompactClient: a completed response
// whose output is the compaction item alone, whole or as the service
// streams one (created, in progress, the item added and done, completed).
func (Client) EncodeCompacted(req *parleyv1.Request, summary string, resp *parleyv1.Response) ([]byte, error) {
	item := Item{Type: "compaction", ID: translate.NewID("cmp_"), EncryptedContent: new(translate.SealSummary(summary, thisDialect))}
	done := snapshot(req, resp, parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED)
	done.Output = []Item{item}
	done.Usage = wireUsage(resp.GetUsage(), resp.GetExtensions())
	if !req.GetStream() {
		return jsonx.Marshal(done)
	}
	begun := *done
	begun.Status, begun.Output, begun.Usage = responseStatusWord(parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS), []Item{}, nil
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	zero := int64(0)
	for i, e := range []*event{
		{Type: "response.created", Response: &begun},
		{Type: "response.in_progress", Response: &begun},
		{Type: "response.output_item.added", OutputIndex: &zero, Item: &item},
		{Type: "response.output_item.done", OutputIndex: &zero, Item: &item},
		{Type: "response.completed", Response: done},
	} {
		e.SequenceNumber = new(int64(i))
		b, err := jsonx.Marshal(e)
		if err != nil {
			return nil, err
		}
		if err := w.Event(e.Type, b); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// compacted is the compacted response.
type compacted struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	CreatedAt int64  `json:"created_at"`
	Output    []Item `json:"output"`
	Usage     *usage `json:"usage"`
}

// EncodeCompaction implements translate.CompactClient.
func (Client) EncodeCompaction(req *parleyv1.Request, summary string, resp *parleyv1.Response) ([]byte, error) {
	w := &compacted{ID: translate.NewID("resp_"), Object: "response.compaction", CreatedAt: time.Now().Unix(), Output: []Item{}}
	for _, m := range req.GetMessages() {
		if m.GetRole() != parleyv1.Role_ROLE_USER {
			continue
		}
		it := Item{Type: "message", Role: "user", Content: &Content{}}
		for _, p := range m.GetParts() {
			if t := p.GetText(); t != nil && t.GetText() != "" {
				it.Content.Parts = append(it.Content.Parts, ContentPart{Type: "input_text", Text: new(t.GetText())})
			}
		}
		if len(it.Content.Parts) > 0 {
			w.Output = append(w.Output, it)
		}
	}
	w.Output = append(w.Output, Item{Type: "compaction", ID: translate.NewID("cmp_"), EncryptedContent: new(translate.SealSummary(summary, thisDialect))})
	w.Usage = wireUsage(resp.GetUsage(), resp.GetExtensions())
	if w.Usage == nil {
		w.Usage = &usage{}
	}
	return jsonx.Marshal(w)
}

// compactionItem decodes a client's compaction item: a user turn holding
// the summary when Parley made it, else nil (the item is kept whole).
func compactionItem(it *Item) *parleyv1.Message {
	if it.EncryptedContent == nil {
		return nil
	}
	o := translate.OpenOpaque(*it.EncryptedContent, thisDialect)
	if o.Kind != translate.SealCompaction || o.GetOrigin().GetDialect() != parleyv1.Dialect_DIALECT_CANONICAL {
		return nil
	}
	return translate.CompactionTurn(o.GetValue())
}
