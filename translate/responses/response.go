package responses

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// The response walk, in both directions: an upstream's response to the
// canonical response (Upstream.DecodeResponse) and the canonical response
// to a client's (Client.EncodeResponse): the envelope, then the output
// items. Statuses are in finish.go, usage in usage.go, the request echo in
// echo.go.

// DecodeResponse implements translate.Upstream.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	var w Response
	if !readResponse(body, &w) {
		if err := jsonx.Unmarshal(body, &w); err != nil {
			return nil, translate.UpstreamProtocol(thisDialect, err)
		}
	}
	return decodeResponse(&w, t)
}

func decodeResponse(w *Response, t translate.Target) (*parleyv1.Response, error) {
	resp := &parleyv1.Response{Id: w.ID, Model: w.Model, Status: statuses[w.Status], Extensions: &parleyv1.Extensions{Dialect: thisDialect}}
	if w.CreatedAt > 0 {
		resp.CreatedAt = timestamppb.New(time.Unix(w.CreatedAt, 0))
	}
	if w.PreviousResponseID != nil {
		resp.PreviousResponseId = *w.PreviousResponseID
	}
	if w.ServiceTier != nil {
		if st, ok := openai.ServiceTier(*w.ServiceTier); ok {
			resp.ServiceTier = st
		} else {
			jsonx.KeepValue(&resp.Extensions, thisDialect, "service_tier", jsonx.Quote(*w.ServiceTier))
		}
	}
	var echoed requestEcho
	for i, name := range echoMembers {
		echoed[i] = *echoField(w, name)
	}
	jsonx.KeepValues(&resp.Extensions, thisDialect, echoMembers[:], echoed[:])
	jsonx.Keep(&resp.Extensions, thisDialect, "", w.Unknown)
	if e := w.Error; e != nil {
		resp.Error = failure(e)
	}
	cand := &parleyv1.Candidate{}
	d := &itemDecoder{t: t, names: map[string]string{}}
	for i := range w.Output {
		parts, err := d.outputItem(&w.Output[i])
		if err != nil {
			return nil, translate.UpstreamProtocol(thisDialect, err)
		}
		cand.Parts = append(cand.Parts, parts...)
	}
	cand.FinishReason = finish(w.Status, w.IncompleteDetails, cand.Parts)
	if inc := w.IncompleteDetails; inc != nil {
		resp.IncompleteDetails = &parleyv1.IncompleteDetails{Reason: cand.FinishReason}
		if _, ok := incompleteReasons[inc.Reason]; !ok {
			cand.FinishMessage = inc.Reason
		}
	}
	resp.Candidates = []*parleyv1.Candidate{cand}
	if w.Usage != nil {
		resp.Usage = canonicalUsage(w.Usage, &resp.Extensions)
	}
	return resp, nil
}

// EncodeResponse implements translate.Client.
func (Client) EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error) {
	w := snapshot(req, resp, responseStatus(resp))
	w.Output = outputItems(resp.GetCandidates(), callNamesOf(req))
	w.Usage = wireUsage(resp.GetUsage(), resp.GetExtensions())
	// Written as a stream's snapshots are, without reflection where it
	// can be (TestRepliesAreTheMarshalledReplies).
	return jsonx.Encode(w, appendResponse)
}

// snapshot renders the response object without output and usage: the
// envelope, the request echo, status, error and incomplete details.
func snapshot(req *parleyv1.Request, resp *parleyv1.Response, status parleyv1.ResponseStatus) *Response {
	var first *parleyv1.Candidate
	if cs := resp.GetCandidates(); len(cs) > 0 {
		first = cs[0]
	}
	return snapshotOf(req, resp, status, first, nil, false)
}

