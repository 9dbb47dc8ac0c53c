package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/parleyhq/parley/cloud/cloudtest"
)

var cloudCreds = aws.Credentials{AccessKeyID: "AKIDPARLEYE2E0001", SecretAccessKey: "parley/e2e/aws/secret/0001", SessionToken: "parley-e2e-session-0001"}

// clouds is `parley serve` in front of a fake of each cloud.
type clouds struct {
	r       *replica
	bedrock *cloudtest.Bedrock
	vertex  *cloudtest.Vertex
	azure   *cloudtest.Azure
}

func startClouds(t *testing.T) *clouds {
	c := &clouds{
		bedrock: cloudtest.NewBedrock(t, "us-east-1", cloudCreds),
		vertex:  cloudtest.NewVertex(t, "parley-e2e", "us-east5"),
		azure:   cloudtest.NewAzure(t, "azure-e2e-key-0123456789abcdef", "gpt-4o-prod"),
	}
	dir := t.TempDir()
	sa := c.vertex.ServiceAccountFile(t, dir)
	cfg := fmt.Sprintf(`upstreams:
  - name: bedrock
    dialect: messages
    base_url: %[1]s
    max_retries: 0
    provider: {cloud: bedrock, region: us-east-1}
  - name: vertex-gemini
    dialect: generate_content
    base_url: %[2]s
    provider: {cloud: vertex, project: parley-e2e, location: us-east5, credentials_file: %[3]s}
  - name: vertex-claude
    dialect: messages
    base_url: %[2]s
    provider: {cloud: vertex, project: parley-e2e, location: us-east5, credentials_file: %[3]s}
  - name: azure
    dialect: chat_completions
    base_url: %[4]s
    api_key: ${AZURE_OPENAI_API_KEY}
    provider: {cloud: azure, api_version: "2024-10-21"}
  - name: azure-v1
    dialect: responses
    base_url: %[4]s
    provider:
      cloud: azure
      entra: {tenant_id: tenant-0001, client_id: client-0001, client_secret: "${AZURE_CLIENT_SECRET}", authority: %[4]s}
  - name: bedrock-converse
    dialect: converse
    base_url: %[1]s
    max_retries: 0
    provider: {cloud: bedrock, region: us-east-1}
models:
  - {name: claude-bedrock, upstream: bedrock, upstream_model: "anthropic.claude-sonnet-4-5-20250929-v1:0"}
  - {name: claude-vertex, upstream: vertex-claude, upstream_model: "claude-sonnet-4-5@20250929"}
  - {name: gemini-vertex, upstream: vertex-gemini, upstream_model: gemini-2.5-pro}
  - {name: gpt-azure, upstream: azure, upstream_model: gpt-4o-prod}
  - {name: gpt-azure-v1, upstream: azure-v1, upstream_model: gpt-4.1}
  - name: claude-anywhere
    routes:
      # Bedrock first but for one request in a million; Vertex when it throttles.
      - {upstream: bedrock, upstream_model: "anthropic.claude-sonnet-4-5-20250929-v1:0", weight: 1000000}
      - {upstream: vertex-claude, upstream_model: "claude-sonnet-4-5@20250929", weight: 1}
  - name: claude-split
    routes:
      # Two upstreams of the messages dialect, drawn evenly.
      - {upstream: bedrock, upstream_model: "anthropic.claude-sonnet-4-5-20250929-v1:0", weight: 1}
      - {upstream: vertex-claude, upstream_model: "claude-sonnet-4-5@20250929", weight: 1}
  - {name: claude-converse, upstream: bedrock-converse, upstream_model: "anthropic.claude-sonnet-4-5-20250929-v1:0"}
  - {name: nova-converse, upstream: bedrock-converse, upstream_model: "amazon.nova-pro-v1:0"}
  - name: claude-converse-anywhere
    routes:
      # Bedrock's Converse API first but for one request in a million;
      # Vertex when it throttles.
      - {upstream: bedrock-converse, upstream_model: "anthropic.claude-sonnet-4-5-20250929-v1:0", weight: 1000000}
      - {upstream: vertex-claude, upstream_model: "claude-sonnet-4-5@20250929", weight: 1}
`, c.bedrock.URL, c.vertex.URL, sa, c.azure.URL)
	c.r = start(t, writeConfig(t, cfg), dir,
		"AWS_ACCESS_KEY_ID="+cloudCreds.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+cloudCreds.SecretAccessKey, "AWS_SESSION_TOKEN="+cloudCreds.SessionToken,
		"AWS_CONFIG_FILE="+filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"), "AWS_EC2_METADATA_DISABLED=true",
		"AWS_PROFILE=", "AWS_REGION=",
		"AZURE_OPENAI_API_KEY="+c.azure.APIKey, "AZURE_CLIENT_SECRET="+c.azure.ClientSecret)
	c.r.waitReady(t)
	return c
}

