package converse_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/golden"
)

// The official AWS SDK (aws-sdk-go-v2 service/bedrockruntime) is the
// ground truth of the wire: it must read every golden reply and stream
// as Parley's decoder does, read every golden error as the exception the
// decoder names, and, for a request of the same content, send what
// Parley's encoder sends.

// fakeService is an httptest server in the service's place: it answers
// every request with one reply and keeps what it was sent.
type fakeService struct {
	*httptest.Server
	mu   sync.Mutex
	path string
	body []byte
}

func newFakeService(t *testing.T, status int, header http.Header, body []byte) *fakeService {
	t.Helper()
	f := &fakeService{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.path, f.body = r.URL.EscapedPath(), b
		f.mu.Unlock()
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeService) sent() (string, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.path, f.body
}

func sdkClient(f *fakeService) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(f.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""),
		RetryMaxAttempts: 1,
		HTTPClient:       &http.Client{Transport: readBodies{f.Client().Transport}},
	})
}

// readBodies hands the transport each request body with Read and Close
// alone. The SDK closes its request body as soon as the reply's head has
// come, and the body's WriteTo answers io.EOF once closed. After sending
// a body the transport looks for bytes beyond its Content-Length, with
// WriteTo when the body has it; when the reply came first, it took that
// EOF for a failed write and closed the connection the reply was being
// read from (a stream cut short in about one run in fifteen). Read on a
// closed body answers a plain end.
type readBodies struct{ http.RoundTripper }

func (t readBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return t.RoundTripper.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Body = struct{ io.ReadCloser }{r.Body}
	return t.RoundTripper.RoundTrip(r)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// view is what a reply says, as both sides can read it.
type view struct {
	Blocks     []block
	StopReason string
	// Input (without cache), output, cache read, cache write.
	Usage [4]int64
}

type block struct {
	Kind      string // text, toolUse, reasoning, redacted
	Text      string
	ID, Name  string
	Input     any
	Signature string
	Redacted  []byte
}

// stopWords is the service's word for each canonical finish reason this
// dialect yields, SAFETY standing for both filter words.
var stopWords = map[parleyv1.FinishReason]string{
	parleyv1.FinishReason_FINISH_REASON_STOP:                    "end_turn",
	parleyv1.FinishReason_FINISH_REASON_TOOL_USE:                "tool_use",
	parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS:              "max_tokens",
	parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE:           "stop_sequence",
	parleyv1.FinishReason_FINISH_REASON_SAFETY:                  "guardrail_intervened|content_filtered",
	parleyv1.FinishReason_FINISH_REASON_MALFORMED_TOOL_CALL:     "malformed_tool_use",
	parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED: "model_context_window_exceeded",
}

func canonicalView(t testing.TB, resp *parleyv1.Response) view {
	t.Helper()
	var v view
	c := resp.GetCandidates()[0]
	for _, p := range c.GetParts() {
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Text:
			v.Blocks = append(v.Blocks, block{Kind: "text", Text: k.Text.GetText()})
		case *parleyv1.Part_ToolCall:
			var in any
			if err := json.Unmarshal([]byte(k.ToolCall.GetArguments()), &in); err != nil {
				t.Fatalf("arguments: %v", err)
			}
			v.Blocks = append(v.Blocks, block{Kind: "toolUse", ID: k.ToolCall.GetId(), Name: k.ToolCall.GetName(), Input: in})
		case *parleyv1.Part_Reasoning:
			if k.Reasoning.GetRedacted() {
				raw, err := base64.StdEncoding.DecodeString(k.Reasoning.GetEncryptedContent().GetValue())
				if err != nil {
					t.Fatal(err)
				}
				v.Blocks = append(v.Blocks, block{Kind: "redacted", Redacted: raw})
				continue
			}
			v.Blocks = append(v.Blocks, block{Kind: "reasoning", Text: k.Reasoning.GetText(), Signature: p.GetSignature().GetValue()})
		default:
			t.Fatalf("unexpected part %T", k)
		}
	}
	v.StopReason = stopWords[c.GetFinishReason()]
	if v.StopReason == "" {
		v.StopReason = c.GetFinishMessage()
	}
	u := resp.GetUsage()
	v.Usage = [4]int64{u.GetInputTokens() - u.GetCacheReadTokens() - u.GetCacheCreationTokens(), u.GetOutputTokens(), u.GetCacheReadTokens(), u.GetCacheCreationTokens()}
	return v
}

func sdkStop(r types.StopReason) string {
	for _, w := range stopWords {
		if strings.Contains("|"+w+"|", "|"+string(r)+"|") {
			return w
		}
	}
	return string(r)
}

