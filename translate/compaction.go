package translate

import (
	"strings"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Compaction. An agent whose conversation grows too long asks for it to be
// compacted and carries on with one opaque compaction item in place of the
// history: through the responses dialect's POST /v1/responses/compact, or
// by ending a generation request with a compaction trigger (the Codex CLI
// does the latter when its provider is named OpenAI, and fails the turn
// unless the answer holds exactly one compaction item). Parley
// compacts the same way whatever serves the model: the upstream's model
// writes a summary of the conversation for whoever carries it on
// (CompactionRequest), Parley seals the summary as the item's opaque
// content (SealSummary), and when the item comes back in a later
// request it becomes a user turn holding the summary (CompactionTurn), for
// any upstream. No upstream has to offer compaction itself.

// CompactClient is the client side of a dialect's compaction.
type CompactClient interface {
	// EncodeCompaction renders the compaction of req, whose summary the
	// model wrote in resp, as the body of a 200 reply to the compaction
	// endpoint.
	EncodeCompaction(req *parleyv1.Request, summary string, resp *parleyv1.Response) ([]byte, error)
	// Compacts reports whether a generation request asks for a compaction
	// of its conversation in place of an answer.
	Compacts(req *parleyv1.Request) bool
	// EncodeCompacted renders that compaction as the reply to the
	// generation request: the whole JSON body, or, for a streamed
	// request, the whole event stream.
	EncodeCompacted(req *parleyv1.Request, summary string, resp *parleyv1.Response) ([]byte, error)
}

// compactionPrompt asks the model for the summary. It is the last user
// turn of the compaction request, after the whole conversation.
const compactionPrompt = `The conversation above is being compacted: it will be replaced by the user's messages and the summary you write now, and the work will be carried on from them, possibly by another model. Write that summary. Include the task and its goals, the decisions taken and why, what has been done (files, commands, results), what is in progress and what remains, and anything the user asked to keep in mind. Be specific and complete; leave out nothing needed to continue. Write only the summary.`

// CompactionRequest is the request whose answer is the summary of req's
// conversation: the same model, instructions and turns, no tools (the
// summary is text), not streamed, and the compaction prompt last.
func CompactionRequest(req *parleyv1.Request) *parleyv1.Request {
	out := proto.CloneOf(req)
	out.Tools, out.ToolChoice, out.ResponseFormat = nil, nil, nil
	out.Stream, out.StreamUsage = false, nil
	out.PreviousResponseId = ""
	out.Messages = append(out.Messages, NewMessage(parleyv1.Role_ROLE_USER, TextPart(compactionPrompt)))
	return out
}

// Summary is the text of a response's first candidate.
func Summary(resp *parleyv1.Response) string {
	cands := resp.GetCandidates()
	if len(cands) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range cands[0].GetParts() {
		b.WriteString(p.GetText().GetText())
	}
	return strings.TrimSpace(b.String())
}

// SealSummary is the opaque content of a compaction item holding
// summary, for a client of dialect client.
func SealSummary(summary string, client parleyv1.Dialect) string {
	return SealOpaque(&parleyv1.Opaque{Value: summary, Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_CANONICAL}}, client, SealCompaction)
}

// compactionIntro opens the turn a compaction becomes.
const compactionIntro = "The conversation so far was compacted; this is its summary:\n\n"

// CompactionTurn is the user turn a compaction item Parley made becomes
// when a client sends it back.
func CompactionTurn(summary string) *parleyv1.Message {
	return NewMessage(parleyv1.Role_ROLE_USER, TextPart(compactionIntro+summary))
}
