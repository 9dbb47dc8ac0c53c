package messages_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/messages"
)

// sdkCases are golden cases whose request.json is what the official SDK
// sends for the given parameters: the test captures the SDK's request and
// compares it with request.json (-update rewrites it), so the file is
// exactly the SDK's wire form.
var sdkCases = map[string]func(context.Context, anthropic.Client) error{
	"sdk_full_params": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens: 1024,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{
				Text:         "x",
				CacheControl: anthropic.CacheControlEphemeralParam{TTL: anthropic.CacheControlEphemeralTTLTTL5m},
				Citations: []anthropic.TextCitationParamUnion{{OfCharLocation: &anthropic.CitationCharLocationParam{
					CitedText: "The grass is green. The sky is blue.", DocumentIndex: 0, DocumentTitle: anthropic.String("x"), EndCharIndex: 0, StartCharIndex: 0,
				}}},
			}})},
			Model:        anthropic.ModelClaudeOpus5_5,
			CacheControl: anthropic.CacheControlEphemeralParam{TTL: anthropic.CacheControlEphemeralTTLTTL5m},
			Container: anthropic.MessageCreateParamsContainerUnion{OfContainers: &anthropic.ContainerParams{
				ID:     anthropic.String("id"),
				Skills: []anthropic.SkillParams{{SkillID: "pdf", Type: anthropic.SkillParamsTypeAnthropic, Version: anthropic.String("latest")}},
			}},
			InferenceGeo: anthropic.String("inference_geo"),
			Metadata:     anthropic.MetadataParam{UserID: anthropic.String("13803d75-b4b5-4c3e-b2a2-6f21399b021b")},
			OutputConfig: anthropic.OutputConfigParam{
				Effort: anthropic.OutputConfigEffortLow,
				Format: anthropic.JSONOutputFormatParam{Schema: map[string]any{"foo": "bar"}},
			},
			ServiceTier:   anthropic.MessageNewParamsServiceTierAuto,
			StopSequences: []string{"string"},
			System: []anthropic.TextBlockParam{{
				Text:         "Today's date is 2024-06-01.",
				CacheControl: anthropic.CacheControlEphemeralParam{TTL: anthropic.CacheControlEphemeralTTLTTL5m},
			}},
			Thinking: anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{
				Display: anthropic.ThinkingConfigAdaptiveDisplaySummarized,
			}},
			ToolChoice: anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{DisableParallelToolUse: anthropic.Bool(true)}},
			Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
				InputSchema: anthropic.ToolInputSchemaParam{
					Properties: map[string]any{"location": "bar", "unit": "bar"},
					Required:   []string{"location"},
				},
				Name:                "name",
				AllowedCallers:      []string{"direct"},
				CacheControl:        anthropic.CacheControlEphemeralParam{TTL: anthropic.CacheControlEphemeralTTLTTL5m},
				DeferLoading:        anthropic.Bool(true),
				Description:         anthropic.String("Get the current weather in a given location"),
				EagerInputStreaming: anthropic.Bool(true),
				InputExamples:       []map[string]any{{"foo": "bar"}},
				Strict:              anthropic.Bool(true),
				Type:                anthropic.ToolTypeCustom,
			}}},
		})
		return err
	},
	"sdk_images": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens: 1024,
			Model:     anthropic.ModelClaudeOpus5_5,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(
				anthropic.NewImageBlockBase64("image/png", tinyPNG),
				anthropic.ContentBlockParamUnion{OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
					OfURL: &anthropic.URLImageSourceParam{URL: "https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg"},
				}}},
				anthropic.NewTextBlock("What is the difference between these two images?"),
			)},
		})
		return err
	},
	"sdk_documents": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens: 1024,
			Model:     anthropic.ModelClaudeOpus5_5,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(
				anthropic.ContentBlockParamUnion{OfDocument: &anthropic.DocumentBlockParam{
					Source:    anthropic.DocumentBlockParamSourceUnion{OfBase64: &anthropic.Base64PDFSourceParam{Data: tinyPDF}},
					Title:     anthropic.String("Quarterly report"),
					Context:   anthropic.String("Prepared for the board"),
					Citations: anthropic.CitationsConfigParam{Enabled: anthropic.Bool(true)},
				}},
				anthropic.ContentBlockParamUnion{OfDocument: &anthropic.DocumentBlockParam{
					Source: anthropic.DocumentBlockParamSourceUnion{OfText: &anthropic.PlainTextSourceParam{Data: "The grass is green. The sky is blue."}},
				}},
				anthropic.ContentBlockParamUnion{OfDocument: &anthropic.DocumentBlockParam{
					Source: anthropic.DocumentBlockParamSourceUnion{OfURL: &anthropic.URLPDFSourceParam{URL: "https://assets.anthropic.com/m/1cd9d098ac3e6467/original/Claude-3-Model-Card-October-Addendum.pdf"}},
				}},
				anthropic.NewTextBlock("Summarise the three documents."),
			)},
		})
		return err
	},
	"sdk_thinking_history": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens: 16000,
			Model:     anthropic.ModelClaudeOpus5_5,
			Thinking:  anthropic.ThinkingConfigParamOfEnabled(10000),
			Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
				Name:        "get_weather",
				Description: anthropic.String("Get the current weather in a given location"),
				InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"location": map[string]any{"type": "string"}}, Required: []string{"location"}},
			}}},
			Messages: []anthropic.MessageParam{
				anthropic.NewUserMessage(anthropic.NewTextBlock("What's the weather in Paris?")),
				anthropic.NewAssistantMessage(
					anthropic.NewThinkingBlock("EqQBCkgIARABGAIiQL2m3zNfCdxyfA0BRmKSI5Yp2oZRMjmhnhbWo4nOwA0AtcnZsdADPx7A8sSA9Gbc8W5HaS6sR+IbchIP54sAQgUSDDZ0SZfz5cY5Br76shoMzCVpC2gfWU0NbzyMIjB9CZK8I6Xb7NiGqrAMNsGZFdc7lkkvAzu1k2H1oFYOZAtQ5QR1rlxpg3kA3b5NIqIqEK9GDhI0cUvc7BnG8UFq3tcYAg==", "The user wants the weather in Paris, so I should call the weather tool."),
					anthropic.NewRedactedThinkingBlock("EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabw"),
					anthropic.NewToolUseBlock("toolu_01A09q90qw90lq917835lq9", map[string]any{"location": "Paris, France"}, "get_weather"),
				),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_01A09q90qw90lq917835lq9", "15 degrees, light rain", false)),
			},
		})
		return err
	},
	"sdk_tool_choice_tool": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens:  1024,
			Model:      anthropic.ModelClaudeOpus5_5,
			ToolChoice: anthropic.ToolChoiceParamOfTool("record_summary"),
			Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
				Name:        "record_summary",
				Description: anthropic.String("Record summary of an image using well-structured JSON."),
				InputSchema: anthropic.ToolInputSchemaParam{
					Properties: map[string]any{"key_colors": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"r": map[string]any{"type": "number"}}}}, "description": map[string]any{"type": "string"}},
					Required:   []string{"key_colors", "description"},
				},
			}}},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Describe this image."))},
		})
		return err
	},
	"sdk_tool_choice_any_none": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens:  1024,
			Model:      anthropic.ModelClaudeOpus5_5,
			ToolChoice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: anthropic.Bool(false)}},
			Tools: []anthropic.ToolUnionParam{
				{OfTool: &anthropic.ToolParam{Name: "a", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}}}},
				{OfTool: &anthropic.ToolParam{Name: "b", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}}}},
			},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Use a tool."))},
		})
		return err
	},
	"sdk_system_string_sampling": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens:     256,
			Model:         anthropic.ModelClaudeOpus5_5,
			System:        []anthropic.TextBlockParam{{Text: "You are a terse assistant."}},
			StopSequences: []string{"\n\nHuman:", "END"},
			Metadata:      anthropic.MetadataParam{UserID: anthropic.String("user-7f3a")},
			Messages: []anthropic.MessageParam{
				anthropic.NewUserMessage(anthropic.NewTextBlock("Name three colours.")),
				anthropic.NewAssistantMessage(anthropic.NewTextBlock("Red,")),
			},
		},
			// The spec's sampling parameters: the SDK has no typed field
			// for them any more, so they go in as raw members.
			option.WithJSONSet("temperature", 0.2), option.WithJSONSet("top_k", 40), option.WithJSONSet("top_p", 0.9))
		return err
	},
	"sdk_tool_result_blocks": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens: 1024,
			Model:     anthropic.ModelClaudeOpus5_5,
			Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
				Name: "screenshot", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}},
				CacheControl: anthropic.CacheControlEphemeralParam{TTL: anthropic.CacheControlEphemeralTTLTTL1h},
			}}},
			Messages: []anthropic.MessageParam{
				anthropic.NewUserMessage(anthropic.NewTextBlock("Take a screenshot.")),
				anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_01D7FLrfh4GYq7yT1ULFeyMV", map[string]any{}, "screenshot")),
				anthropic.NewUserMessage(
					anthropic.ContentBlockParamUnion{OfToolResult: &anthropic.ToolResultBlockParam{
						ToolUseID: "toolu_01D7FLrfh4GYq7yT1ULFeyMV",
						Content: []anthropic.ToolResultBlockParamContentUnion{
							{OfText: &anthropic.TextBlockParam{Text: "Here is the screen:"}},
							{OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{MediaType: anthropic.Base64ImageSourceMediaTypeImagePNG, Data: tinyPNG}}}},
						},
						CacheControl: anthropic.CacheControlEphemeralParam{TTL: anthropic.CacheControlEphemeralTTLTTL1h},
					}},
					anthropic.NewTextBlock("What do you see?"),
				),
			},
		})
		return err
	},
	"sdk_system_turn_mid_conversation": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			MaxTokens: 1024,
			Model:     anthropic.ModelClaudeOpus5_5,
			System:    []anthropic.TextBlockParam{{Text: "You are a helpful assistant."}},
			Messages: []anthropic.MessageParam{
				anthropic.NewUserMessage(anthropic.NewTextBlock("Hello.")),
				anthropic.NewAssistantMessage(anthropic.NewTextBlock("Hello! How can I help?")),
				{OfSystem: &anthropic.SystemMessageParam{Content: []anthropic.TextBlockParam{{Text: "From now on, answer in French."}}}},
				anthropic.NewUserMessage(anthropic.NewTextBlock("What is the capital of Italy?")),
			},
		})
		return err
	},
	"sdk_builtin_tools": func(ctx context.Context, c anthropic.Client) error {
		_, err := c.Beta.Messages.New(ctx, anthropic.BetaMessageNewParams{
			MaxTokens: 1024,
			Model:     anthropic.ModelClaudeOpus5_5,
			Betas:     []anthropic.AnthropicBeta{anthropic.AnthropicBetaComputerUse2025_01_24},
			Tools: []anthropic.BetaToolUnionParam{
				{OfComputerUseTool20250124: &anthropic.BetaToolComputerUse20250124Param{DisplayWidthPx: 1024, DisplayHeightPx: 768, DisplayNumber: anthropic.Int(1)}},
				{OfBashTool20250124: &anthropic.BetaToolBash20250124Param{}},
				{OfTextEditor20250728: &anthropic.BetaToolTextEditor20250728Param{MaxCharacters: anthropic.Int(10000)}},
				{OfWebSearchTool20250305: &anthropic.BetaWebSearchTool20250305Param{
					MaxUses:        anthropic.Int(3),
					AllowedDomains: []string{"example.com"},
					UserLocation:   anthropic.BetaUserLocationParam{City: anthropic.String("San Francisco"), Region: anthropic.String("California"), Country: anthropic.String("US"), Timezone: anthropic.String("America/Los_Angeles")},
				}},
			},
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Save a picture of a cat to my desktop."))},
		})
		return err
	},
}

