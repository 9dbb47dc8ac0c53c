package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"iter"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Echo is the built-in model behind the default configuration: it
// answers with the last user text of the request (or says there was
// none), streams it in chunks of a few words, and reports usage by
// Estimate, so that every dialect can be tried with no upstream at all.
type Echo struct {
	// ChunkDelay is a pause between streamed chunks (none by default).
	ChunkDelay time.Duration
}

var _ Backend = Echo{}

// echoChunkWords is how many words go in one streamed chunk.
const echoChunkWords = 3

func (Echo) reply(req *parleyv1.Request) string {
	msgs := req.GetMessages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].GetRole() != parleyv1.Role_ROLE_USER {
			continue
		}
		var b strings.Builder
		for _, p := range msgs[i].GetParts() {
			b.WriteString(p.GetText().GetText())
		}
		if b.Len() > 0 {
			return b.String()
		}
	}
	return "(echo: the request has no user text)"
}

func echoID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "echo_" + hex.EncodeToString(b[:])
}

func (e Echo) usage(req *parleyv1.Request, text string) *parleyv1.Usage {
	in := translate.Estimate(req)
	out := int64((len(text) + 3) / 4)
	return &parleyv1.Usage{InputTokens: &in, OutputTokens: &out, TotalTokens: new(in + out)}
}

// Generate implements Backend.
func (e Echo) Generate(ctx context.Context, req *parleyv1.Request, t translate.Target, _ *Call) (*parleyv1.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text := e.reply(req)
	return &parleyv1.Response{
		Id:        echoID(),
		Model:     t.Model,
		CreatedAt: timestamppb.Now(),
		Status:    parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED,
		Candidates: []*parleyv1.Candidate{{
			Parts:        []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: text}}}},
			FinishReason: parleyv1.FinishReason_FINISH_REASON_STOP,
		}},
		Usage: e.usage(req, text),
	}, nil
}

// chunks splits text after every few words, keeping the spaces, so that
// the chunks join back to the text exactly.
func chunks(text string) []string {
	var out []string
	words, start := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == ' ' && (i == 0 || text[i-1] != ' ') {
			words++
			if words == echoChunkWords {
				out = append(out, text[start:i+1])
				start, words = i+1, 0
			}
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// Stream implements Backend.
func (e Echo) Stream(ctx context.Context, req *parleyv1.Request, t translate.Target, _ *Call) iter.Seq2[*parleyv1.StreamEvent, error] {
	return func(yield func(*parleyv1.StreamEvent, error) bool) {
		text := e.reply(req)
		usage := e.usage(req, text)
		in := usage.GetInputTokens()
		evs := []*parleyv1.StreamEvent{
			{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{
				Id: echoID(), Model: t.Model, CreatedAt: timestamppb.Now(),
				Status: parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS,
				Usage:  &parleyv1.Usage{InputTokens: &in},
			}}}},
			{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{
				Part: &parleyv1.Part{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{}}},
			}}},
		}
		for _, c := range chunks(text) {
			evs = append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{
				Delta: &parleyv1.PartDelta_Text{Text: c},
			}}})
		}
		evs = append(evs,
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{}}},
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Usage{Usage: usage}},
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{Reason: parleyv1.FinishReason_FINISH_REASON_STOP}}},
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED}}},
		)
		for i, ev := range evs {
			if i > 0 && e.ChunkDelay > 0 {
				if err := sleep(ctx, e.ChunkDelay); err != nil {
					yield(nil, err)
					return
				}
			} else if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// CountTokens implements Backend by Estimate.
func (Echo) CountTokens(_ context.Context, req *parleyv1.Request, _ translate.Target, call *Call) (*parleyv1.TokenCount, error) {
	call.Estimated = true
	return &parleyv1.TokenCount{InputTokens: translate.Estimate(req), Estimated: true}, nil
}