// snapshotOf is snapshot with first in place of the response's first
// candidate, whose finish explains an incomplete response. re, when
// given, is the request's echo made beforehand, the upstream's own taken
// into it (a stream's, for all its snapshots), written says it is written
// (requestEcho.write); else the echo is made.
func snapshotOf(req *parleyv1.Request, resp *parleyv1.Response, status parleyv1.ResponseStatus, first *parleyv1.Candidate, re *requestEcho, written bool) *Response {
	ext := resp.GetExtensions()
	w := &Response{
		ID: resp.GetId(), Object: "response", CreatedAt: time.Now().Unix(), Status: responseStatusWord(status),
		Model: resp.GetModel(), Output: []Item{}, Unknown: jsonx.Take(ext, thisDialect, ""),
	}
	for _, name := range echoMembers {
		delete(w.Unknown, name)
	}
	delete(w.Unknown, "service_tier")
	if w.ID == "" {
		w.ID = translate.NewID("resp_")
	}
	if resp.GetCreatedAt() != nil {
		w.CreatedAt = resp.GetCreatedAt().GetSeconds()
	}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	// Pointers made in the branches that set them: a variable whose
	// address is taken is made on the heap on every path, for every
	// snapshot of a stream.
	if s := openai.ServiceTierWord(resp.GetServiceTier()); s != "" {
		w.ServiceTier = new(s)
	} else if v, ok := jsonx.Value(ext, thisDialect, "service_tier"); ok {
		var s string
		if jsonx.Unmarshal(v, &s) == nil {
			w.ServiceTier = new(s)
		}
	}
	prev := req.GetPreviousResponseId()
	if prev == "" {
		prev = resp.GetPreviousResponseId()
	}
	if prev != "" {
		w.PreviousResponseID = new(prev)
	}
	if e := resp.GetError(); e != nil && status == parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED {
		w.Error = failureObject(e)
	}
	if status == parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE {
		reason := ""
		if first != nil {
			reason = incompleteWord(first.GetFinishReason())
			if reason == "" {
				reason = first.GetFinishMessage()
			}
		}
		if reason == "" {
			reason = incompleteWord(resp.GetIncompleteDetails().GetReason())
		}
		w.IncompleteDetails = &incomplete{Reason: reason}
	}
	if re != nil {
		re.fill(w, written)
	} else {
		echo(w, req, ext)
	}
	return w
}

// Output items toward a client. A client of this dialect sends its output
// items back as input, so what goes out must come back meaning the same:
//
//   - text and refusal parts of one item form a message item;
//   - reasoning of this dialect goes out as it came (id, summary,
//     encrypted content); reasoning of another service goes out as a
//     reasoning item whose summary is its text and whose encrypted content
//     is its signature, sealed with its origin (translate.SealSignature);
//   - a signature on a part that is not reasoning (a thought signature on
//     a function call) travels in a reasoning item of its own, with no
//     summary, just before the part's item (translate.SealCarrierNext);
//   - calls are function_call items, computer calls computer_call items;
//   - hosted web and file searches are web_search_call and
//     file_search_call items; other hosted tools' steps are not shown.

// outputItems renders the first candidate's parts as output items.
func outputItems(cands []*parleyv1.Candidate, names *callNames) []Item {
	out := []Item{}
	if len(cands) == 0 {
		return out
	}
	open := -1 // index in out of the open message item
	for _, p := range cands[0].GetParts() {
		if sig := p.GetSignature(); sig != nil && p.GetReasoning() == nil && sig.GetOrigin().GetDialect() != thisDialect {
			out = append(out, carrierItem(sig))
			open = -1
		}
		if isMessagePart(p) {
			if open < 0 || (p.GetItemId() != "" && p.GetItemId() != out[open].ID) {
				out = append(out, newMessageItem(p))
				open = len(out) - 1
			}
			out[open].Content.Parts = append(out[open].Content.Parts, contentOf(p))
			continue
		}
		open = -1
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Reasoning:
			out = append(out, reasoningOut(p))
		case *parleyv1.Part_ToolCall:
			out = append(out, callOut(p, names))
		case *parleyv1.Part_HostedToolCall:
			if it, ok := hostedOut(p); ok {
				out = append(out, it)
			}
		case *parleyv1.Part_HostedToolResult:
			if n := len(out); n > 0 && out[n-1].Type == "file_search_call" && out[n-1].ID == k.HostedToolResult.GetCallId() {
				out[n-1].Results = jsontext.Value(k.HostedToolResult.GetOutput())
			}
		case nil:
			if v, ok := markItem.Value(p.GetExtensions()); ok {
				var it Item
				if jsonx.Unmarshal(v, &it) == nil {
					out = append(out, it)
				}
			}
		}
	}
	return out
}
