package cloud_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/parleyhq/parley/cloud/cloudtest"
	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	_ "github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/messages"
)

var testCreds = aws.Credentials{AccessKeyID: "AKIDPARLEYTEST0001", SecretAccessKey: "parley/test/secret/key/0001", SessionToken: "parley-session-token-0001"}

// awsEnv isolates the AWS credential chain to the test's credentials.
func awsEnv(t *testing.T, c aws.Credentials) {
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_ACCESS_KEY_ID", c.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", c.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", c.SessionToken)
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// build parses a configuration and builds its dispatcher.
func build(t *testing.T, yaml string) *dispatch.Dispatcher {
	t.Helper()
	c, err := config.Parse("test.yaml", []byte(yaml), os.LookupEnv, dialects.All().Names())
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.FromConfig(c, dialects.All(), dispatch.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ask is a messages-dialect request for model, decoded as the server
// decodes one.
func ask(t *testing.T, model, text string, stream bool, tools bool) *parleyv1.Request {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":64,"messages":[{"role":"user","content":"` + text + `"}]`
	if tools {
		body += `,"tools":[{"name":"get_weather","description":"Weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	}
	if stream {
		body += `,"stream":true`
	}
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Header: http.Header{}, Body: []byte(body + "}")})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func replyText(resp *parleyv1.Response) string {
	var b strings.Builder
	for _, p := range resp.GetCandidates()[0].GetParts() {
		b.WriteString(p.GetText().GetText())
	}
	return b.String()
}

func streamText(t *testing.T, d *dispatch.Dispatcher, req *parleyv1.Request) string {
	t.Helper()
	var b strings.Builder
	for ev, err := range d.Stream(context.Background(), req, &dispatch.Call{}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		b.WriteString(ev.GetPartStart().GetPart().GetText().GetText())
		b.WriteString(ev.GetPartDelta().GetText())
	}
	return b.String()
}

func TestBedrockInvokeModelSigned(t *testing.T) {
	awsEnv(t, testCreds)
	fake := cloudtest.NewBedrock(t, "eu-west-3", testCreds)
	d := build(t, `
upstreams:
  - name: bedrock
    dialect: messages
    base_url: `+fake.URL+`
    provider: {cloud: bedrock, region: eu-west-3}
models:
  - name: claude
    upstream: bedrock
    upstream_model: eu.anthropic.claude-sonnet-4-5-20250929-v1:0
`)
	resp, err := d.Generate(context.Background(), ask(t, "claude", "hello", false, false), &dispatch.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := replyText(resp), "bedrock eu.anthropic.claude-sonnet-4-5-20250929-v1:0: hello"; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
	if got := streamText(t, d, ask(t, "claude", "streamed hello", true, false)); got != "bedrock eu.anthropic.claude-sonnet-4-5-20250929-v1:0: streamed hello" {
		t.Errorf("stream %q", got)
	}
	seen := fake.Seen()
	if len(seen) != 2 {
		t.Fatalf("%d requests, want 2", len(seen))
	}
	if seen[0].Path != "/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke" || seen[1].Path != "/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream" {
		t.Errorf("paths %s, %s", seen[0].Path, seen[1].Path)
	}
	for _, s := range seen {
		if s.Header.Get("X-Amz-Security-Token") != testCreds.SessionToken {
			t.Errorf("the session token was not sent")
		}
		if s.Header.Get("X-Api-Key") != "" || s.Header.Get("Anthropic-Version") != "" {
			t.Errorf("dialect headers left on a Bedrock request: %v", s.Header)
		}
	}
}

func TestBedrockRefusesAWrongSignature(t *testing.T) {
	wrong := testCreds
	wrong.SecretAccessKey = "not/the/right/secret"
	awsEnv(t, wrong)
	fake := cloudtest.NewBedrock(t, "us-east-1", testCreds)
	d := build(t, `
upstreams:
  - name: bedrock
    dialect: messages
    base_url: `+fake.URL+`
    max_retries: 0
    provider: {cloud: bedrock, region: us-east-1}
models:
  - {name: claude, upstream: bedrock, upstream_model: anthropic.claude-3-5-haiku-20241022-v1:0}
`)
	_, err := d.Generate(context.Background(), ask(t, "claude", "hello", false, false), &dispatch.Call{})
	e := translate.ToProto(err)
	if e.GetCode() != parleyv1.Code_CODE_UNAUTHENTICATED || e.GetRetry().GetRetryable() || e.GetReason() != "InvalidSignatureException" {
		t.Errorf("error = %v", e)
	}
	if strings.Contains(e.GetMessage(), wrong.SecretAccessKey) {
		t.Errorf("the secret leaked: %s", e.GetMessage())
	}
}

func TestBedrockAPIKey(t *testing.T) {
	awsEnv(t, testCreds)
	fake := cloudtest.NewBedrock(t, "us-west-2", testCreds)
	fake.APIKey = "ABSKQmVkcm9ja0FQSUtleS1wYXJsZXk="
	t.Setenv("BEDROCK_KEY", fake.APIKey)
	d := build(t, `
upstreams:
  - name: bedrock
    dialect: messages
    base_url: `+fake.URL+`
    api_key: ${BEDROCK_KEY}
    provider: {cloud: bedrock, region: us-west-2}
models:
  - {name: claude, upstream: bedrock, upstream_model: us.anthropic.claude-opus-4-1-20250805-v1:0}
`)
	resp, err := d.Generate(context.Background(), ask(t, "claude", "key", false, false), &dispatch.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(replyText(resp), ": key") {
		t.Errorf("reply %q", replyText(resp))
	}
	if h := fake.Seen()[0].Header; h.Get("X-Amz-Date") != "" || h.Get("Authorization") != "Bearer "+fake.APIKey {
		t.Errorf("an API key request was signed, or sent without the key: %v", h)
	}
}

// A throttled Bedrock route falls back to the model's Vertex route.
func TestBedrockThrottleFallsBackToVertex(t *testing.T) {
	awsEnv(t, testCreds)
	bed := cloudtest.NewBedrock(t, "us-east-1", testCreds)
	vx := cloudtest.NewVertex(t, "parley-test", "us-east5")
	sa := vx.ServiceAccountFile(t, t.TempDir())
	bed.Throttle.Store(1)
	d := build(t, `
upstreams:
  - name: bedrock
    dialect: messages
    base_url: `+bed.URL+`
    max_retries: 0
    provider: {cloud: bedrock, region: us-east-1}
  - name: vertex-claude
    dialect: messages
    base_url: `+vx.URL+`
    provider: {cloud: vertex, project: parley-test, location: us-east5, credentials_file: `+sa+`}
models:
  - name: claude
    routes:
      # Bedrock first but for one request in a million.
      - {upstream: bedrock, upstream_model: anthropic.claude-sonnet-4-5-20250929-v1:0, weight: 1000000}
      - {upstream: vertex-claude, upstream_model: claude-sonnet-4-5@20250929, weight: 1}
`)
	call := &dispatch.Call{}
	resp, err := d.Generate(context.Background(), ask(t, "claude", "fall back", false, false), call)
	if err != nil {
		t.Fatal(err)
	}
	if got := replyText(resp); got != "vertex claude-sonnet-4-5@20250929: fall back" {
		t.Errorf("reply %q", got)
	}
	if len(call.Failures) != 1 || call.Upstream != "vertex-claude" {
		t.Errorf("failures %v, answered by %q", call.Failures, call.Upstream)
	}
	if len(bed.Seen()) != 1 {
		t.Errorf("bedrock saw %d requests", len(bed.Seen()))
	}
}

func TestVertexTokensRefreshBeforeExpiry(t *testing.T) {
	vx := cloudtest.NewVertex(t, "parley-test", "us-central1")
	sa := vx.ServiceAccountFile(t, t.TempDir())
	d := build(t, `
upstreams:
  - name: vertex
    dialect: generate_content
    base_url: `+vx.URL+`
    provider: {cloud: vertex, project: parley-test, location: us-central1, credentials_file: `+sa+`}
models:
  - {name: gemini, upstream: vertex, upstream_model: gemini-2.5-flash}
`)
	gen := func(text string) string {
		t.Helper()
		resp, err := d.Generate(context.Background(), ask(t, "gemini", text, false, false), &dispatch.Call{})
		if err != nil {
			t.Fatal(err)
		}
		return replyText(resp)
	}
	// A token that lapses within five minutes is fetched again.
	vx.TokenLifetime.Store(120)
	if got := gen("one"); got != "vertex gemini-2.5-flash: one" {
		t.Errorf("reply %q", got)
	}
	vx.TokenLifetime.Store(3600)
	gen("two")
	if vx.Mints() != 2 {
		t.Errorf("%d tokens minted for a token about to lapse, want 2", vx.Mints())
	}
	// A token good for an hour is kept.
	gen("three")
	if got := streamText(t, d, ask(t, "gemini", "four", true, false)); got != "vertex gemini-2.5-flash: four" {
		t.Errorf("stream %q", got)
	}
	if vx.Mints() != 2 {
		t.Errorf("%d tokens minted, want 2: a live token was not reused", vx.Mints())
	}
	n, err := d.CountTokens(context.Background(), ask(t, "gemini", "count me", false, true), &dispatch.Call{})
	if err != nil || n.GetInputTokens() != 23 || n.GetEstimated() {
		t.Errorf("count = %v, %v", n, err)
	}
	for _, s := range vx.Seen() {
		if s.Header.Get("X-Goog-Api-Key") != "" {
			t.Errorf("an API key header went with a token")
		}
	}
}

func TestVertexAnthropic(t *testing.T) {
	vx := cloudtest.NewVertex(t, "parley-test", "global")
	sa := vx.ServiceAccountFile(t, t.TempDir())
	d := build(t, `
upstreams:
  - name: vertex-claude
    dialect: messages
    base_url: `+vx.URL+`
    provider: {cloud: vertex, project: parley-test, location: global, credentials_file: `+sa+`}
models:
  - {name: claude, upstream: vertex-claude, upstream_model: claude-opus-4-1@20250805}
`)
	resp, err := d.Generate(context.Background(), ask(t, "claude", "weather?", false, true), &dispatch.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if tc := resp.GetCandidates()[0].GetParts()[0].GetToolCall(); tc.GetName() != "get_weather" || tc.GetArguments() != `{"city":"Paris"}` {
		t.Errorf("tool call %v", tc)
	}
	if got := streamText(t, d, ask(t, "claude", "stream", true, false)); got != "vertex claude-opus-4-1@20250805: stream" {
		t.Errorf("stream %q", got)
	}
	n, err := d.CountTokens(context.Background(), ask(t, "claude", "count", false, false), &dispatch.Call{})
	if err != nil || n.GetInputTokens() != 29 {
		t.Errorf("count = %v, %v", n, err)
	}
	paths := []string{}
	for _, s := range vx.Seen() {
		paths = append(paths, s.Path)
	}
	want := []string{"/token",
		"/v1/projects/parley-test/locations/global/publishers/anthropic/models/claude-opus-4-1@20250805:rawPredict",
		"/v1/projects/parley-test/locations/global/publishers/anthropic/models/claude-opus-4-1@20250805:streamRawPredict",
		"/v1/projects/parley-test/locations/global/publishers/anthropic/models/count-tokens:rawPredict"}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("paths:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
}

func TestAzureSurfaces(t *testing.T) {
	az := cloudtest.NewAzure(t, "azure-key-0123456789abcdef", "gpt-4o-prod")
	t.Setenv("AZURE_KEY", az.APIKey)
	t.Setenv("AZURE_SECRET", az.ClientSecret)
	d := build(t, `
upstreams:
  - name: azure-deploy
    dialect: chat_completions
    base_url: `+az.URL+`
    api_key: ${AZURE_KEY}
    provider: {cloud: azure, api_version: 2024-10-21}
  - name: azure-v1
    dialect: responses
    base_url: `+az.URL+`
    provider:
      cloud: azure
      entra: {tenant_id: tenant-0001, client_id: client-0001, client_secret: "${AZURE_SECRET}", authority: `+az.URL+`}
models:
  - {name: gpt-deploy, upstream: azure-deploy, upstream_model: gpt-4o-prod}
  - {name: gpt-v1, upstream: azure-v1, upstream_model: gpt-4.1}
`)
	resp, err := d.Generate(context.Background(), ask(t, "gpt-deploy", "deployed", false, false), &dispatch.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if got := replyText(resp); got != "azure gpt-4o-prod: deployed" {
		t.Errorf("reply %q", got)
	}
	if got := streamText(t, d, ask(t, "gpt-v1", "entra", true, false)); got != "azure gpt-4.1: entra" {
		t.Errorf("stream %q", got)
	}
	if _, err := d.Generate(context.Background(), ask(t, "gpt-v1", "again", false, false), &dispatch.Call{}); err != nil {
		t.Fatal(err)
	}
	if az.Mints() != 1 {
		t.Errorf("%d Entra tokens minted, want 1", az.Mints())
	}
	seen := az.Seen()
	if seen[0].Path != "/openai/deployments/gpt-4o-prod/chat/completions" || seen[0].Query != "api-version=2024-10-21" || seen[0].Header.Get("Api-Key") != az.APIKey || seen[0].Header.Get("Authorization") != "" {
		t.Errorf("deployments request: %s?%s %v", seen[0].Path, seen[0].Query, seen[0].Header)
	}
	if seen[2].Path != "/openai/v1/responses" || seen[2].Query != "" || !strings.HasPrefix(seen[2].Header.Get("Authorization"), "Bearer eyJ") {
		t.Errorf("v1 request: %s?%s %v", seen[2].Path, seen[2].Query, seen[2].Header)
	}
}

func TestAzureEntraRefusalKeepsTheSecret(t *testing.T) {
	az := cloudtest.NewAzure(t, "azure-key-0123456789abcdef", "gpt-4o-prod")
	t.Setenv("AZURE_SECRET", "a-wrong-entra-client-secret-value")
	d := build(t, `
upstreams:
  - name: azure
    dialect: chat_completions
    base_url: `+az.URL+`
    max_retries: 0
    provider:
      cloud: azure
      entra: {tenant_id: tenant-0001, client_id: client-0001, client_secret: "${AZURE_SECRET}", authority: `+az.URL+`}
models:
  - {name: gpt, upstream: azure, upstream_model: gpt-4o}
`)
	_, err := d.Generate(context.Background(), ask(t, "gpt", "hi", false, false), &dispatch.Call{})
	e := translate.ToProto(err)
	if e.GetReason() != "credentials_unavailable" || e.GetHttpStatus() != http.StatusBadGateway {
		t.Errorf("error = %v", e)
	}
	if strings.Contains(err.Error(), "a-wrong-entra-client-secret-value") || strings.Contains(e.GetMessage(), "AADSTS") {
		t.Errorf("the token endpoint's answer reached the client: %v", err)
	}
}

// An exception in the middle of a Bedrock stream ends it with the
// canonical error of that exception.
func TestBedrockStreamException(t *testing.T) {
	awsEnv(t, testCreds)
	fake := cloudtest.NewBedrock(t, "us-east-1", testCreds)
	fake.StreamException.Store("modelStreamErrorException")
	d := build(t, `
upstreams:
  - name: bedrock
    dialect: messages
    base_url: `+fake.URL+`
    provider: {cloud: bedrock, region: us-east-1}
models:
  - {name: claude, upstream: bedrock, upstream_model: anthropic.claude-3-5-haiku-20241022-v1:0}
`)
	var events int
	var last error
	for ev, err := range d.Stream(context.Background(), ask(t, "claude", "hi", true, false), &dispatch.Call{}) {
		if err != nil {
			last = err
			break
		}
		if ev.GetStart() == nil {
			t.Errorf("an event after the start reached the client: %v", ev)
		}
		events++
	}
	e := translate.ToProto(last)
	if events != 1 || e.GetReason() != "modelStreamErrorException" || e.GetCode() != parleyv1.Code_CODE_UNAVAILABLE ||
		e.GetMessage() != "The model stream was interrupted. Try your request again." {
		t.Errorf("after %d events: %v", events, e)
	}
}
