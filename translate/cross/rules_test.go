package cross_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
)

// A count request from a client of another dialect counts its system
// prompt: it travels in the generateContentRequest.
func TestCountRequestFromAnotherDialect(t *testing.T) {
	req, err := messages.Client{}.DecodeCountRequest(&translate.Incoming{Body: []byte(`{"model":"claude-sonnet-4-5","system":"You are a scientist","messages":[{"role":"user","content":"Hello, Claude"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := generatecontent.Upstream{}.EncodeCountRequest(req, translate.Target{Model: "gemini-2.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.Body), `"systemInstruction":{"parts":[{"text":"You are a scientist"}]}`) {
		t.Errorf("body %s", out.Body)
	}
}

// Cache hints have no per-block form in the content-generation dialect:
// the upstream request names each one it could not carry, for the gateway
// to report, instead of dropping them silently (guide §8 item 10).
func TestCacheHintsTowardContentGenerationAreReported(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,
	"system":[{"type":"text","text":"You are an AI assistant tasked with analyzing literary works."},{"type":"text","text":"<the entire contents of Pride and Prejudice>","cache_control":{"type":"ephemeral"}}],
	"tools":[{"name":"get_weather","description":"Get the current weather","input_schema":{"type":"object","properties":{"location":{"type":"string"}}},"cache_control":{"type":"ephemeral","ttl":"1h"}}],
	"messages":[{"role":"user","content":[{"type":"text","text":"Analyze the major themes in Pride and Prejudice.","cache_control":{"type":"ephemeral"}}]}]}`
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: "gemini-2.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"instructions[1].cache_control", "messages[0].parts[0].cache_control", "tools[0].cache_control"}
	if strings.Join(out.Dropped, " ") != strings.Join(want, " ") {
		t.Errorf("dropped %v, want %v", out.Dropped, want)
	}
	back, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Dropped) != 0 || strings.Count(string(back.Body), "cache_control") != 3 {
		t.Errorf("toward its own dialect the hints go as they came: dropped %v, body %s", back.Dropped, back.Body)
	}
}

// Settings the messages dialect has no field for are listed as dropped,
// not lost silently: the content-generation SDK's full generation config,
// less the second candidate that would refuse the request outright.
func TestSettingsTowardMessagesAreReported(t *testing.T) {
	body, err := os.ReadFile("../../testdata/generate_content/sdk_generation_config/request.json")
	if err != nil {
		t.Fatal(err)
	}
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "models/gemini-2.5-flash", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	req.Generation.CandidateCount = nil
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	want := "generation.seed generation.presence_penalty generation.frequency_penalty generation.logprobs generation.media_resolution generation.enhanced_civic_answers"
	if got := strings.Join(out.Dropped, " "); got != want {
		t.Errorf("dropped %q, want %q", got, want)
	}
}

// An enum answer format has no messages form: it is reported, not lost.
func TestEnumFormatTowardMessagesIsReported(t *testing.T) {
	body, err := os.ReadFile("../../testdata/generate_content/sdk_enum_output/request.json")
	if err != nil {
		t.Fatal(err)
	}
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "models/gemini-2.5-flash", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(out.Dropped, " "), "response_format") {
		t.Errorf("dropped %v", out.Dropped)
	}
}

// A chat client that asks for reasoning effort reads reasoning back as
// reasoning_content: upstreams that show reasoning only when asked are
// asked (a responses service for its summaries, a content-generation
// service for its thoughts); one that asks for none is not.
func TestChatReasoningIsAskedFor(t *testing.T) {
	for _, c := range []struct{ effort, summary, thoughts string }{
		{"high", "auto", "true"},
		{"none", "", ""},
	} {
		req, err := chatcompletions.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(`{"model":"m","reasoning_effort":"` + c.effort + `","messages":[{"role":"user","content":"why?"}]}`)})
		if err != nil {
			t.Fatal(err)
		}
		r := upstreamBody(t, responses.Upstream{}, req)
		summary, _ := r["reasoning"].(map[string]any)["summary"].(string)
		if summary != c.summary {
			t.Errorf("effort %s toward a responses upstream: reasoning %v, want summary %q", c.effort, r["reasoning"], c.summary)
		}
		g := upstreamBody(t, generatecontent.Upstream{}, req)
		thinking, _ := g["generationConfig"].(map[string]any)["thinkingConfig"].(map[string]any)
		if got := fmt.Sprint(thinking["includeThoughts"]); c.thoughts != "" && got != c.thoughts || c.thoughts == "" && thinking["includeThoughts"] == true {
			t.Errorf("effort %s toward a content-generation upstream: thinkingConfig %v", c.effort, thinking)
		}
	}
}