func sdkUsage(u *types.TokenUsage) [4]int64 {
	if u == nil {
		return [4]int64{}
	}
	i := func(p *int32) int64 {
		if p == nil {
			return 0
		}
		return int64(*p)
	}
	return [4]int64{i(u.InputTokens), i(u.OutputTokens), i(u.CacheReadInputTokens), i(u.CacheWriteInputTokens)}
}

func sdkInput(t testing.TB, d document.Interface) any {
	t.Helper()
	var in any
	if d == nil {
		return map[string]any{}
	}
	if err := d.UnmarshalSmithyDocument(&in); err != nil {
		t.Fatalf("tool input: %v", err)
	}
	// Compare numbers as JSON does.
	b, _ := json.Marshal(in)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func sdkView(t testing.TB, out *bedrockruntime.ConverseOutput) view {
	t.Helper()
	var v view
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		t.Fatalf("output %T", out.Output)
	}
	for _, b := range msg.Value.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			v.Blocks = append(v.Blocks, block{Kind: "text", Text: b.Value})
		case *types.ContentBlockMemberToolUse:
			v.Blocks = append(v.Blocks, block{Kind: "toolUse", ID: aws.ToString(b.Value.ToolUseId), Name: aws.ToString(b.Value.Name), Input: sdkInput(t, b.Value.Input)})
		case *types.ContentBlockMemberReasoningContent:
			switch r := b.Value.(type) {
			case *types.ReasoningContentBlockMemberReasoningText:
				v.Blocks = append(v.Blocks, block{Kind: "reasoning", Text: aws.ToString(r.Value.Text), Signature: aws.ToString(r.Value.Signature)})
			case *types.ReasoningContentBlockMemberRedactedContent:
				v.Blocks = append(v.Blocks, block{Kind: "redacted", Redacted: r.Value})
			}
		default:
			t.Fatalf("the SDK read a block %T", b)
		}
	}
	v.StopReason = sdkStop(out.StopReason)
	v.Usage = sdkUsage(out.Usage)
	return v
}

// TestSDKReadsReplies: the SDK reads every golden reply as the decoder does.
func TestSDKReadsReplies(t *testing.T) {
	n := 0
	for _, c := range golden.Cases(t, casesDir) {
		if !c.Exists("response.json") {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			body := c.Read(t, "response.json")
			resp, err := converse.Upstream{}.DecodeResponse(target, body)
			if err != nil {
				t.Fatal(err)
			}
			f := newFakeService(t, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, body)
			out, err := sdkClient(f).Converse(ctx(t), &bedrockruntime.ConverseInput{
				ModelId:  aws.String(caseModel),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
			})
			if err != nil {
				t.Fatalf("the SDK: %v", err)
			}
			if diff := cmp.Diff(sdkView(t, out), canonicalView(t, resp)); diff != "" {
				t.Errorf("the decoder reads the reply otherwise than the SDK (-sdk +decoder):\n%s", diff)
			}
		})
	}
	if n == 0 {
		t.Fatal("no reply cases")
	}
}

// TestSDKReadsStreams: the SDK reads every golden stream, framed as the
// service frames it, as the decoder does: what it accumulates is what the
// canonical stream accumulates to; a stream that ends in an exception
// fails in the SDK with that exception.
func TestSDKReadsStreams(t *testing.T) {
	n := 0
	for _, c := range golden.Cases(t, casesDir) {
		if !c.Exists("stream.sse") {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			framed := frame(t, c.Read(t, "stream.sse"))
			events, resp := decodeFramed(t, framed)
			f := newFakeService(t, http.StatusOK, http.Header{"Content-Type": {eventstream.ContentType}}, framed)
			out, err := sdkClient(f).ConverseStream(ctx(t), &bedrockruntime.ConverseStreamInput{
				ModelId:  aws.String(caseModel),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
			})
			if err != nil {
				t.Fatalf("the SDK: %v", err)
			}
			stream := out.GetStream()
			defer func() { _ = stream.Close() }()
			got := sdkStreamView(t, stream.Events())
			sdkErr := stream.Err()
			if e := events[len(events)-1].GetError(); e != nil {
				var api smithy.APIError
				if !errors.As(sdkErr, &api) {
					t.Fatalf("the SDK read no exception, but the decoder ended with %v (SDK: %v)", e, sdkErr)
				}
				if !strings.EqualFold(api.ErrorCode(), e.GetReason()) || api.ErrorMessage() != e.GetMessage() {
					t.Errorf("the SDK read %s %q; the decoder %s %q", api.ErrorCode(), api.ErrorMessage(), e.GetReason(), e.GetMessage())
				}
				return
			}
			if sdkErr != nil {
				t.Fatalf("the SDK: %v", sdkErr)
			}
			if diff := cmp.Diff(got, canonicalView(t, resp)); diff != "" {
				t.Errorf("the decoder reads the stream otherwise than the SDK (-sdk +decoder):\n%s", diff)
			}
		})
	}
	if n == 0 {
		t.Fatal("no stream cases")
	}
}