func (c *clouds) anthropic() anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(c.r.url), aoption.WithAPIKey("sk-local"), aoption.WithMaxRetries(0))
}

func (c *clouds) openai() openai.Client {
	return openai.NewClient(ooption.WithBaseURL(c.r.url+"/v1"), ooption.WithAPIKey("sk-local"), ooption.WithMaxRetries(0))
}

func messageText(m *anthropic.Message) string {
	var b strings.Builder
	for _, blk := range m.Content {
		b.WriteString(blk.Text)
	}
	return b.String()
}

// claude asks model through the Anthropic SDK, whole or streamed (the
// stream read through the SDK's accumulator).
func (c *clouds) claude(t *testing.T, model string, body string, stream bool) *anthropic.Message {
	t.Helper()
	cl := c.anthropic()
	b := strings.Replace(body, "{", `{"model":"`+model+`","max_tokens":256,`, 1)
	if stream {
		b = strings.Replace(b, "{", `{"stream":true,`, 1)
		s := cl.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{}, aoption.WithRequestBody("application/json", []byte(b)))
		var msg anthropic.Message
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("%s stream: %v", model, err)
		}
		return &msg
	}
	msg, err := cl.Messages.New(context.Background(), anthropic.MessageNewParams{}, aoption.WithRequestBody("application/json", []byte(b)))
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	return msg
}

const weatherTool = `"tools":[{"name":"get_weather","description":"The weather in a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`

// Claude Code's kind of client, served by Claude on Bedrock and on Vertex
// and by GPT on Azure: whole, streamed, and a tool round trip.
func TestCloudsAnthropicClients(t *testing.T) {
	c := startClouds(t)
	for _, tc := range []struct{ model, who string }{
		{"claude-bedrock", "bedrock anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"claude-vertex", "vertex claude-sonnet-4-5@20250929"},
		{"gpt-azure", "azure gpt-4o-prod"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				msg := c.claude(t, tc.model, `{"messages":[{"role":"user","content":"hello there"}]}`, stream)
				if got := messageText(msg); got != tc.who+": hello there" {
					t.Errorf("stream=%v: %q", stream, got)
				}
				if msg.Usage.InputTokens != 11 || msg.Usage.OutputTokens != 7 {
					t.Errorf("stream=%v: usage %+v", stream, msg.Usage)
				}
			}
			// Turn one: the model calls the tool.
			msg := c.claude(t, tc.model, `{"messages":[{"role":"user","content":"weather in Paris?"}],`+weatherTool+`}`, true)
			if msg.StopReason != anthropic.StopReasonToolUse || len(msg.Content) == 0 {
				t.Fatalf("turn one: %+v", msg)
			}
			call := msg.Content[len(msg.Content)-1]
			if call.Type != "tool_use" || call.Name != "get_weather" || string(call.Input) != `{"city":"Paris"}` {
				t.Fatalf("turn one's call: %+v", call)
			}
			// Turn two: the result goes back and reaches the cloud.
			turn2 := fmt.Sprintf(`{"messages":[{"role":"user","content":"weather in Paris?"},{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"get_weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"sunny, 21C"}]}],%s}`, call.ID, call.ID, weatherTool)
			if got := messageText(c.claude(t, tc.model, turn2, false)); got != tc.who+": the tool said sunny, 21C" {
				t.Errorf("turn two: %q", got)
			}
		})
	}
	// Every Bedrock request was signed (the fake refuses any other) and
	// went to InvokeModel.
	for _, s := range c.bedrock.Seen() {
		if !strings.HasPrefix(s.Path, "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke") {
			t.Errorf("bedrock path %s", s.Path)
		}
	}
	if n := c.vertex.Mints(); n != 1 {
		t.Errorf("%d Vertex tokens minted for one live token's requests, want 1", n)
	}
	c.noSecretsIn(t, c.r.logs.String())
}

