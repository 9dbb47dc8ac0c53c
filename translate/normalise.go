package translate

import (
	"slices"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
)

// Upstreams differ in what conversation shapes they accept; clients of other
// dialects send shapes that some upstreams reject. The helpers here bring a
// canonical conversation into the strictest common shape. Upstream encoders
// apply them to requests from clients of another dialect; a client of the
// upstream's own dialect gets its turns through as it sent them.

// SplitLeadingSystem returns the system and developer turns that open the
// conversation, and the rest. Dialects without system turns fold the first
// into their system prompt. A part with no canonical kind (an item the
// client's dialect keeps whole for itself, as the responses dialect keeps
// a declaration of tools) says nothing to a system prompt and is left out
// of the system turns returned.
func SplitLeadingSystem(msgs []*parleyv1.Message) (system, rest []*parleyv1.Message) {
	i := 0
	for i < len(msgs) && IsSystemRole(msgs[i].GetRole()) {
		i++
	}
	system = msgs[:i]
	cloned := false
	for j, m := range system {
		if !slices.ContainsFunc(m.GetParts(), kindless) {
			continue
		}
		if !cloned {
			system, cloned = slices.Clone(system), true
		}
		// Cloned by reflection through the parts and what they hold:
		// off the stack, which may be a stream handler's.
		var kept *parleyv1.Message
		offstack.Run(func() { kept = proto.CloneOf(m) })
		kept.Parts = slices.DeleteFunc(kept.Parts, kindless)
		system[j] = kept
	}
	return system, msgs[i:]
}

func kindless(p *parleyv1.Part) bool { return p.GetKind() == nil }

// IsSystemRole reports whether r is a system or developer role.
func IsSystemRole(r parleyv1.Role) bool {
	return r == parleyv1.Role_ROLE_SYSTEM || r == parleyv1.Role_ROLE_DEVELOPER
}

// SystemReminder wraps the text of a system turn that stands in the middle
// of a conversation, so that it can keep its place as a user turn in
// dialects that have no system turns.
func SystemReminder(text string) string {
	return "<system-reminder>\n" + text + "\n</system-reminder>"
}

// NormaliseTurns returns msgs (after any leading system turns were taken
// out) in the shape strict upstreams require:
//
//   - empty text parts are dropped, unless they carry a signature;
//   - tool turns become user turns, and system or developer turns in the
//     middle of the conversation become user turns whose text is wrapped by
//     SystemReminder;
//   - every tool result moves to the front of the user turn right after the
//     assistant turn that made its call (a new turn when there is none);
//   - turns left empty are dropped, and consecutive turns of the same role
//     are merged.
//
// The input is not modified. A conversation already in that shape (most
// of an agent's, turn after turn) is returned as it is, not copied; the
// caller must not modify what it gets.
func NormaliseTurns(msgs []*parleyv1.Message) []*parleyv1.Message {
	if normal(msgs) {
		return msgs[:len(msgs):len(msgs)]
	}
	return normaliseTurns(msgs)
}

// normal says whether normaliseTurns would give msgs back unchanged: user
// and assistant turns alternate, none is empty or holds an empty text
// part without a signature, and every tool result whose call is in the
// conversation opens the user turn right after the assistant turn that
// made the call (TestNormalConversationsAreKept, FuzzNormaliseTurns).
func normal(msgs []*parleyv1.Message) bool {
	var calls map[string]int // the turn of each call, the last of an id
	for i, m := range msgs {
		role := m.GetRole()
		if role != parleyv1.Role_ROLE_USER && role != parleyv1.Role_ROLE_ASSISTANT || len(m.GetParts()) == 0 ||
			i > 0 && msgs[i-1].GetRole() == role {
			return false
		}
		for _, p := range m.GetParts() {
			if t := p.GetText(); t != nil && t.GetText() == "" && p.GetSignature() == nil {
				return false
			}
			if c := p.GetToolCall(); c != nil && role == parleyv1.Role_ROLE_ASSISTANT {
				if calls == nil {
					calls = map[string]int{}
				}
				calls[c.GetId()] = i
			}
		}
	}
	if calls == nil {
		return true
	}
	for i, m := range msgs {
		if m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
			continue
		}
		front := true // still among the results that open the turn
		for _, p := range m.GetParts() {
			r := p.GetToolResult()
			t, placed := 0, false
			if r != nil {
				t, placed = calls[r.GetCallId()]
			}
			switch {
			case !placed:
				front = false
			case !front || t != i-1:
				return false
			}
		}
	}
	return true
}

