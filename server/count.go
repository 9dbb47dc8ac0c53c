package server

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// serveCount serves a dialect's count-tokens endpoint: the upstream counts
// where its dialect can, else Parley estimates (translate.Estimate).
func (x *clientRequest) serveCount(in *translate.Incoming) {
	p, err := x.incoming(in)
	if err != nil {
		x.fail(err)
		return
	}
	req, err := x.c.count.DecodeCountRequest(in)
	if err != nil {
		x.fail(err)
		return
	}
	x.call.Model = req.GetModel()
	if err := x.admit(p, req.GetModel()); err != nil {
		x.fail(err)
		return
	}
	n, err := x.st.d.CountTokens(x.r.Context(), req, &x.call)
	if err != nil {
		x.fail(err)
		return
	}
	body, err := x.c.count.EncodeCount(n)
	if err != nil {
		x.fail(err)
		return
	}
	x.usage = &parleyv1.Usage{InputTokens: new(n.GetInputTokens())}
	if n.GetEstimated() {
		x.w.Header().Set("X-Parley-Estimated", "true")
	}
	x.setDropped()
	x.ok(body)
}