func sdkStreamView(t testing.TB, events <-chan types.ConverseStreamOutput) view {
	t.Helper()
	var (
		v    view
		args = map[int]*strings.Builder{}
	)
	at := func(i *int32) *block {
		for int(*i) >= len(v.Blocks) {
			v.Blocks = append(v.Blocks, block{})
		}
		return &v.Blocks[*i]
	}
	for ev := range events {
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberMessageStart:
		case *types.ConverseStreamOutputMemberContentBlockStart:
			b := at(e.Value.ContentBlockIndex)
			if tu, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				b.Kind, b.ID, b.Name = "toolUse", aws.ToString(tu.Value.ToolUseId), aws.ToString(tu.Value.Name)
				args[int(*e.Value.ContentBlockIndex)] = &strings.Builder{}
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			b := at(e.Value.ContentBlockIndex)
			switch d := e.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				b.Kind = "text"
				b.Text += d.Value
			case *types.ContentBlockDeltaMemberToolUse:
				args[int(*e.Value.ContentBlockIndex)].WriteString(aws.ToString(d.Value.Input))
			case *types.ContentBlockDeltaMemberReasoningContent:
				switch r := d.Value.(type) {
				case *types.ReasoningContentBlockDeltaMemberText:
					b.Kind = "reasoning"
					b.Text += r.Value
				case *types.ReasoningContentBlockDeltaMemberSignature:
					b.Kind = "reasoning"
					b.Signature = r.Value
				case *types.ReasoningContentBlockDeltaMemberRedactedContent:
					b.Kind = "redacted"
					b.Redacted = append(b.Redacted, r.Value...)
				}
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
		case *types.ConverseStreamOutputMemberMessageStop:
			v.StopReason = sdkStop(e.Value.StopReason)
		case *types.ConverseStreamOutputMemberMetadata:
			v.Usage = sdkUsage(e.Value.Usage)
		default:
			t.Fatalf("the SDK read an event %T", ev)
		}
	}
	for i, a := range args {
		s := a.String()
		if s == "" {
			s = "{}"
		}
		var in any
		if err := json.Unmarshal([]byte(s), &in); err != nil {
			t.Fatalf("tool input of block %d: %v", i, err)
		}
		v.Blocks[i].Input = in
	}
	return v
}

// TestSDKReadsErrors: the SDK reads every golden error reply as the
// exception the decoder names, with its message.
func TestSDKReadsErrors(t *testing.T) {
	for _, c := range golden.Cases(t, casesDir) {
		if !c.Exists("error.json") {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			meta := c.Meta(t)
			h := http.Header{"Content-Type": {"application/json"}}
			var m map[string][]string
			if err := json.Unmarshal(c.Read(t, "error.headers.json"), &m); err != nil {
				t.Fatal(err)
			}
			for k, vs := range m {
				h[http.CanonicalHeaderKey(k)] = vs
			}
			body := c.Read(t, "error.json")
			e := converse.Upstream{}.DecodeError(meta.Status, h, body)
			f := newFakeService(t, meta.Status, h, body)
			_, err := sdkClient(f).Converse(ctx(t), &bedrockruntime.ConverseInput{
				ModelId:  aws.String(caseModel),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
			})
			var api smithy.APIError
			if !errors.As(err, &api) {
				t.Fatalf("the SDK read no API error: %v", err)
			}
			if api.ErrorCode() != e.GetReason() || api.ErrorMessage() != e.GetMessage() {
				t.Errorf("the SDK read %s %q; the decoder %s %q", api.ErrorCode(), api.ErrorMessage(), e.GetReason(), e.GetMessage())
			}
		})
	}
}

// The request of TestSDKSendsTheSameRequest: every kind of block and
// setting this dialect carries, in canonical form.
var (
	tinyPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
	tinyPDF    = []byte("%PDF-1.4\n%%EOF\n")
	ours       = &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_CONVERSE, Upstream: caseUpstream, Model: caseModel}
	schema     = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
)

