package server_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestSignatureRoundTrip: an agent speaking the messages dialect is
// served by a content-generation upstream whose tool call carries a
// thought signature. The agent sends the assistant turn back as it got it,
// with the tool's result; the signature must reach the upstream that made
// it unchanged, and must not reach an upstream of another service.
func TestSignatureRoundTrip(t *testing.T) {
	g := startGateway(t, gwExtra{})
	const sig = "EqQBCkgIARABGAIiQL2mU8Q2nO1gG0bK9lQ0n3y3n5bW"
	gc := g.fakes["generate_content"]
	gc.set("tool", nil)

	turn1 := withModel(t, []byte(`{"max_tokens":1024,"tools":[{"name":"get_weather","description":"Weather of a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"messages":[{"role":"user","content":"Weather in Paris?"}]}`), "via-generate_content", false)
	resp := post(t, g.url+"/v1/messages", turn1)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var reply struct {
		Content    []map[string]any `json:"content"`
		StopReason string           `json:"stop_reason"`
	}
	if err := json.Unmarshal(body, &reply); err != nil || reply.StopReason != "tool_use" {
		t.Fatalf("turn 1: %v %s", err, body)
	}
	if strings.Contains(string(body), sig) {
		t.Errorf("the raw signature reached the client unsealed: %s", body)
	}
	var callID string
	for _, b := range reply.Content {
		if b["type"] == "tool_use" {
			callID, _ = b["id"].(string)
		}
	}

	turn2 := func(model string) []byte {
		var req map[string]any
		_ = json.Unmarshal(turn1, &req)
		req["model"] = model
		req["messages"] = append(req["messages"].([]any),
			map[string]any{"role": "assistant", "content": reply.Content},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": callID, "content": "18°C and sunny"}}},
		)
		b, _ := json.Marshal(req)
		return b
	}

	gc.set("text", nil)
	r2 := post(t, g.url+"/v1/messages", turn2("via-generate_content"))
	defer r2.Body.Close()
	if r2.StatusCode != 200 {
		b, _ := io.ReadAll(r2.Body)
		t.Fatalf("turn 2: %d %s", r2.StatusCode, b)
	}
	got := gc.requests()
	if len(got) != 1 || !strings.Contains(string(got[0].Body), `"thoughtSignature":"`+sig+`"`) {
		t.Errorf("the content-generation upstream did not get its signature back:\n%s", got[0].Body)
	}

	msgs := g.fakes["messages"]
	msgs.set("text", nil)
	r3 := post(t, g.url+"/v1/messages", turn2("via-messages"))
	defer r3.Body.Close()
	if r3.StatusCode != 200 {
		b, _ := io.ReadAll(r3.Body)
		t.Fatalf("turn 2 via messages: %d %s", r3.StatusCode, b)
	}
	if got := msgs.requests(); len(got) != 1 || strings.Contains(string(got[0].Body), sig) {
		t.Errorf("another service's signature reached the messages upstream:\n%s", got[0].Body)
	}
}
