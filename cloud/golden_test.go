package cloud_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/cloud"
	"github.com/parleyhq/parley/cloud/cloudtest"
	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/messages"
)

const goldenDir = "../testdata/clouds"

// The stream of Claude on Bedrock, in its event-stream frames, decodes as
// the messages service's own stream does: thinking with its signature
// (stamped with the upstream that made it), text, usage, and the end.
func TestBedrockStreamGolden(t *testing.T) {
	dir := filepath.Join(goldenDir, "bedrock_invoke_stream")
	body, err := os.ReadFile(filepath.Join(dir, "stream.eventstream"))
	if err != nil {
		t.Fatal(err)
	}
	target := translate.Target{Upstream: "bedrock", Model: "anthropic.claude-sonnet-4-5-20250929-v1:0"}
	open := func(r io.Reader, max int) translate.Frames {
		return eventstream.NewReader(parleyv1.Dialect_DIALECT_MESSAGES, r, max)
	}
	var evs []*parleyv1.StreamEvent
	var check translate.StreamChecker
	for ev, err := range translate.DecodeFramed(parleyv1.Dialect_DIALECT_MESSAGES, bytes.NewReader(body), open, messages.Upstream{}.NewStreamDecoder(target), translate.StreamLimits{}, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if err := check.Check(ev); err != nil {
			t.Fatalf("out of order: %v", err)
		}
		evs = append(evs, ev)
	}
	golden.Messages(t, filepath.Join(dir, "stream.canonical.json"), evs)
}

// prepareCase is one request as a cloud receives it.
type prepareCase struct {
	name     string
	dialect  string
	provider config.Provider
	apiKey   string
	model    string
	op       cloud.Op
	stream   bool
}

// Each cloud's request, for each dialect it hosts, is pinned as it goes
// out: method, path, query, the headers that matter and the body.
func TestPrepareGolden(t *testing.T) {
	awsEnv(t, testCreds)
	sa := cloudtest.NewVertex(t, "my-project", "us-central1").ServiceAccountFile(t, t.TempDir())
	cases := []prepareCase{
		{"bedrock_invoke", "messages", config.Provider{Cloud: "bedrock", Region: "us-east-1"}, "", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", cloud.OpGenerate, false},
		{"bedrock_invoke_stream", "messages", config.Provider{Cloud: "bedrock", Region: "us-east-1"}, "", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", cloud.OpGenerate, true},
		{"vertex_gemini_stream", "generate_content", config.Provider{Cloud: "vertex", Project: "my-project", Location: "us-central1", CredentialsFile: sa}, "", "gemini-2.5-pro", cloud.OpGenerate, true},
		{"vertex_gemini_count", "generate_content", config.Provider{Cloud: "vertex", Project: "my-project", Location: "us-central1", CredentialsFile: sa}, "", "gemini-2.5-pro", cloud.OpCount, false},
		{"vertex_gemini_express", "generate_content", config.Provider{Cloud: "vertex", Location: "global"}, "AQ.express-key-0001", "gemini-2.5-flash", cloud.OpGenerate, false},
		{"vertex_claude", "messages", config.Provider{Cloud: "vertex", Project: "my-project", Location: "us-east5", CredentialsFile: sa}, "", "claude-sonnet-4-5@20250929", cloud.OpGenerate, false},
		{"vertex_claude_stream", "messages", config.Provider{Cloud: "vertex", Project: "my-project", Location: "us-east5", CredentialsFile: sa}, "", "claude-sonnet-4-5@20250929", cloud.OpGenerate, true},
		{"vertex_claude_count", "messages", config.Provider{Cloud: "vertex", Project: "my-project", Location: "us-east5", CredentialsFile: sa}, "", "claude-sonnet-4-5@20250929", cloud.OpCount, false},
		{"azure_deployment_chat", "chat_completions", config.Provider{Cloud: "azure", APIVersion: "2024-10-21"}, "azure-key-0001", "gpt-4o-prod", cloud.OpGenerate, false},
		{"azure_deployment_responses", "responses", config.Provider{Cloud: "azure", APIVersion: "2025-04-01-preview"}, "azure-key-0001", "gpt-4.1", cloud.OpGenerate, true},
		{"azure_v1_chat", "chat_completions", config.Provider{Cloud: "azure"}, "azure-key-0001", "gpt-4.1", cloud.OpGenerate, false},
	}
	ds := dialects.All()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := ds.Named(c.dialect)
			u := &config.Upstream{Name: "up", Dialect: c.dialect, APIKey: c.apiKey, Provider: &c.provider}
			a, base, err := cloud.New(context.Background(), u, d.Enum, cloud.Options{})
			if err != nil {
				t.Fatal(err)
			}
			req := ask(t, "client-model", "Hello", c.stream, true)
			req.Instructions = []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "Be brief."}}}}
			target := translate.Target{Upstream: "up", Model: c.model, APIKey: c.apiKey}
			var out *translate.Outgoing
			if c.op == cloud.OpCount {
				out, err = d.Upstream.(translate.CountUpstream).EncodeCountRequest(req, target)
			} else {
				out, err = d.Upstream.EncodeRequest(req, target)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Prepare(c.op, out, target); err != nil {
				t.Fatal(err)
			}
			hreq, err := http.NewRequest(http.MethodPost, "http://cloud.test", nil)
			if err != nil {
				t.Fatal(err)
			}
			hreq.Header = out.Header.Clone()
			if c.provider.Cloud != config.CloudVertex || c.apiKey != "" {
				if err := a.Authorize(context.Background(), hreq, out.Body); err != nil {
					t.Fatal(err)
				}
			}
			headers := map[string]string{}
			for k := range hreq.Header {
				switch http.CanonicalHeaderKey(k) {
				case "Authorization":
					headers[k] = redact(hreq.Header.Get(k))
				case "X-Amz-Date", "X-Amz-Security-Token", "Traceparent":
				default:
					headers[k] = hreq.Header.Get(k)
				}
			}
			var body any
			if err := json.Unmarshal(out.Body, &body); err != nil {
				t.Fatal(err)
			}
			pinned, err := json.Marshal(map[string]any{
				"base_url": base, "method": out.Method, "path": out.Path, "query": out.Query.Encode(),
				"headers": headers, "body": body,
			})
			if err != nil {
				t.Fatal(err)
			}
			golden.JSON(t, filepath.Join(goldenDir, c.name, "upstream.json"), pinned)
		})
	}
}

// redact keeps the scheme of a credential: a signature changes with the
// time.
func redact(v string) string {
	for _, scheme := range []string{"AWS4-HMAC-SHA256", "Bearer"} {
		if len(v) > len(scheme) && v[:len(scheme)] == scheme {
			return scheme + " …"
		}
	}
	return "…"
}
