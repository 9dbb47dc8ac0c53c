package server

import (
	"net/http"

	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// serveCompact serves a dialect's compaction endpoint.
func (x *clientRequest) serveCompact(in *translate.Incoming) {
	x.call.Operation = dispatch.OperationCompact
	p, req, ok := x.decode(in)
	if !ok {
		return
	}
	x.compact(p, req, x.c.compact.EncodeCompaction, "application/json")
}

// compact answers a request for a compaction, for every upstream alike
// (translate/compaction.go): the conversation, rebuilt from its chain
// where it continues a stored response, goes to the model with the
// compaction prompt, and its answer is the summary the client carries on
// with, rendered by encode. It is governed and charged as a generation;
// nothing is stored.
func (x *clientRequest) compact(p *principal, req *parleyv1.Request, encode func(*parleyv1.Request, string, *parleyv1.Response) ([]byte, error), contentType string) {
	x.call.Operation = dispatch.OperationCompact
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
	body, err := encode(req, summary, resp)
	if err != nil {
		x.fail(err)
		return
	}
	x.setDropped()
	x.w.Header().Set("Content-Type", contentType)
	x.w.WriteHeader(http.StatusOK)
	_, _ = x.w.Write(body)
	x.status = http.StatusOK
	x.done(nil)
}
