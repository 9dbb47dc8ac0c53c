package cross_test

import (
	"encoding/json"
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

// nextTurn builds a responses client's second request the way the
// documentation's manual history does: the first input, the reply's
// output items as the SDK read them, and the tool's output.
func nextTurn(t *testing.T, reply []byte, callOutput bool) []byte {
	t.Helper()
	r := sdkcheck.ResponsesReply(t, reply)
	input := []json.RawMessage{json.RawMessage(`{"role":"user","content":"Check the sandbox."}`)}
	callID := ""
	for _, it := range r.Output {
		input = append(input, json.RawMessage(it.RawJSON()))
		if it.Type == "function_call" {
			callID = it.CallID
		}
	}
	if callOutput {
		if callID == "" {
			t.Fatal("the reply has no function call")
		}
		out, _ := json.Marshal(map[string]string{"type": "function_call_output", "call_id": callID, "output": "no errors"})
		input = append(input, out)
	}
	body, err := json.Marshal(map[string]any{"model": "gpt-5", "input": input,
		"tools": []any{map[string]any{"type": "function", "name": "checkSandboxErrors", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// A responses client served by a messages upstream: the thinking block's
// signature reaches the client sealed in a reasoning item's
// encrypted_content, and comes back to the messages upstream as it was;
// a content-generation upstream never sees it.
func TestSignatureSurvivesAResponsesClient(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/messages/response_thinking_tool_call/response.json")
	if err != nil {
		t.Fatal(err)
	}
	var orig struct {
		Content []struct{ Type, Signature, ID string } `json:"content"`
	}
	if err := json.Unmarshal(raw, &orig); err != nil {
		t.Fatal(err)
	}
	resp, err := messages.Upstream{}.DecodeResponse(translate.Target{Upstream: "claude-up", Model: "claude-sonnet-4-6"}, raw)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := responses.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(reply), orig.Content[0].Signature) {
		t.Error("the messages signature reached the responses client unsealed")
	}
	req, err := responses.Client{}.DecodeRequest(&translate.Incoming{Body: nextTurn(t, reply, true)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-sonnet-4-6", Upstream: "claude-up"})
	if err != nil {
		t.Fatal(err)
	}
	sdkcheck.MessagesRequest(t, out.Body)
	var sent struct {
		Messages []struct {
			Role    string
			Content []struct {
				Type, Signature, ID string
				ToolUseID           string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(out.Body, &sent); err != nil {
		t.Fatal(err)
	}
	assistant := sent.Messages[1]
	if len(assistant.Content) < 2 || assistant.Content[0].Type != "thinking" || assistant.Content[0].Signature != orig.Content[0].Signature {
		t.Errorf("the messages upstream got back %+v, want the thinking block with its signature first", assistant.Content)
	}
	if assistant.Content[len(assistant.Content)-1].ID != orig.Content[1].ID || sent.Messages[2].Content[0].ToolUseID != orig.Content[1].ID {
		t.Errorf("the call id did not survive: %+v / %+v", assistant.Content, sent.Messages[2].Content)
	}
	gc := upstreamBody(t, generatecontent.Upstream{}, req)
	if b, _ := json.Marshal(gc); strings.Contains(string(b), orig.Content[0].Signature) {
		t.Errorf("a content-generation upstream was sent a messages signature: %s", b)
	}
}

// A responses client served by a content-generation upstream: the
// thoughtSignature on a function call travels in a carrier reasoning item
// and returns to the call; a messages upstream never sees it.
func TestThoughtSignatureSurvivesAResponsesClient(t *testing.T) {
	body := []byte(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"checkSandboxErrors","args":{}},"thoughtSignature":"CiIBVKhc7oNHWlW5sC1pL1hIUw=="}]},"finishReason":"STOP"}],"modelVersion":"gemini-2.5-flash"}`)
	resp, err := generatecontent.Upstream{}.DecodeResponse(translate.Target{Upstream: "gemini-up"}, body)
	if err != nil {
		t.Fatal(err)
	}
	stampID(resp)
	reply, err := responses.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	req, err := responses.Client{}.DecodeRequest(&translate.Incoming{Body: nextTurn(t, reply, true)})
	if err != nil {
		t.Fatal(err)
	}
	g := upstreamBody(t, generatecontent.Upstream{}, req)
	b, _ := json.Marshal(g)
	if !strings.Contains(string(b), `"thoughtSignature":"CiIBVKhc7oNHWlW5sC1pL1hIUw=="`) {
		t.Errorf("the content-generation upstream did not get its signature back: %s", b)
	}
	m := upstreamBody(t, messages.Upstream{}, req)
	if b, _ := json.Marshal(m); strings.Contains(string(b), "CiIBVKhc7oNHWlW5sC1pL1hIUw") {
		t.Errorf("a messages upstream was sent a thought signature: %s", b)
	}
}

// A responses upstream's encrypted reasoning survives a responses client
// and goes back only to that upstream; a chat-completions upstream, which
// has no place for it, gets the call and its result without it.
func TestEncryptedContentGoesBackOnlyToItsMaker(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/responses/function_call_response/response.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := responses.Upstream{}.DecodeResponse(translate.Target{Upstream: "openai-up"}, raw)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := chatcompletions.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	c := sdkcheck.ChatReply(t, reply)
	if len(c.Choices[0].Message.ToolCalls) != 1 || c.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("the chat client got %s", reply)
	}
	if strings.Contains(string(reply), "gAAAA") {
		t.Error("encrypted reasoning reached a chat client, which cannot send it back")
	}
	// Through a responses client, the encrypted content returns to its
	// maker. A client of the maker's own dialect gets the value unsealed
	// (it may take its history straight to the service), so which
	// upstream of the dialect made it is not known when it comes back.
	rr, err := responses.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	req, err := responses.Client{}.DecodeRequest(&translate.Incoming{Body: nextTurn(t, rr, true)})
	if err != nil {
		t.Fatal(err)
	}
	same, err := responses.Upstream{}.EncodeRequest(req, translate.Target{Model: "gpt-5", Upstream: "openai-up"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(same.Body), `"encrypted_content":"gAAAAABpPDIVOKrsHNZ0GwsoEKA_IGfuJ5f8Ma_6-EojH4yZFL50qlfUzM7FREdQlpkqlnIHLRx2YJxZ"`) {
		t.Errorf("the maker did not get its encrypted reasoning back: %s", same.Body)
	}
}