func kitchenSink() *parleyv1.Request {
	cache := &parleyv1.CacheControl{}
	hour := &parleyv1.CacheControl{Ttl: durationpb.New(time.Hour)}
	text := func(s string) *parleyv1.Part { return translate.TextPart(s) }
	return &parleyv1.Request{
		Model:        "sonnet",
		Instructions: []*parleyv1.Part{{Kind: text("Be brief.").Kind, CacheControl: cache}},
		Messages: []*parleyv1.Message{
			{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{
				text("Hi"),
				{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, MimeType: "image/png", Source: &parleyv1.Media_Data{Data: tinyPNG}}}},
				{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_DOCUMENT, MimeType: "application/pdf", Title: "Report", Source: &parleyv1.Media_Data{Data: tinyPDF}}}},
			}},
			{Role: parleyv1.Role_ROLE_ASSISTANT, Parts: []*parleyv1.Part{
				{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "think"}}, Signature: &parleyv1.Opaque{Value: "c2lnbmF0dXJl", Origin: ours}},
				text("Hello"),
				translate.CallPart("tooluse_1", "get_weather", `{"city":"Paris"}`),
			}},
			{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{
				{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: "tooluse_1", IsError: true, Content: []*parleyv1.Part{text("no such city")}}}},
				text("thanks"),
			}},
			{Role: parleyv1.Role_ROLE_ASSISTANT, Parts: []*parleyv1.Part{
				{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Redacted: true, EncryptedContent: &parleyv1.Opaque{Value: base64.StdEncoding.EncodeToString([]byte("secret")), Origin: ours}}}},
				text("ok"),
			}},
			{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{{Kind: text("bye").Kind, CacheControl: hour}}},
		},
		Tools:          []*parleyv1.Tool{{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: "get_weather", Description: "Weather of a city", Parameters: schema, Strict: new(true)}}, CacheControl: cache}},
		ToolChoice:     &parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, Name: "get_weather"},
		Generation:     &parleyv1.GenerationConfig{MaxOutputTokens: new(int32(2048)), Temperature: new(0.25), TopP: new(0.5), TopK: new(int32(10)), StopSequences: []string{"END"}},
		ResponseFormat: &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Name: "answer", Schema: `{"type":"object"}`},
		ServiceTier:    parleyv1.ServiceTier_SERVICE_TIER_PRIORITY,
		Metadata:       map[string]string{"tenant": "acme"},
	}
}

func doc(t testing.TB, s string) document.Interface {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return document.NewLazyDocument(v)
}

func sdkKitchenSink(t testing.TB) (system []types.SystemContentBlock, messages []types.Message, tools *types.ToolConfiguration) {
	def := types.CachePointBlock{Type: types.CachePointTypeDefault}
	user, assistant := types.ConversationRoleUser, types.ConversationRoleAssistant
	system = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}, &types.SystemContentBlockMemberCachePoint{Value: def}}
	messages = []types.Message{
		{Role: user, Content: []types.ContentBlock{
			&types.ContentBlockMemberText{Value: "Hi"},
			&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: tinyPNG}}},
			&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatPdf, Name: aws.String("Report"), Source: &types.DocumentSourceMemberBytes{Value: tinyPDF}}},
		}},
		{Role: assistant, Content: []types.ContentBlock{
			&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: types.ReasoningTextBlock{Text: aws.String("think"), Signature: aws.String("c2lnbmF0dXJl")}}},
			&types.ContentBlockMemberText{Value: "Hello"},
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("tooluse_1"), Name: aws.String("get_weather"), Input: doc(t, `{"city":"Paris"}`)}},
		}},
		{Role: user, Content: []types.ContentBlock{
			&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("tooluse_1"), Status: types.ToolResultStatusError,
				Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "no such city"}}}},
			&types.ContentBlockMemberText{Value: "thanks"},
		}},
		{Role: assistant, Content: []types.ContentBlock{
			&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: []byte("secret")}},
			&types.ContentBlockMemberText{Value: "ok"},
		}},
		{Role: user, Content: []types.ContentBlock{
			&types.ContentBlockMemberText{Value: "bye"},
			&types.ContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault, Ttl: types.CacheTTLOneHour}},
		}},
	}
	tools = &types.ToolConfiguration{
		Tools: []types.Tool{
			&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("get_weather"), Description: aws.String("Weather of a city"),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: doc(t, schema)}, Strict: aws.Bool(true)}},
			&types.ToolMemberCachePoint{Value: def},
		},
		ToolChoice: &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("get_weather")}},
	}
	return system, messages, tools
}

