package chatcompletions_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
)

// Bad input gets a 400 in this dialect's error shape, naming the field as
// the service spells it.
func TestBadInputNamesTheField(t *testing.T) {
	cases := []struct{ body, param string }{
		{`{"model":"m","messages":[{"role":"user","content":5}]}`, "messages.[0].content"},
		{`{"model":"m","messages":[{"role":"wizard","content":"x"}]}`, "messages.[0].role"},
		{`{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages.[0].tool_call_id"},
		{`{"model":"m","messages":[]}`, "messages"},
		{`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]}`, "stop"},
		{`{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"extreme"}`, "reasoning_effort"},
		{`{"model":"m","messages":[{"role":"user","content":"x"}],"metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`, "metadata.k"},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"not a data url"}}]}]}`, "messages.[0].content.[0].file.file_data"},
	}
	for _, c := range cases {
		_, err := chatcompletions.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(c.body)})
		if err == nil {
			t.Errorf("%s: accepted", c.body)
			continue
		}
		e := translate.ToProto(err)
		status, body := chatcompletions.Client{}.EncodeError(e)
		var got struct{ Error struct{ Param string } }
		_ = json.Unmarshal(body, &got)
		if status != 400 || got.Error.Param != c.param {
			t.Errorf("%s: %d %s, want 400 naming %s", c.body, status, body, c.param)
		}
		sdkcheck.OpenAIError(t, status, body, "invalid_request_error", e.GetMessage())
	}
}

// A request from another dialect: instructions lead as a system message,
// tool results in a user turn become tool messages placed first, and what
// the dialect cannot carry is listed.
func TestForeignRequestShape(t *testing.T) {
	req := &parleyv1.Request{
		Model:        "m",
		Instructions: []*parleyv1.Part{translate.TextPart("Be brief.")},
		Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Weather?")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, translate.CallPart("c1", "get_weather", `{"city":"Paris"}`)),
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.ResultPart("c1", "18C", false), translate.TextPart("And tomorrow?")),
		},
		Generation:     &parleyv1.GenerationConfig{TopK: new(int32(5))},
		SafetySettings: []*parleyv1.SafetySetting{{}},
	}
	out, err := chatcompletions.Upstream{}.EncodeRequest(req, translate.Target{Model: "gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	sdkcheck.ChatRequest(t, out.Body)
	var w struct {
		Messages []struct {
			Role       string
			ToolCallID string `json:"tool_call_id"`
			Content    any
		}
	}
	if err := json.Unmarshal(out.Body, &w); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range w.Messages {
		roles = append(roles, m.Role)
	}
	if fmt.Sprint(roles) != "[system user assistant tool user]" || w.Messages[3].ToolCallID != "c1" {
		t.Errorf("messages = %s", out.Body)
	}
	if fmt.Sprint(out.Dropped) != "[generation.top_k safety_settings]" {
		t.Errorf("dropped = %v", out.Dropped)
	}
}

// A tool message whose content is an array of one text part reaches an
// upstream of this dialect as the client sent it.
func TestToolMessageKeepsOneTextPartArray(t *testing.T) {
	body := `{"model":"m","messages":[` +
		`{"role":"user","content":"Weather?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"18C"}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"19C"}]}`
	req, err := chatcompletions.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := chatcompletions.Upstream{}.EncodeRequest(req, translate.Target{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Messages []struct{ Content json.RawMessage }
	}
	if err := json.Unmarshal(out.Body, &w); err != nil {
		t.Fatal(err)
	}
	if len(w.Messages) != 4 {
		t.Fatalf("messages = %s", out.Body)
	}
	if got := string(w.Messages[2].Content); got != `[{"type":"text","text":"18C"}]` {
		t.Errorf("array content = %s, want the one text part", got)
	}
	if got := string(w.Messages[3].Content); got != `"19C"` {
		t.Errorf("string content = %s, want the string", got)
	}
}

// A tool message's content reaches an upstream of this dialect in a form
// the service takes: a string or a non-empty array of text parts. Content
// the client sent null, as an empty array or not at all goes as "".
func TestToolMessageContentTheServiceTakes(t *testing.T) {
	for content, want := range map[string]string{
		`"content":null`:  `""`,
		`"content":[]`:    `""`,
		``:                `""`,
		`"content":""`:    `""`,
		`"content":"18C"`: `"18C"`,
		`"content":[{"type":"text","text":"18"},{"type":"text","text":"C"}]`: `[{"type":"text","text":"18"},{"type":"text","text":"C"}]`,
	} {
		tool, name := `{"role":"tool","tool_call_id":"c1"`, content
		if content != "" {
			tool += "," + content
		} else {
			name = "no content"
		}
		body := `{"model":"m","messages":[` +
			`{"role":"user","content":"Weather?"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
			tool + `}]}`
		req, err := chatcompletions.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(body)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := chatcompletions.Upstream{}.EncodeRequest(req, translate.Target{Model: "m"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sdkcheck.ChatRequest(t, out.Body)
		var w struct {
			Messages []struct{ Content json.RawMessage }
		}
		if err := json.Unmarshal(out.Body, &w); err != nil {
			t.Fatal(err)
		}
		if len(w.Messages) != 3 {
			t.Fatalf("%s: messages = %s", name, out.Body)
		}
		if got := string(w.Messages[2].Content); got != want {
			t.Errorf("tool message with %s: content %s, want %s", name, got, want)
		}
	}
}
