package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/cloud/cloudtest"
)

// Claude Code's conversation moved from Claude on Vertex to Claude on
// Bedrock (a fallback, a changed route): its next turn carries a thinking
// block Vertex signed, which Bedrock refuses as not its own. Parley sends
// the turn to Bedrock once more without the reasoning; the client gets
// the answer and never the refusal, whole and streamed, and the metric
// counts the retry (guide §8 item 19).
func TestCloudsRefusedReasoningIsRetriedWithout(t *testing.T) {
	c := startClouds(t)
	foreign := cloudtest.Signature("vertex", "claude-sonnet-4-5@20250929")
	turn := `{"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":[{"type":"thinking","thinking":"greet back","signature":"` + foreign + `"},{"type":"text","text":"Hi!"}]},{"role":"user","content":"once more"}]}`
	for _, stream := range []bool{false, true} {
		msg := c.claude(t, "claude-bedrock", turn, stream)
		if got := messageText(msg); got != "bedrock anthropic.claude-sonnet-4-5-20250929-v1:0: once more" {
			t.Errorf("stream=%v: %q", stream, got)
		}
	}
	seen := c.bedrock.Seen()
	if len(seen) != 4 {
		t.Fatalf("bedrock saw %d requests, want two per turn", len(seen))
	}
	for i, s := range seen {
		if carries := strings.Contains(string(s.Body), foreign); carries != (i%2 == 0) {
			t.Errorf("request %d carries the foreign signature: %v", i, carries)
		}
	}
	resp, err := http.Get(c.r.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `parley_reasoning_retries_total{upstream="bedrock"} 2`) {
		t.Errorf("the metric does not count two retries:\n%s", grepLines(string(b), "parley_reasoning_retries_total"))
	}
	c.noSecretsIn(t, c.r.logs.String())
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Claude Code on a model that two upstreams of its own dialect serve
// (Claude on Bedrock and on Vertex, drawn evenly): the signature of turn
// one reaches the client sealed with the name of its maker, every later
// turn of the tool loop goes back to that maker with the signature as it
// made it, whatever the weights draw; and with the maker down, the other
// upstream serves the turn without the foreign reasoning and with
// thinking off for that turn (its service refuses thinking on a tool
// turn without it), never seeing a refusal (issue 23).
func TestCloudsReasoningStaysWithItsMaker(t *testing.T) {
	c := startClouds(t)
	models := map[string]string{"bedrock": "anthropic.claude-sonnet-4-5-20250929-v1:0", "vertex": "claude-sonnet-4-5@20250929"}
	thinking := `"thinking":{"type":"enabled","budget_tokens":1024},`
	msg := c.claude(t, "claude-split", `{`+thinking+`"messages":[{"role":"user","content":"weather in Paris?"}],`+weatherTool+`}`, true)
	if len(msg.Content) != 2 || msg.Content[0].Type != "thinking" || msg.Content[1].Type != "tool_use" {
		t.Fatalf("turn one: %+v", msg.Content)
	}
	th, call := msg.Content[0], msg.Content[1]
	maker, _ := strings.CutPrefix(th.Thinking, "thinking on ")
	other := map[string]string{"bedrock": "vertex", "vertex": "bedrock"}[maker]
	raw := cloudtest.Signature(maker, models[maker])
	if other == "" || th.Signature == raw || !strings.HasPrefix(th.Signature, "UFJMWQ") {
		t.Fatalf("turn one by %q gave the signature %.24s..., not sealed", maker, th.Signature)
	}
	seen := func(cloud string) []cloudtest.Seen { // model requests only
		all := c.vertex.Seen()
		if cloud == "bedrock" {
			all = c.bedrock.Seen()
		}
		var out []cloudtest.Seen
		for _, s := range all {
			if strings.Contains(s.Path, "/models/") || strings.HasPrefix(s.Path, "/model/") {
				out = append(out, s)
			}
		}
		return out
	}
	before := len(seen(other))
	turn2 := fmt.Sprintf(`{%s"messages":[{"role":"user","content":"weather in Paris?"},{"role":"assistant","content":[{"type":"thinking","thinking":%q,"signature":%q},{"type":"tool_use","id":%q,"name":"get_weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"rain"}]}],%s}`,
		thinking, th.Thinking, th.Signature, call.ID, call.ID, weatherTool)
	for i := range 6 {
		got := messageText(c.claude(t, "claude-split", turn2, i%2 == 1))
		if want := maker + " " + models[maker] + ": the tool said rain"; !strings.HasSuffix(got, want) {
			t.Fatalf("turn two, try %d: %q, want the maker's %q", i, got, want)
		}
	}
	made := seen(maker)
	if last := string(made[len(made)-1].Body); !strings.Contains(last, `"signature":"`+raw+`"`) {
		t.Errorf("the maker got its signature back otherwise:\n%s", last)
	}
	if n := len(seen(other)); n != before {
		t.Errorf("the other upstream got %d of the turns", n-before)
	}

	// The maker is down: the other serves the turn.
	if maker == "bedrock" {
		c.bedrock.Throttle.Store(1)
	} else {
		c.vertex.Throttle.Store(10)
	}
	got := messageText(c.claude(t, "claude-split", turn2, false))
	if want := other + " " + models[other] + ": the tool said rain"; !strings.HasSuffix(got, want) {
		t.Fatalf("with its maker down: %q, want %q", got, want)
	}
	took := seen(other)
	body := string(took[len(took)-1].Body)
	if strings.Contains(body, raw) || strings.Contains(body, "UFJMWQ") || !strings.Contains(body, `"thinking":{"type":"disabled"}`) {
		t.Errorf("the other upstream got:\n%s", body)
	}
	if n := len(took) - before; n != 1 {
		t.Errorf("the other upstream got %d requests for the turn, want one (no refusal, no retry)", n)
	}
}