// TestSDKSendsTheSameRequest: for the same content, the SDK's Converse,
// ConverseStream and CountTokens calls send what the encoder builds, to
// the same path: the member names and shapes are the SDK's serializer's.
func TestSDKSendsTheSameRequest(t *testing.T) {
	req := kitchenSink()
	system, messages, tools := sdkKitchenSink(t)
	in := &bedrockruntime.ConverseInput{
		ModelId:                      aws.String(caseModel),
		System:                       system,
		Messages:                     messages,
		ToolConfig:                   tools,
		InferenceConfig:              &types.InferenceConfiguration{MaxTokens: aws.Int32(2048), Temperature: aws.Float32(0.25), TopP: aws.Float32(0.5), StopSequences: []string{"END"}},
		AdditionalModelRequestFields: doc(t, `{"top_k":10}`),
		OutputConfig: &types.OutputConfig{TextFormat: &types.OutputFormat{Type: types.OutputFormatTypeJsonSchema,
			Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{Schema: aws.String(`{"type":"object"}`), Name: aws.String("answer")}}}},
		ServiceTier:     &types.ServiceTier{Type: types.ServiceTierTypePriority},
		RequestMetadata: map[string]string{"tenant": "acme"},
	}

	check := func(t *testing.T, f *fakeService, out *translate.Outgoing) {
		t.Helper()
		path, body := f.sent()
		if path != out.Path {
			t.Errorf("the SDK sent to %s, the encoder to %s", path, out.Path)
		}
		if diff, err := golden.DiffJSON(body, out.Body); err != nil || diff != "" {
			t.Errorf("the encoder's body is not the SDK's (-sdk +encoder):\n%s%v", diff, err)
		}
		if len(out.Dropped) != 0 {
			t.Errorf("dropped %v", out.Dropped)
		}
	}

	t.Run("converse", func(t *testing.T) {
		out, err := converse.Upstream{}.EncodeRequest(req, target)
		if err != nil {
			t.Fatal(err)
		}
		f := newFakeService(t, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`))
		if _, err := sdkClient(f).Converse(ctx(t), in); err != nil {
			t.Fatal(err)
		}
		check(t, f, out)
	})
	t.Run("converse-stream", func(t *testing.T) {
		stream := kitchenSink()
		stream.Stream = true
		out, err := converse.Upstream{}.EncodeRequest(stream, target)
		if err != nil {
			t.Fatal(err)
		}
		var framed bytes.Buffer
		_ = eventstream.Encode(&framed, "messageStart", []byte(`{"role":"assistant"}`))
		_ = eventstream.Encode(&framed, "messageStop", []byte(`{"stopReason":"end_turn"}`))
		f := newFakeService(t, http.StatusOK, http.Header{"Content-Type": {eventstream.ContentType}}, framed.Bytes())
		sin := &bedrockruntime.ConverseStreamInput{ModelId: in.ModelId, System: in.System, Messages: in.Messages, ToolConfig: in.ToolConfig,
			InferenceConfig: in.InferenceConfig, AdditionalModelRequestFields: in.AdditionalModelRequestFields, OutputConfig: in.OutputConfig,
			ServiceTier: in.ServiceTier, RequestMetadata: in.RequestMetadata}
		o, err := sdkClient(f).ConverseStream(ctx(t), sin)
		if err != nil {
			t.Fatal(err)
		}
		for range o.GetStream().Events() {
		}
		_ = o.GetStream().Close()
		check(t, f, out)
	})
	t.Run("count-tokens", func(t *testing.T) {
		out, err := converse.Upstream{}.EncodeCountRequest(req, target)
		if err != nil {
			t.Fatal(err)
		}
		f := newFakeService(t, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, []byte(`{"inputTokens":321}`))
		got, err := sdkClient(f).CountTokens(ctx(t), &bedrockruntime.CountTokensInput{
			ModelId: in.ModelId,
			Input: &types.CountTokensInputMemberConverse{Value: types.ConverseTokensRequest{
				Messages: messages, System: system, ToolConfig: tools, AdditionalModelRequestFields: in.AdditionalModelRequestFields,
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		check(t, f, out)
		n, err := converse.Upstream{}.DecodeCount([]byte(`{"inputTokens":321}`))
		if err != nil {
			t.Fatal(err)
		}
		if int64(aws.ToInt32(got.InputTokens)) != n.GetInputTokens() {
			t.Errorf("the SDK counts %d, the decoder %d", aws.ToInt32(got.InputTokens), n.GetInputTokens())
		}
	})
}