// Codex's kind of client (responses) served by Gemini on Vertex, and a
// chat-completions client served by Claude on Vertex.
func TestCloudsOpenAIClients(t *testing.T) {
	c := startClouds(t)
	cl := c.openai()
	body := []byte(`{"model":"gemini-vertex","input":"hi from codex"}`)
	r, err := cl.Responses.New(context.Background(), responses.ResponseNewParams{}, ooption.WithRequestBody("application/json", body))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.OutputText(); got != "vertex gemini-2.5-pro: hi from codex" {
		t.Errorf("responses: %q", got)
	}
	s := cl.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{}, ooption.WithRequestBody("application/json", []byte(`{"model":"gemini-vertex","input":"streamed codex","stream":true}`)))
	var text strings.Builder
	for s.Next() {
		if ev := s.Current(); ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
	}
	if err := s.Err(); err != nil || text.String() != "vertex gemini-2.5-pro: streamed codex" {
		t.Errorf("responses stream: %q, %v", text.String(), err)
	}
	cc, err := cl.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{}, ooption.WithRequestBody("application/json",
		[]byte(`{"model":"claude-vertex","messages":[{"role":"user","content":"hi from chat"}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := cc.Choices[0].Message.Content; got != "vertex claude-sonnet-4-5@20250929: hi from chat" {
		t.Errorf("chat: %q", got)
	}
	c.noSecretsIn(t, c.r.logs.String())
}

// The Gemini CLI's kind of client served by GPT on Azure's v1 surface,
// signed in with Entra ID.
func TestCloudsGenAIClient(t *testing.T) {
	c := startClouds(t)
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "sk-local", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: c.r.url}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := gc.Models.GenerateContent(context.Background(), "gpt-azure-v1", genai.Text("hi from gemini cli"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Text(); got != "azure gpt-4.1: hi from gemini cli" {
		t.Errorf("whole: %q", got)
	}
	var text strings.Builder
	for ch, err := range gc.Models.GenerateContentStream(context.Background(), "gpt-azure-v1", genai.Text("streamed"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ch.Text())
	}
	if text.String() != "azure gpt-4.1: streamed" {
		t.Errorf("stream: %q", text.String())
	}
	if c.azure.Mints() != 1 {
		t.Errorf("%d Entra tokens minted, want 1", c.azure.Mints())
	}
	for _, s := range c.azure.Seen() {
		if s.Path != "/tenant-0001/oauth2/v2.0/token" && s.Path != "/openai/v1/responses" {
			t.Errorf("azure path %s", s.Path)
		}
	}
}

// A model whose first route is Bedrock falls back to Vertex on a Bedrock
// throttle; the client never sees it.
func TestCloudsFallbackOnThrottle(t *testing.T) {
	c := startClouds(t)
	c.bedrock.Throttle.Store(1)
	msg := c.claude(t, "claude-anywhere", `{"messages":[{"role":"user","content":"anyone?"}]}`, true)
	if got := messageText(msg); got != "vertex claude-sonnet-4-5@20250929: anyone?" {
		t.Errorf("reply %q", got)
	}
	if n := len(c.bedrock.Seen()); n != 1 {
		t.Errorf("bedrock saw %d requests, want the one it throttled", n)
	}
	// With Bedrock answering again, it serves the model.
	if got := messageText(c.claude(t, "claude-anywhere", `{"messages":[{"role":"user","content":"back?"}]}`, false)); got != "bedrock anthropic.claude-sonnet-4-5-20250929-v1:0: back?" {
		t.Errorf("reply %q", got)
	}
}

func (c *clouds) noSecretsIn(t *testing.T, text string) {
	t.Helper()
	for _, s := range []string{cloudCreds.SecretAccessKey, cloudCreds.SessionToken, c.azure.APIKey, c.azure.ClientSecret, "ya29.fake", "BEGIN PRIVATE KEY"} {
		if strings.Contains(text, s) {
			t.Errorf("a secret (%.8s...) appears in the gateway's output", s)
		}
	}
}

// Claude's signed thinking comes back to the cloud that made it, between
// tool calls, through the Anthropic SDK; the fakes refuse any other
// signature, as the service does.
func TestCloudsThinkingRoundTrip(t *testing.T) {
	c := startClouds(t)
	for _, tc := range []struct{ model, cloud, upstreamModel string }{
		{"claude-bedrock", "bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"claude-vertex", "vertex", "claude-sonnet-4-5@20250929"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			thinking := `"thinking":{"type":"enabled","budget_tokens":1024},`
			msg := c.claude(t, tc.model, `{`+thinking+`"messages":[{"role":"user","content":"weather in Paris?"}],`+weatherTool+`}`, true)
			if len(msg.Content) != 2 || msg.Content[0].Type != "thinking" || msg.Content[1].Type != "tool_use" {
				t.Fatalf("turn one: %+v", msg.Content)
			}
			th, call := msg.Content[0], msg.Content[1]
			if th.Signature == "" || th.Thinking != "thinking on "+tc.cloud {
				t.Fatalf("thinking block %+v", th)
			}
			turn2 := fmt.Sprintf(`{%s"messages":[{"role":"user","content":"weather in Paris?"},{"role":"assistant","content":[{"type":"thinking","thinking":%q,"signature":%q},{"type":"tool_use","id":%q,"name":"get_weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"rain"}]}],%s}`,
				thinking, th.Thinking, th.Signature, call.ID, call.ID, weatherTool)
			for _, stream := range []bool{false, true} {
				got := c.claude(t, tc.model, turn2, stream)
				if text := messageText(got); !strings.HasSuffix(text, ": the tool said rain") {
					t.Errorf("turn two (stream=%v): %q", stream, text)
				}
			}
		})
	}
}
