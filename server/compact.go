package server

import (
	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// serveCompact serves a dialect's compaction endpoint, for every upstream
// alike (translate/compaction.go): the conversation, rebuilt from its
// chain where it continues a stored response, goes to the model with the
// compaction prompt, and its answer is the summary the client carries on
// with. It is governed and charged as a generation; nothing is stored.
func (x *clientRequest) serveCompact(in *translate.Incoming) {
	x.call.Operation = dispatch.OperationCompact
	p, req, ok := x.decode(in)
	if !ok {
		return
	}
	if x.c.stored != nil {
		// The chain a previous_response_id names, and the context window;
		// the turn is not finished, so nothing is kept.
		if _, err := x.s.stored.Begin(x.r.Context(), x.c.stored, p.name, req); err != nil {
			x.fail(err)
			return
		}
	}
	summaryReq := translate.CompactionRequest(req)
	if err := x.govern(x.s, x.st, p, x.w.Header(), x.c.d.RateLimitHeaders, summaryReq); err != nil {
		x.fail(err)
		return
	}
	resp, err := x.st.d.Generate(x.r.Context(), summaryReq, &x.call)
	if err != nil {
		x.fail(err)
		return
	}
	x.usage = resp.GetUsage()
	summary := translate.Summary(resp)
	if summary == "" {
		x.fail(translate.Status(parleyv1.Code_CODE_UNAVAILABLE, "the model %s wrote no summary of the conversation", req.GetModel()))
		return
	}
	body, err := x.c.compact.EncodeCompaction(req, summary, resp)
	if err != nil {
		x.fail(err)
		return
	}
	x.setDropped()
	x.ok(body)
}
