// Package secrets keeps the keys Parley knows out of what it relays: an
// upstream that echoes a key in an error ("Incorrect API key provided:
// sk-...") must not hand it to a client or a log line through Parley. A
// Scrubber is built once from the configuration's keys (client keys and
// upstream API keys) and applied where text from an upstream enters
// Parley, so that everything downstream of it is clean.
package secrets

import (
	"errors"
	"sort"
	"strings"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Redacted replaces a key, or a piece of one, in scrubbed text.
const Redacted = "[redacted]"

// fragment is the length of the shortest piece of a key that is
// redacted: services echo keys cut short ("sk-proj-abcd...wxyz"), and a
// dozen characters of a random key appear nowhere else by chance.
const fragment = 12

// Scrubber removes known keys from text. The zero value and nil remove
// nothing.
type Scrubber struct {
	// grams holds every fragment-long piece of every key that long.
	grams map[string]struct{}
	// short are keys shorter than fragment, replaced whole, longest
	// first.
	short []string
}

// New returns a Scrubber of the given keys; empty ones are ignored.
func New(keys ...string) *Scrubber {
	s := &Scrubber{grams: map[string]struct{}{}}
	for _, k := range keys {
		switch {
		case k == "":
		case len(k) < fragment:
			s.short = append(s.short, k)
		default:
			for i := 0; i+fragment <= len(k); i++ {
				s.grams[k[i:i+fragment]] = struct{}{}
			}
		}
	}
	sort.Slice(s.short, func(i, j int) bool { return len(s.short[i]) > len(s.short[j]) })
	return s
}

// FromConfig returns a Scrubber of every key a configuration holds: the
// clients', the upstreams' and the cloud secrets an upstream names.
func FromConfig(c *config.Config) *Scrubber {
	var keys []string
	for _, k := range c.Keys {
		keys = append(keys, k.Key)
	}
	for _, u := range c.Upstreams {
		keys = append(keys, u.APIKey)
		if p := u.Provider; p != nil && p.Entra != nil {
			keys = append(keys, p.Entra.ClientSecret)
		}
	}
	return New(keys...)
}

// String returns text with every key, and every piece of a key at least
// a dozen characters long, replaced by Redacted. Text without any is
// returned as it is, without allocating.
func (s *Scrubber) String(text string) string {
	if s == nil || len(text) < min(fragment, s.shortest()) {
		return text
	}
	if len(s.grams) > 0 {
		var b strings.Builder
		start, end, written := -1, -1, 0 // the redaction under way is text[start:end]
		flush := func() {
			b.WriteString(text[written:start])
			b.WriteString(Redacted)
			written = end
		}
		for i := 0; i+fragment <= len(text); i++ {
			if _, ok := s.grams[text[i:i+fragment]]; !ok {
				continue
			}
			if start >= 0 && i <= end {
				end = i + fragment // the same key goes on, or another touches it
				continue
			}
			if start >= 0 {
				flush()
			}
			start, end = i, i+fragment
		}
		if start >= 0 {
			flush()
			b.WriteString(text[written:])
			text = b.String()
		}
	}
	for _, k := range s.short {
		if strings.Contains(text, k) {
			text = strings.ReplaceAll(text, k, Redacted)
		}
	}
	return text
}

func (s *Scrubber) shortest() int {
	if len(s.short) == 0 {
		return fragment
	}
	return len(s.short[len(s.short)-1])
}

// Error scrubs, in place, every text of an error that an upstream may
// have written: its message, field violations, reason, request id and
// kept members.
func (s *Scrubber) Error(e *parleyv1.Error) {
	if s == nil || e == nil {
		return
	}
	e.Message = s.String(e.GetMessage())
	e.Reason = s.String(e.GetReason())
	e.RequestId = s.String(e.GetRequestId())
	for _, v := range e.GetFieldViolations() {
		v.Field, v.Description = s.String(v.GetField()), s.String(v.GetDescription())
	}
	if ext := e.GetExtensions(); ext != nil {
		for k, v := range ext.GetFields() {
			if c := s.String(v); c != v {
				ext.Fields[k] = c
			}
		}
	}
}

// Err scrubs, in place, the canonical form of an error that carries one
// (an upstream's error decoded, or a reply it could not follow), and
// returns it.
func (s *Scrubber) Err(err error) error {
	var pe interface{ Proto() *parleyv1.Error }
	if s != nil && errors.As(err, &pe) {
		s.Error(pe.Proto())
	}
	return err
}
