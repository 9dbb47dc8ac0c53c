package translate_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

func turn(role parleyv1.Role, parts ...*parleyv1.Part) *parleyv1.Message {
	return &parleyv1.Message{Role: role, Parts: parts}
}

func callPart(id string) *parleyv1.Part {
	return &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: id, Name: "f", Arguments: "{}"}}}
}

func resultPart(id string) *parleyv1.Part {
	return &parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: id}}}
}

func shape(msgs []*parleyv1.Message) string {
	s := ""
	for _, m := range msgs {
		s += m.GetRole().String()[5:6] + "["
		for _, p := range m.GetParts() {
			switch {
			case p.GetToolCall() != nil:
				s += "c" + p.GetToolCall().GetId()
			case p.GetToolResult() != nil:
				s += "r" + p.GetToolResult().GetCallId()
			case p.GetText() != nil:
				s += "t(" + p.GetText().GetText() + ")"
			}
		}
		s += "]"
	}
	return s
}

// TestNormaliseTurns: before the turns go to an upstream that rejects
// them, empty text is dropped, consecutive turns of one role become one,
// tool results join the user turn after their calls, and a system turn in
// the middle of the conversation is kept as a reminder in the next user
// turn rather than lost (guide §8 item 7).
func TestNormaliseTurns(t *testing.T) {
	in := []*parleyv1.Message{
		turn(parleyv1.Role_ROLE_USER, translate.TextPart("q")),
		turn(parleyv1.Role_ROLE_ASSISTANT, translate.TextPart(""), callPart("1"), callPart("2")),
		turn(parleyv1.Role_ROLE_TOOL, resultPart("2")),
		turn(parleyv1.Role_ROLE_TOOL, resultPart("1")),
		turn(parleyv1.Role_ROLE_SYSTEM, translate.TextPart("s")),
		turn(parleyv1.Role_ROLE_USER, translate.TextPart("more")),
		turn(parleyv1.Role_ROLE_ASSISTANT, callPart("3")),
		turn(parleyv1.Role_ROLE_ASSISTANT, translate.TextPart("late")),
		turn(parleyv1.Role_ROLE_USER, translate.TextPart("x"), resultPart("3")),
	}
	before := make([]*parleyv1.Message, len(in))
	for i, m := range in {
		before[i] = proto.Clone(m).(*parleyv1.Message)
	}
	got := shape(translate.NormaliseTurns(in))
	want := "U[t(q)]A[c1c2]U[r2r1t(<system-reminder>\ns\n</system-reminder>)t(more)]A[c3t(late)]U[r3t(x)]"
	if got != want {
		t.Errorf("shape\n got %s\nwant %s", got, want)
	}
	for i := range in {
		if !proto.Equal(in[i], before[i]) {
			t.Fatalf("message %d was modified", i)
		}
	}
	// A result whose call has no turn after it gets a turn of its own.
	got = shape(translate.NormaliseTurns([]*parleyv1.Message{turn(parleyv1.Role_ROLE_ASSISTANT, callPart("9")), turn(parleyv1.Role_ROLE_ASSISTANT, translate.TextPart("?")), turn(parleyv1.Role_ROLE_USER, resultPart("9"))}))
	if got != "A[c9t(?)]U[r9]" {
		t.Errorf("late result: %s", got)
	}
}

func TestSplitLeadingSystem(t *testing.T) {
	sys, rest := translate.SplitLeadingSystem([]*parleyv1.Message{turn(parleyv1.Role_ROLE_SYSTEM), turn(parleyv1.Role_ROLE_DEVELOPER), turn(parleyv1.Role_ROLE_USER), turn(parleyv1.Role_ROLE_SYSTEM)})
	if len(sys) != 2 || len(rest) != 2 {
		t.Fatalf("split %d/%d", len(sys), len(rest))
	}
}

// TestJoinText: the text of a message's text parts, sep before each that
// follows some text; one text is the string itself.
func TestJoinText(t *testing.T) {
	call := translate.CallPart("c1", "f", "{}")
	for _, c := range []struct {
		texts []string
		want  string
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"a"}, "a"},
		{[]string{"", "a"}, "a"},
		{[]string{"a", "b"}, "a|b"},
		{[]string{"a", "", "b"}, "a||b"},
		{[]string{"a", ""}, "a|"},
		{[]string{"", "", "a", "b"}, "a|b"},
	} {
		parts := []*parleyv1.Part{call}
		for _, s := range c.texts {
			parts = append(parts, translate.TextPart(s), call)
		}
		if got := translate.JoinText(parts, "|"); got != c.want {
			t.Errorf("%q: %q, want %q", c.texts, got, c.want)
		}
	}
	long := strings.Repeat("x", 1<<16)
	if n := testing.AllocsPerRun(10, func() { _ = translate.JoinText(translate.TextParts(long), "\n\n") }); n > 1 {
		t.Errorf("one text joined in %.0f allocations, want only its part's", n)
	}
}
