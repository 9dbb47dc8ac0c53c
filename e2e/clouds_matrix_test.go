package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/parleyhq/parley/cloud/cloudtest"
)

// The matrix: every client dialect, through its official SDK, against
// every model the clouds serve, each with a whole and a streamed answer
// and a tool round trip. One gateway serves the whole matrix.

// matrixModel is a model startClouds configures and what serves it.
type matrixModel struct {
	name string
	// who is how the fake names the upstream model in its replies:
	// "<cloud> <upstream model>".
	who string
	// fake is the cloud fake that serves the model (an index of
	// clouds.seen); ops are the operations (unescaped paths) the gateway
	// may call on it for the model, the sign-in endpoints aside.
	fake int
	ops  []string
	// resultText is what the fake reads of a tool result whose text is
	// s, when the client sent it as plain text.
	resultText func(s string) string
}

const (
	vertexModels = "/v1/projects/parley-e2e/locations/us-east5/publishers/"
	plainResult  = converseToolResult
)

// The fakes, as indexes of clouds.seen.
const (
	bedrockFake = iota
	vertexFake
	azureFake
)

func asIs(s string) string { return s }

// The models as startClouds configures them. Claude on Bedrock has the
// same model id (converseModel) through InvokeModel and through Converse.
var matrixModels = []matrixModel{
	{
		name: "claude-bedrock", who: "bedrock " + converseModel,
		fake:       bedrockFake,
		ops:        []string{"/model/" + converseModel + "/invoke", "/model/" + converseModel + "/invoke-with-response-stream"},
		resultText: asIs,
	},
	{
		name: "claude-converse", who: converseWho,
		fake:       bedrockFake,
		ops:        []string{"/model/" + converseModel + "/converse", "/model/" + converseModel + "/converse-stream"},
		resultText: asIs,
	},
	{
		name: "claude-vertex", who: "vertex claude-sonnet-4-5@20250929",
		fake: vertexFake,
		ops: []string{
			vertexModels + "anthropic/models/claude-sonnet-4-5@20250929:rawPredict",
			vertexModels + "anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
		},
		resultText: asIs,
	},
	{
		name: "gemini-vertex", who: "vertex gemini-2.5-pro",
		fake: vertexFake,
		ops: []string{
			vertexModels + "google/models/gemini-2.5-pro:generateContent",
			vertexModels + "google/models/gemini-2.5-pro:streamGenerateContent",
		},
		// A Gemini function response is a JSON object: Parley sends a
		// plain-text result as {"output": text}, the key Google's SDKs
		// use, and that object is what the model reads.
		resultText: func(s string) string { return `{"output":"` + s + `"}` },
	},
	{
		name: "gpt-azure", who: "azure gpt-4o-prod",
		fake:       azureFake,
		ops:        []string{"/openai/deployments/gpt-4o-prod/chat/completions"},
		resultText: asIs,
	},
	{
		name: "gpt-azure-v1", who: "azure gpt-4.1",
		fake:       azureFake,
		ops:        []string{"/openai/v1/responses"},
		resultText: asIs,
	},
}

// signInPaths are the fakes' token endpoints, which any request may
// need first.
var signInPaths = []string{"/token", "/tenant-0001/oauth2/v2.0/token"}

// matrixClient is one client dialect: how it asks a question, how it
// asks with the weather tool, and how it sends a call's result back.
type matrixClient struct {
	name   string
	prompt string
	ask    func(c *clouds, t *testing.T, model, prompt string, stream bool) turn
	first  func(c *clouds, t *testing.T, model, prompt string, stream bool) turn
	second func(c *clouds, t *testing.T, model, prompt string, call toolCall, result string, stream bool) turn
	// resultText is what the model reads of a result the client sent,
	// or "" when the model reads the plain result (see matrixModel).
	resultText func(result string) string
}

