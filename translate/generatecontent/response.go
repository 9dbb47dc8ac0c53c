package generatecontent

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The reply walk, in both directions: an upstream's reply to the canonical
// response (Upstream.DecodeResponse) and the canonical response to a
// client's reply (Client.EncodeResponse), candidate by candidate. Parts are
// mapped in parts.go; finish reasons, safety, metadata and usage in their
// own files.

// DecodeResponse implements translate.Upstream.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	// The quick way when it can, as a stream's chunks are read; what the
	// reader read lives in it, so it goes back to the pool only once the
	// canonical response, which holds nothing of it, is made.
	r := chunkReaders.Get().(*chunkReader)
	defer func() {
		r.release()
		chunkReaders.Put(r)
	}()
	w, quick := r.readWhole(body)
	if !quick {
		*w = Response{}
		if err := jsonx.Unmarshal(body, w); err != nil {
			return nil, translate.UpstreamProtocol(thisDialect, err)
		}
	}
	if w.Error != nil {
		return nil, translate.UpstreamFailed(errorFromDetail(w.Error))
	}
	d := responseDecoder{t: t, id: w.ResponseID}
	resp := &parleyv1.Response{Id: w.ResponseID, Model: w.ModelVersion, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED, Extensions: upstreamMark()}
	for i := range w.Candidates {
		c, err := d.candidate(&w.Candidates[i], i)
		if err != nil {
			return nil, translate.UpstreamProtocol(thisDialect, fmt.Errorf("candidates[%d]: %w", i, err))
		}
		resp.Candidates = append(resp.Candidates, c)
	}
	if pf := w.PromptFeedback; pf != nil {
		resp.PromptFeedback = readPromptFeedback(pf, &resp.Extensions)
	}
	if u := w.UsageMetadata; u != nil {
		resp.Usage = canonicalUsage(u, nil)
		jsonx.Keep(&resp.Extensions, thisDialect, "usageMetadata", u.Unknown)
		for name, list := range u.detailLists() {
			for i, m := range *list {
				jsonx.Keep(&resp.Extensions, thisDialect, detailKey(name, i), m.Unknown)
			}
		}
	}
	jsonx.Keep(&resp.Extensions, thisDialect, "", w.Unknown)
	return resp, nil
}

type responseDecoder struct {
	t  translate.Target
	id string // the response's id, for the ids of calls that came without one
}

func (d responseDecoder) candidate(w *candidate, i int) (*parleyv1.Candidate, error) {
	c := &parleyv1.Candidate{Index: int32(i)}
	if w.Index != nil {
		c.Index = int32(*w.Index)
	} else {
		markNoIndex.Keep(&c.Extensions, jsontext.Value("true"))
	}
	if w.Content != nil {
		for j := range w.Content.Parts {
			p, err := d.part(&w.Content.Parts[j], int(c.Index), j)
			if err != nil {
				return nil, fmt.Errorf("content.parts[%d]: %w", j, err)
			}
			c.Parts = append(c.Parts, p)
		}
		if w.Content.Role != "model" {
			jsonx.KeepValue(&c.Extensions, thisDialect, "content/role", jsonx.Quote(w.Content.Role))
		}
		jsonx.Keep(&c.Extensions, thisDialect, "content", w.Content.Unknown)
	}
	if w.FinishReason != "" {
		c.FinishReason = finishReason(w.FinishReason, c)
	}
	c.FinishReason = translate.ToolUseFinish(c.FinishReason, translate.HasToolCalls(c.Parts) && w.FinishReason != "")
	c.FinishMessage = w.FinishMessage
	d.metadata(w, c)
	jsonx.Keep(&c.Extensions, thisDialect, "", w.Unknown)
	return c, nil
}

// EncodeResponse implements translate.Client.
func (Client) EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error) {
	same := resp.GetExtensions().GetDialect() == thisDialect
	w := Response{ResponseID: resp.GetId(), ModelVersion: resp.GetModel()}
	if w.ModelVersion == "" {
		w.ModelVersion = req.GetModel()
	}
	enc := clientEncoder{same: same}
	for _, c := range resp.GetCandidates() {
		wc, err := enc.candidate(c, false)
		if err != nil {
			return nil, err
		}
		w.Candidates = append(w.Candidates, wc)
	}
	w.PromptFeedback = wirePromptFeedback(resp.GetPromptFeedback(), resp, same)
	w.UsageMetadata = wireUsage(resp.GetUsage())
	if same {
		w.Unknown = jsonx.Take(resp.GetExtensions(), thisDialect, "")
		if w.UsageMetadata != nil {
			w.UsageMetadata.Unknown = jsonx.Take(resp.GetExtensions(), thisDialect, "usageMetadata")
			for name, list := range w.UsageMetadata.detailLists() {
				for i := range *list {
					(*list)[i].Unknown = jsonx.Take(resp.GetExtensions(), thisDialect, detailKey(name, i))
				}
			}
		}
	}
	return jsonx.Encode(&w, appendReply)
}

// clientEncoder renders canonical parts for a client of this dialect.
type clientEncoder struct {
	same bool
}

func (e clientEncoder) candidate(c *parleyv1.Candidate, stream bool) (candidate, error) {
	w := candidate{FinishMessage: c.GetFinishMessage(), AvgLogprobs: c.AvgLogprobs}
	if !e.same || !markNoIndex.In(c.GetExtensions()) {
		w.Index = ptr(int64(c.GetIndex()))
	}
	parts := PartList{}
	for _, p := range c.GetParts() {
		wp, ok, err := e.part(p)
		if err != nil {
			return candidate{}, err
		}
		if ok {
			parts = append(parts, wp)
		}
	}
	if len(parts) > 0 || !stream {
		w.Content = &Content{Role: "model", Parts: parts}
		if e.same {
			if s, ok := jsonx.String(c.GetExtensions(), thisDialect, "content/role"); ok {
				w.Content.Role = s
			}
			w.Content.Unknown = jsonx.Take(c.GetExtensions(), thisDialect, "content")
			// The role came back among the content's members too; it
			// is written from Role.
			delete(w.Content.Unknown, "role")
		}
	}
	w.FinishReason = wireFinishReason(c.GetFinishReason(), c, e.same)
	if e.same {
		// Before the metadata: it removes the members it writes itself.
		w.Unknown = jsonx.Take(c.GetExtensions(), thisDialect, "")
	}
	e.candidateMetadata(&w, c)
	return w, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// upstreamMark is the extension bag of a decoded response: it names this
// dialect as the one that made the response, so that a client of the same
// dialect gets its members back as they came, even when there are no
// members to carry.
func upstreamMark() *parleyv1.Extensions {
	return &parleyv1.Extensions{Dialect: thisDialect}
}