// screenPNG is the image a screenshot tool returns in screenshotTurn.
const screenPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// screenshotTurn is a messages client's turn answering a screenshot
// call with text and an image, and asking about it.
func screenshotTurn(t *testing.T) *parleyv1.Request {
	t.Helper()
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(`{"model":"m","max_tokens":100,"messages":[
		{"role":"user","content":"Take a screenshot."},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"screenshot","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"done"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + screenPNG + `"}}]},{"type":"text","text":"What do you see?"}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// An image inside a tool result reaches a chat upstream, whose tool
// messages hold text alone, in a user message right after the tool
// messages, labelled with the call it came from; the tool message says
// where it went (issue 18, item 9; guide §8 item 15).
func TestToolResultMediaMovesToAUserTurn(t *testing.T) {
	req := screenshotTurn(t)
	c := upstreamBody(t, chatcompletions.Upstream{}, req)
	msgs := c["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want user, assistant, tool, user: %v", len(msgs), msgs)
	}
	tool := msgs[2].(map[string]any)
	if tool["role"] != "tool" || !strings.Contains(fmt.Sprint(tool["content"]), "done") || !strings.Contains(fmt.Sprint(tool["content"]), "attached in the next user message") {
		t.Errorf("tool message %v", tool)
	}
	user := msgs[3].(map[string]any)
	parts, _ := user["content"].([]any)
	if user["role"] != "user" || len(parts) != 3 {
		t.Fatalf("the turn after the tool message: %v", user)
	}
	label, image, question := parts[0].(map[string]any), parts[1].(map[string]any), parts[2].(map[string]any)
	if !strings.Contains(fmt.Sprint(label["text"]), "toolu_1") || image["type"] != "image_url" ||
		!strings.HasPrefix(fmt.Sprint(image["image_url"].(map[string]any)["url"]), "data:image/png;base64,"+screenPNG[:16]) || question["text"] != "What do you see?" {
		t.Errorf("the turn after the tool message: %v", parts)
	}
}

// An image inside a tool result reaches a content-generation upstream,
// whose function responses hold no media, as a part of its own after the
// function responses of the turn, labelled with the call it came from,
// as the service's own clients send one; the function response says
// where it went (issue 18, item 9; guide §8 item 15).
func TestToolResultMediaFollowsTheFunctionResponse(t *testing.T) {
	req := screenshotTurn(t)
	out, err := generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: "gemini-2.5-pro"})
	if err != nil {
		t.Fatal(err)
	}
	sdkcheck.GenerateContentRequest(t, out.Body)
	var w struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             *string `json:"text"`
				InlineData       *struct{ MimeType, Data string }
				FunctionResponse *struct {
					Name     string         `json:"name"`
					Response map[string]any `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(out.Body, &w); err != nil {
		t.Fatal(err)
	}
	last := w.Contents[len(w.Contents)-1]
	var kinds []string
	for _, p := range last.Parts {
		switch {
		case p.FunctionResponse != nil:
			kinds = append(kinds, "response")
			if s := fmt.Sprint(p.FunctionResponse.Response["output"]); !strings.Contains(s, "done") || !strings.Contains(s, "attached after this response") {
				t.Errorf("the function response says %q", s)
			}
		case p.InlineData != nil:
			kinds = append(kinds, "image")
			if p.InlineData.MimeType != "image/png" || p.InlineData.Data != screenPNG {
				t.Errorf("the image went as %+v", p.InlineData)
			}
		case p.Text != nil && strings.Contains(*p.Text, "toolu_1"):
			kinds = append(kinds, "label")
		case p.Text != nil:
			kinds = append(kinds, "text")
		}
	}
	if strings.Join(kinds, ",") != "response,text,label,image" && strings.Join(kinds, ",") != "response,label,image,text" {
		t.Errorf("the turn after the call holds %v", kinds)
	}
	if strings.Contains(string(out.Body), "omitted") {
		t.Errorf("the image was omitted: %s", out.Body)
	}
}

// Toward a Gemini 3 model, which reads media inside a function response,
// the image goes there (functionResponse.parts, named by a display name
// the response text points at), and nowhere else; and a Gemini client's
// function response with media inside reaches another dialect's upstream
// with the media in the tool result (issue 18, item 9).
func TestToolResultMediaInsideTheFunctionResponse(t *testing.T) {
	req := screenshotTurn(t)
	out, err := generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: "gemini-3-pro-preview"})
	if err != nil {
		t.Fatal(err)
	}
	sdkcheck.GenerateContentRequest(t, out.Body)
	var w struct {
		Contents []struct {
			Parts []struct {
				InlineData       *struct{ MimeType, Data string }
				FunctionResponse *struct {
					ID       string         `json:"id"`
					Response map[string]any `json:"response"`
					Parts    []struct {
						InlineData *struct{ MimeType, Data, DisplayName string }
					} `json:"parts"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(out.Body, &w); err != nil {
		t.Fatal(err)
	}
	last := w.Contents[len(w.Contents)-1]
	var fr = last.Parts[0].FunctionResponse
	if fr == nil || len(fr.Parts) != 1 || fr.Parts[0].InlineData == nil {
		t.Fatalf("the function response: %s", out.Body)
	}
	img := fr.Parts[0].InlineData
	if img.MimeType != "image/png" || img.Data != screenPNG || img.DisplayName != "toolu_1-0.png" || fr.ID != "toolu_1" {
		t.Errorf("the image inside the response: %+v, id %q", img, fr.ID)
	}
	if s := fmt.Sprint(fr.Response["output"]); !strings.Contains(s, "done") || !strings.Contains(s, "toolu_1-0.png") {
		t.Errorf("the function response says %q", s)
	}
	for _, p := range last.Parts {
		if p.InlineData != nil {
			t.Errorf("the image went beside the function response too: %s", out.Body)
		}
	}

	// The Gemini CLI's function response with an image inside, toward a
	// messages upstream: the tool result holds the image.
	gc, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "gemini-3-pro-preview", Body: []byte(`{"contents":[
		{"role":"user","parts":[{"text":"Read the chart."}]},
		{"role":"model","parts":[{"functionCall":{"id":"fc1","name":"read_file","args":{"path":"chart.png"}}}]},
		{"role":"user","parts":[{"functionResponse":{"id":"fc1","name":"read_file","response":{"output":"the chart"},"parts":[{"inlineData":{"mimeType":"image/png","data":"` + screenPNG + `","displayName":"chart.png"}}]}}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	m := upstreamBody(t, messages.Upstream{}, gc)
	result := fmt.Sprint(m["messages"].([]any)[2])
	if !strings.Contains(result, "tool_result") || !strings.Contains(result, screenPNG[:24]) {
		t.Errorf("the tool result toward a messages upstream: %s", result)
	}
}
