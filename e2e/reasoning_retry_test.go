package e2e_test

import (
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
