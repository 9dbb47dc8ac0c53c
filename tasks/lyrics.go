package tasks

import (
	"context"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// lyricsInstructions ask a chat model for lyrics in a shape that splits
// into a title and a text.
const lyricsInstructions = "You write song lyrics. Answer with the song's title alone on the first line, " +
	"then a blank line, then the lyrics, with section tags such as [Verse], [Chorus] and [Bridge] on their own lines. " +
	"Write nothing else."

// startLyrics has the lyrics model write a task's lyrics in the
// background, unless it is already at it or enough are being written.
func (s *Service) startLyrics(ctx context.Context, t *parleyv1.Task) {
	s.mu.Lock()
	if s.stopping || ctx.Err() != nil || s.inFlight[t.GetId()] || len(s.inFlight) >= lyricsWorkers {
		s.mu.Unlock()
		return
	}
	s.inFlight[t.GetId()] = true
	s.work.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.work.Done()
		defer func() {
			s.mu.Lock()
			delete(s.inFlight, t.GetId())
			s.mu.Unlock()
		}()
		s.writeLyrics(ctx, t)
	}()
}

// writeLyrics asks the model and finishes the task. A failure the
// dispatcher marks retryable leaves the task in progress for the next
// round (the maximum age bounds the tries); any other fails the task.
func (s *Service) writeLyrics(ctx context.Context, t *parleyv1.Task) {
	prompt := t.GetInput().GetLyrics().GetPrompt()
	req := &parleyv1.Request{
		Model:        t.GetModel(),
		Instructions: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: lyricsInstructions}}}},
		Messages: []*parleyv1.Message{{
			Role:  parleyv1.Role_ROLE_USER,
			Parts: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: prompt}}}},
		}},
	}
	// The task is held while the model writes, so that no other replica
	// of a fleet starts writing it too; a replica that dies holds it no
	// longer than lyricsLease.
	if err := s.o.Store.HoldTasks(ctx, s.o.Now().Add(lyricsLease), t.GetId()); err != nil {
		if ctx.Err() == nil {
			s.log.Error("a lyrics task could not be held", "task", t.GetId(), "error", err)
		}
		return
	}
	resp, err := s.dispatcher.Load().Generate(ctx, req, &dispatch.Call{})
	next := proto.Clone(t).(*parleyv1.Task)
	if err != nil {
		if ctx.Err() != nil {
			// Stopping: the task is given up for another replica.
			if err := s.o.Store.HoldTasks(context.WithoutCancel(ctx), s.o.Now(), t.GetId()); err != nil {
				s.log.Warn("a lyrics task's claim could not be given up; it ends with its lease", "task", t.GetId(), "error", err)
			}
			return
		}
		e := translate.ToProto(err)
		if e.GetRetry().GetRetryable() {
			s.log.Warn("the lyrics model failed; trying again next round", "task", t.GetId(), "model", t.GetModel(), "error", e.GetMessage())
			if err := s.o.Store.HoldTasks(ctx, s.o.Now(), t.GetId()); err != nil && ctx.Err() == nil {
				s.log.Error("a lyrics task could not be given up", "task", t.GetId(), "error", err)
			}
			return
		}
		s.finish(next, parleyv1.TaskStatus_TASK_STATUS_FAIL, "the lyrics model "+t.GetModel()+" failed: "+e.GetMessage())
		s.save(ctx, next)
		return
	}
	var text strings.Builder
	for _, c := range resp.GetCandidates()[:min(1, len(resp.GetCandidates()))] {
		for _, p := range c.GetParts() {
			text.WriteString(p.GetText().GetText())
		}
	}
	title, body := splitLyrics(text.String(), prompt)
	if body == "" {
		s.finish(next, parleyv1.TaskStatus_TASK_STATUS_FAIL, "the lyrics model "+t.GetModel()+" answered with no text")
		s.save(ctx, next)
		return
	}
	next.Lyrics = &parleyv1.Lyrics{Id: t.GetId(), Title: title, Text: body, Status: translate.LyricsComplete}
	s.finish(next, parleyv1.TaskStatus_TASK_STATUS_SUCCESS, "")
	s.save(ctx, next)
}

// splitLyrics takes the first line as the title when the answer has more
// lines, else titles the lyrics after the first words of the prompt.
func splitLyrics(answer, prompt string) (title, text string) {
	answer = strings.TrimSpace(answer)
	first, rest, more := strings.Cut(answer, "\n")
	first = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(first), "Title:"))
	first = strings.TrimSpace(strings.Trim(first, "#*\" "))
	if more && strings.TrimSpace(rest) != "" && first != "" && !strings.HasPrefix(first, "[") {
		return first, strings.TrimSpace(rest)
	}
	return shorten(strings.Join(strings.Fields(prompt), " "), 60), answer
}

// shorten cuts s to at most n characters at a word boundary.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	if i := strings.LastIndexByte(string(r), ' '); i > 0 {
		return string(r)[:i]
	}
	return string(r)
}