var matrixClients = []matrixClient{
	{
		name:   "anthropic",
		prompt: "hello from claude code",
		ask: func(c *clouds, t *testing.T, model, prompt string, stream bool) turn {
			return c.viaAnthropic(t, model, fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, prompt), stream)
		},
		first: func(c *clouds, t *testing.T, model, prompt string, stream bool) turn {
			return c.viaAnthropic(t, model, fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],%s}`, prompt, weatherTool), stream)
		},
		second: func(c *clouds, t *testing.T, model, prompt string, call toolCall, result string, stream bool) turn {
			return c.viaAnthropic(t, model, fmt.Sprintf(`{"messages":[{"role":"user","content":%q},{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":%s}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}],%s}`,
				prompt, call.id, call.name, call.args, call.id, result, weatherTool), stream)
		},
	},
	{
		name:   "chat",
		prompt: "hello from chat",
		ask: func(c *clouds, t *testing.T, model, prompt string, stream bool) turn {
			return c.viaChat(t, model, fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, prompt), stream)
		},
		first: func(c *clouds, t *testing.T, model, prompt string, stream bool) turn {
			return c.viaChat(t, model, fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],%s}`, prompt, chatWeatherTool), stream)
		},
		second: func(c *clouds, t *testing.T, model, prompt string, call toolCall, result string, stream bool) turn {
			return c.viaChat(t, model, fmt.Sprintf(`{"messages":[{"role":"user","content":%q},{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}]},{"role":"tool","tool_call_id":%q,"content":%q}],%s}`,
				prompt, call.id, call.name, call.args, call.id, result, chatWeatherTool), stream)
		},
	},
	{
		name:   "responses",
		prompt: "hello from codex",
		ask: func(c *clouds, t *testing.T, model, prompt string, stream bool) turn {
			return c.viaResponses(t, model, fmt.Sprintf(`{"input":%q}`, prompt), stream)
		},
		first: func(c *clouds, t *testing.T, model, prompt string, stream bool) turn {
			return c.viaResponses(t, model, fmt.Sprintf(`{"input":%q,%s}`, prompt, respWeatherTool), stream)
		},
		second: func(c *clouds, t *testing.T, model, prompt string, call toolCall, result string, stream bool) turn {
			return c.viaResponses(t, model, fmt.Sprintf(`{"input":[{"role":"user","content":%q},{"type":"function_call","call_id":%q,"name":%q,"arguments":%q},{"type":"function_call_output","call_id":%q,"output":%q}],%s}`,
				prompt, call.id, call.name, call.args, call.id, result, respWeatherTool), stream)
		},
	},
	{
		name:   "genai",
		prompt: "hello from gemini cli",
		ask: func(c *clouds, t *testing.T, model, prompt string, stream bool) turn {
			tr, _ := c.viaGenAI(t, model, genai.Text(prompt), nil, stream)
			return tr
		},
		first: func(c *clouds, t *testing.T, model, prompt string, stream bool) turn {
			tr, _ := c.viaGenAI(t, model, genai.Text(prompt), &genai.GenerateContentConfig{Tools: genaiWeatherTool}, stream)
			return tr
		},
		second: func(c *clouds, t *testing.T, model, prompt string, call toolCall, result string, stream bool) turn {
			var args map[string]any
			if err := json.Unmarshal([]byte(call.args), &args); err != nil {
				t.Fatal(err)
			}
			contents := []*genai.Content{
				genai.NewContentFromText(prompt, genai.RoleUser),
				{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: call.id, Name: call.name, Args: args}}}},
				{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: call.id, Name: call.name, Response: map[string]any{"result": result}}}}},
			}
			tr, _ := c.viaGenAI(t, model, contents, &genai.GenerateContentConfig{Tools: genaiWeatherTool}, stream)
			return tr
		},
		// A function response is an object: whatever the model, it reads
		// the object's JSON.
		resultText: func(result string) string { return `{"result":"` + result + `"}` },
	},
}

// TestCloudsMatrix runs every client dialect against every model served by
// a cloud: whole and streamed answers with their usage, and a tool round
// trip whose first and second turns each go whole and streamed.
func TestCloudsMatrix(t *testing.T) {
	c := startClouds(t)
	const ask = "weather in Paris?"
	for _, cl := range matrixClients {
		t.Run(cl.name, func(t *testing.T) {
			for _, m := range matrixModels {
				t.Run(m.name, func(t *testing.T) {
					before := c.seen()
					for _, stream := range []bool{false, true} {
						tr := cl.ask(c, t, m.name, cl.prompt, stream)
						if want := m.who + ": " + cl.prompt; tr.text != want || len(tr.calls) != 0 || tr.toolStop {
							t.Errorf("stream=%v: %+v, want text %q", stream, tr, want)
						}
						if tr.in != 11 || tr.out != 7 {
							t.Errorf("stream=%v: usage %d in, %d out, want 11 and 7", stream, tr.in, tr.out)
						}
					}

					want := m.who + ": the tool said " + m.resultText(plainResult)
					if cl.resultText != nil {
						want = m.who + ": the tool said " + cl.resultText(plainResult)
					}
					for _, stream := range []bool{false, true} {
						one := cl.first(c, t, m.name, ask, stream)
						if !one.toolStop || len(one.calls) != 1 || one.text != "" {
							t.Errorf("turn one (stream=%v): %+v", stream, one)
							continue
						}
						call := one.calls[0]
						if call.name != "get_weather" || call.args != `{"city":"Paris"}` || call.id == "" {
							t.Errorf("turn one's call (stream=%v): %+v", stream, call)
							continue
						}
						for _, stream2 := range []bool{false, true} {
							two := cl.second(c, t, m.name, ask, call, plainResult, stream2)
							if two.text != want || two.toolStop || len(two.calls) != 0 {
								t.Errorf("turn two (stream=%v, then %v): %+v, want text %q", stream, stream2, two, want)
							}
						}
					}
					c.onlyReached(t, m, before)
				})
			}
		})
	}
	// One live token per upstream that signs in served the whole
	// matrix: each Vertex upstream (Gemini's and Claude's) keeps its own,
	// and only Azure's v1 upstream signs in with Entra ID.
	if n := c.vertex.Mints(); n != 2 {
		t.Errorf("%d Vertex tokens minted, want 2", n)
	}
	if n := c.azure.Mints(); n != 1 {
		t.Errorf("%d Entra tokens minted, want 1", n)
	}
	c.noSecretsIn(t, c.r.logs.String())
}

// seen is what each fake has seen so far, in the order of bedrockFake,
// vertexFake and azureFake.
func (c *clouds) seen() [3][]cloudtest.Seen {
	return [3][]cloudtest.Seen{c.bedrock.Seen(), c.vertex.Seen(), c.azure.Seen()}
}

// onlyReached checks that the requests the fakes saw since before went to
// m's operations on m's cloud (or to a sign-in endpoint), and that some
// did.
func (c *clouds) onlyReached(t *testing.T, m matrixModel, before [3][]cloudtest.Seen) {
	t.Helper()
	calls := 0
	for i, seen := range c.seen() {
		for _, s := range seen[len(before[i]):] {
			path, err := url.PathUnescape(s.Path)
			switch {
			case err != nil:
				t.Errorf("path %s: %v", s.Path, err)
			case slices.Contains(signInPaths, path):
			case i == m.fake && slices.Contains(m.ops, path):
				calls++
			default:
				t.Errorf("%s reached %s", m.name, s.Path)
			}
		}
	}
	if calls == 0 {
		t.Errorf("%s reached none of %s", m.name, strings.Join(m.ops, ", "))
	}
}