const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const tinyPDF = "JVBERi0xLjQKMSAwIG9iago8PC9UeXBlL0NhdGFsb2cvUGFnZXMgMiAwIFI+PgplbmRvYmoKMiAwIG9iago8PC9UeXBlL1BhZ2VzL0tpZHNbXS9Db3VudCAwPj4KZW5kb2JqCnRyYWlsZXIKPDwvUm9vdCAxIDAgUj4+CiUlRU9GCg=="

// captureSDK runs send against a server that records the request the SDK
// made and answers with a minimal reply.
func captureSDK(t *testing.T, send func(context.Context, anthropic.Client) error) ([]byte, http.Header) {
	t.Helper()
	var body []byte
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		header = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer srv.Close()
	c := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	if err := send(t.Context(), c); err != nil {
		t.Fatalf("SDK call: %v", err)
	}
	return body, header
}

// sdkRequest pins an SDK-built case's request.json and request headers.
func sdkRequest(t *testing.T, c golden.Case) {
	send, ok := sdkCases[c.Name]
	if !ok {
		return
	}
	body, header := captureSDK(t, send)
	golden.JSON(t, c.Path("request.json"), body)
	if got := (messages.Client{}).APIKey(&translate.Incoming{Header: header}); got != "sk-test" {
		t.Errorf("the key the SDK sent reads as %q (headers %v)", got, header)
	}
	h := map[string][]string{}
	for _, k := range []string{"Anthropic-Version", "Anthropic-Beta"} {
		if v := header.Values(k); len(v) > 0 {
			h[k] = v
		}
	}
	b, _ := json.Marshal(h)
	golden.JSON(t, c.Path("request.headers.json"), b)
}

func TestEverySDKCaseHasAFolder(t *testing.T) {
	have := map[string]bool{}
	for _, c := range golden.Cases(t, dialecttest.Messages.Cases) {
		have[c.Name] = true
	}
	for name := range sdkCases {
		if !have[name] {
			t.Errorf("SDK case %s has no folder with a case.json under %s", name, dialecttest.Messages.Cases)
		}
	}
}
