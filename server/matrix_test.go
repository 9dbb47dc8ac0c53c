package server_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestMatrix runs every client dialect's official SDK against Parley on
// a loopback port, served by a fake upstream of every dialect, whole and
// streamed, on each recorded scenario: text with a system prompt, a
// multi-turn tool round trip (parsed arguments, tool stop reason),
// reasoning, an image, structured output, usage with cached tokens, and
// an upstream error (429 with Retry-After). For each it checks what the
// SDK read, through its own types and accumulator, against what the
// upstream's recording says, and what reached the upstream against what
// the client asked. A stream from a content-generation upstream must be
// asked for with ?alt=sse (the fake refuses it otherwise), and a tool turn
// ends as each client's dialect ends one (tool_use, tool_calls, a
// function_call item) even when that upstream ends it with a plain STOP
// (guide §8 items 1 and 11).
func TestMatrix(t *testing.T) {
	g := startGateway(t, gwExtra{})
	scenarios, err := os.ReadDir(tableDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios {
		for _, a := range dialectList {
			for _, b := range dialectList {
				for _, stream := range []bool{false, true} {
					mode := "whole"
					if stream {
						mode = "stream"
					}
					t.Run(sc.Name()+"/"+a.name+"_via_"+b.name+"/"+mode, func(t *testing.T) {
						matrixCase(t, g, sc.Name(), a, b, stream)
					})
				}
			}
		}
	}
}

func matrixCase(t *testing.T, g *gateway, scenario string, a, b dialect, stream bool) {
	fake := g.fakes[b.name]
	fake.set(scenario, nil)
	body := fixture(t, scenario, a.name, "request.json")
	res := sdks[a.name](t, g.url, clientKey, "via-"+b.name, body, stream)

	got := fake.requests()
	if len(got) != 1 {
		t.Fatalf("the %s upstream got %d requests, want 1 (the SDK saw %v)", b.name, len(got), res.err)
	}
	// What reached the upstream asks what the client asked.
	want := askedOf(decodeAt(t, a, received{Path: "/v1beta/models/via-" + b.name + ":generateContent", Header: http.Header{}, Body: body}))
	up := askedOf(decodeAt(t, b, got[0]))
	if d := cmp.Diff(want, up, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the upstream was asked something else (-client +upstream):\n%s", d)
	}
	if b.name == "generate_content" && stream && got[0].Query["alt"][0] != "sse" {
		t.Errorf("a content-generation stream without ?alt=sse: %v", got[0].Query)
	}

	if scenario == "errors" {
		if res.err == nil || res.status != http.StatusTooManyRequests {
			t.Fatalf("the SDK saw %v (status %d), want the upstream's 429", res.err, res.status)
		}
		return
	}
	if res.err != nil {
		t.Fatalf("the SDK failed: %v", res.err)
	}
	exp := expected(t, scenario, b, stream)
	if !canShowReasoning(a.name) || !exp.Reasoning {
		exp.Reasoning, res.answer.Reasoning = false, false
	}
	if d := cmp.Diff(exp, res.answer, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the SDK read another answer than the upstream gave (-upstream +client):\n%s", d)
	}
	if exp.Text == "" && len(exp.Calls) == 0 {
		t.Errorf("the scenario's answer is empty: %+v", exp)
	}
}

// canShowReasoning: the chat-completions SDK has no field for reasoning
// text (Parley sends reasoning_content, which it keeps as an extra field
// only on whole replies).
func canShowReasoning(d string) bool { return d != "chat_completions" }