// normaliseTurns is NormaliseTurns on fresh copies of the turns.
func normaliseTurns(msgs []*parleyv1.Message) []*parleyv1.Message {
	out := make([]*parleyv1.Message, 0, len(msgs))
	for _, m := range msgs {
		role := m.GetRole()
		reminder := IsSystemRole(role)
		if role == parleyv1.Role_ROLE_TOOL || reminder {
			role = parleyv1.Role_ROLE_USER
		}
		parts := make([]*parleyv1.Part, 0, len(m.GetParts()))
		for _, p := range m.GetParts() {
			if t := p.GetText(); t != nil && t.GetText() == "" && p.GetSignature() == nil {
				continue
			}
			if reminder && p.GetText() != nil {
				c := shallowPart(p)
				c.Kind = &parleyv1.Part_Text{Text: &parleyv1.Text{Text: SystemReminder(p.GetText().GetText()), Annotations: p.GetText().GetAnnotations()}}
				p = c
			}
			parts = append(parts, p)
		}
		out = append(out, &parleyv1.Message{Role: role, Parts: parts, Name: m.GetName(), Extensions: m.GetExtensions()})
	}
	return mergeTurns(placeToolResults(mergeTurns(out)))
}

// mergeTurns drops empty turns and merges consecutive turns of one role.
func mergeTurns(msgs []*parleyv1.Message) []*parleyv1.Message {
	merged := msgs[:0]
	for _, m := range msgs {
		if len(m.Parts) == 0 {
			continue
		}
		if n := len(merged); n > 0 && merged[n-1].Role == m.Role {
			merged[n-1].Parts = append(merged[n-1].Parts, m.Parts...)
			continue
		}
		merged = append(merged, m)
	}
	return merged
}

func shallowPart(p *parleyv1.Part) *parleyv1.Part {
	return &parleyv1.Part{Kind: p.GetKind(), Signature: p.GetSignature(), CacheControl: p.GetCacheControl(), ItemId: p.GetItemId(), Status: p.GetStatus(), Extensions: p.GetExtensions()}
}

// placeToolResults moves tool results next to their calls (see
// NormaliseTurns). The messages are the fresh copies NormaliseTurns made.
func placeToolResults(msgs []*parleyv1.Message) []*parleyv1.Message {
	callTurn := map[string]int{}
	for i, m := range msgs {
		if m.Role != parleyv1.Role_ROLE_ASSISTANT {
			continue
		}
		for _, p := range m.Parts {
			if c := p.GetToolCall(); c != nil {
				callTurn[c.GetId()] = i
			}
		}
	}
	if len(callTurn) == 0 {
		return msgs
	}
	results := map[int][]*parleyv1.Part{}
	for _, m := range msgs {
		if m.Role == parleyv1.Role_ROLE_ASSISTANT {
			continue
		}
		kept := m.Parts[:0]
		for _, p := range m.Parts {
			if r := p.GetToolResult(); r != nil {
				if t, ok := callTurn[r.GetCallId()]; ok {
					results[t] = append(results[t], p)
					continue
				}
			}
			kept = append(kept, p)
		}
		m.Parts = kept
	}
	out := make([]*parleyv1.Message, 0, len(msgs)+len(results))
	for i := 0; i < len(msgs); i++ {
		out = append(out, msgs[i])
		res, ok := results[i]
		if !ok {
			continue
		}
		if i+1 < len(msgs) && msgs[i+1].Role == parleyv1.Role_ROLE_USER {
			next := msgs[i+1]
			next.Parts = append(res, next.Parts...)
			out = append(out, next)
			i++
			continue
		}
		out = append(out, &parleyv1.Message{Role: parleyv1.Role_ROLE_USER, Parts: res})
	}
	return out
}

// OutputTurn is a response's output as an assistant turn of a later
// conversation: the parts of its first candidate; nil when it has none.
// It is how a continued response's output joins the conversation, and how
// a stored one is laid out.
func OutputTurn(resp *parleyv1.Response) *parleyv1.Message {
	cs := resp.GetCandidates()
	if len(cs) == 0 || len(cs[0].GetParts()) == 0 {
		return nil
	}
	return &parleyv1.Message{Role: parleyv1.Role_ROLE_ASSISTANT, Parts: cs[0].GetParts()}
}
