package translate

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// conversation makes a conversation from b, two bytes a turn: the role
// (user, assistant, tool, system) and the parts, two bits each (text,
// empty text, a tool call or a tool result naming one of four calls).
func conversation(b []byte) []*parleyv1.Message {
	roles := []parleyv1.Role{parleyv1.Role_ROLE_USER, parleyv1.Role_ROLE_ASSISTANT, parleyv1.Role_ROLE_TOOL, parleyv1.Role_ROLE_SYSTEM}
	var msgs []*parleyv1.Message
	for i := 0; i+1 < len(b); i += 2 {
		m := &parleyv1.Message{Role: roles[b[i]%4]}
		n := int(b[i]>>2) % 4 // parts
		for k := range n {
			c := b[i+1] >> (2 * k) & 3
			id := fmt.Sprintf("call_%d", (int(b[i])>>4+k)%4)
			switch c {
			case 0:
				m.Parts = append(m.Parts, TextPart("text"))
			case 1:
				m.Parts = append(m.Parts, TextPart(""))
			case 2:
				m.Parts = append(m.Parts, CallPart(id, "f", "{}"))
			case 3:
				m.Parts = append(m.Parts, ResultPart(id, "ok", false))
			}
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// sameTurns holds the turns NormaliseTurns gives to the ones the full
// normalisation makes, and says whether they were kept as they came.
func sameTurns(t *testing.T, msgs []*parleyv1.Message) bool {
	t.Helper()
	got, want := NormaliseTurns(msgs), normaliseTurns(msgs)
	if len(got) != len(want) {
		t.Fatalf("%d turns, want %d", len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("turn %d:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
	return len(msgs) > 0 && len(got) == len(msgs) && got[0] == msgs[0]
}

// TestNormalConversationsAreKept: an agent's loop in normal form is given
// back as it is; each way out of the normal form goes the full way, to
// the same result.
func TestNormalConversationsAreKept(t *testing.T) {
	loop := func() []*parleyv1.Message {
		return []*parleyv1.Message{
			{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{TextPart("read a.go")}},
			{Role: parleyv1.Role_ROLE_ASSISTANT, Parts: []*parleyv1.Part{TextPart("Reading."), CallPart("c1", "read", "{}"), CallPart("c2", "read", "{}")}},
			{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{ResultPart("c1", "x", false), ResultPart("c2", "y", false), TextPart("and now?")}},
			{Role: parleyv1.Role_ROLE_ASSISTANT, Parts: []*parleyv1.Part{TextPart("Done.")}},
		}
	}
	if !sameTurns(t, loop()) {
		t.Error("a normal conversation was copied")
	}
	for name, change := range map[string]func([]*parleyv1.Message) []*parleyv1.Message{
		"a result after text": func(m []*parleyv1.Message) []*parleyv1.Message {
			p := m[2].Parts
			m[2].Parts = []*parleyv1.Part{p[0], p[2], p[1]}
			return m
		},
		"a result a turn late": func(m []*parleyv1.Message) []*parleyv1.Message {
			return append(m, &parleyv1.Message{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{ResultPart("c1", "again", false)}})
		},
		"a tool turn": func(m []*parleyv1.Message) []*parleyv1.Message { m[2].Role = parleyv1.Role_ROLE_TOOL; return m },
		"a system turn": func(m []*parleyv1.Message) []*parleyv1.Message {
			return append(m, &parleyv1.Message{Role: parleyv1.Role_ROLE_SYSTEM, Parts: []*parleyv1.Part{TextPart("be brief")}})
		},
		"two user turns": func(m []*parleyv1.Message) []*parleyv1.Message { m[3].Role = parleyv1.Role_ROLE_USER; return m },
		"an empty text": func(m []*parleyv1.Message) []*parleyv1.Message {
			m[3].Parts = append(m[3].Parts, TextPart(""))
			return m
		},
		"an empty turn": func(m []*parleyv1.Message) []*parleyv1.Message { m[3].Parts = nil; return m },
		"a repeated call": func(m []*parleyv1.Message) []*parleyv1.Message {
			m[3].Parts = append(m[3].Parts, CallPart("c1", "read", "{}"))
			return m
		},
	} {
		if sameTurns(t, change(loop())) {
			t.Errorf("%s: the conversation was kept as it came", name)
		}
	}
}

func FuzzNormaliseTurns(f *testing.F) {
	f.Add([]byte{0x04, 0x00, 0x09, 0x08, 0x04, 0x03, 0x05, 0x00})
	f.Add([]byte{0x04, 0x00, 0x19, 0x28, 0x08, 0x0f, 0x05, 0x00, 0x06, 0x03})
	f.Add([]byte{0x04, 0x00, 0x07, 0x00, 0x04, 0x01, 0x09, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64 {
			return
		}
		sameTurns(t, conversation(b))
	})
}
