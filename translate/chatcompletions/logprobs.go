package chatcompletions

import (
	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Log-probabilities of a choice, both ways.

func canonicalLogprobs(l *logprobs) *parleyv1.Logprobs {
	out := &parleyv1.Logprobs{}
	for _, tl := range l.Content {
		out.Chosen = append(out.Chosen, readTokenLogprob(tl))
		top := &parleyv1.TopLogprobs{}
		for _, alt := range tl.TopLogprobs {
			top.Candidates = append(top.Candidates, readTokenLogprob(alt))
		}
		out.Top = append(out.Top, top)
	}
	for _, tl := range l.Refusal {
		out.Refusal = append(out.Refusal, readTokenLogprob(tl))
	}
	return out
}

func readTokenLogprob(tl tokenLogprob) *parleyv1.TokenLogprob {
	t := &parleyv1.TokenLogprob{Token: tl.Token, Logprob: tl.Logprob}
	var bs []int
	if len(tl.Bytes) > 0 && jsonx.Unmarshal(tl.Bytes, &bs) == nil {
		t.Bytes = make([]byte, len(bs))
		for i, b := range bs {
			t.Bytes[i] = byte(b)
		}
	}
	return t
}

func wireLogprobs(l *parleyv1.Logprobs) *logprobs {
	if l == nil {
		return nil
	}
	out := &logprobs{}
	for i, c := range l.GetChosen() {
		tl := wireToken(c)
		if i < len(l.GetTop()) {
			tl.TopLogprobs = []tokenLogprob{}
			for _, alt := range l.GetTop()[i].GetCandidates() {
				tl.TopLogprobs = append(tl.TopLogprobs, wireToken(alt))
			}
		}
		out.Content = append(out.Content, tl)
	}
	for _, r := range l.GetRefusal() {
		out.Refusal = append(out.Refusal, wireToken(r))
	}
	return out
}

func wireToken(t *parleyv1.TokenLogprob) tokenLogprob {
	tl := tokenLogprob{Token: t.GetToken(), Logprob: t.GetLogprob(), Bytes: jsontext.Value("null")}
	if t.GetBytes() != nil {
		bs := make([]int, len(t.GetBytes()))
		for i, b := range t.GetBytes() {
			bs[i] = int(b)
		}
		tl.Bytes, _ = jsonx.Marshal(bs)
	}
	return tl
}
