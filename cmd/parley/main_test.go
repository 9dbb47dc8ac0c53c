package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/gen/parley/v1/parleyv1connect"
	"github.com/parleyhq/parley/store/postgres"
	"github.com/parleyhq/parley/store/postgres/pgtest"

	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

func noEnv(string) (string, bool) { return "", false }

// startServe runs `parley serve` with args as the README's run command
// does, on a free loopback port, and returns its address.
func startServe(t *testing.T, args ...string) string {
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	errc := make(chan error, 1)
	var logs bytes.Buffer
	go func() {
		errc <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), env{
			stdout: io.Discard, stderr: &logs, lookup: noEnv, ready: func(a string) { addr <- a },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve ended with %v", err)
		}
	})
	select {
	case a := <-addr:
		return "http://" + a
	case err := <-errc:
		t.Fatalf("serve failed: %v\n%s", err, logs.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	return ""
}

// TestNewcomer follows the README: `parley serve` with no configuration,
// then the echo model in all four dialects through their official SDKs,
// whole and streamed, and the model listings each SDK reads: /v1beta/models
// for the content-generation one, /v1/models for the messages and OpenAI
// ones (guide §8 item 5).
func TestNewcomer(t *testing.T) {
	t.Chdir(t.TempDir()) // the default data directory is relative
	gw := startServe(t)
	ctx := context.Background()
	const say = "hello from a newcomer who types several words"

	ac := anthropic.NewClient(aoption.WithBaseURL(gw), aoption.WithAPIKey("anything"), aoption.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "echo", MaxTokens: 100, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(say))}}
	msg, err := ac.Messages.New(ctx, params)
	if err != nil || msg.Content[0].Text != say || msg.Usage.InputTokens == 0 {
		t.Errorf("messages: %v %+v", err, msg)
	}
	s := ac.Messages.NewStreaming(ctx, params)
	var acc anthropic.Message
	events := 0
	for s.Next() {
		events++
		if err := acc.Accumulate(s.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if s.Err() != nil || acc.Content[0].Text != say || events < 7 || acc.Usage.OutputTokens == 0 {
		t.Errorf("messages stream: %v, %d events, %+v", s.Err(), events, acc)
	}

	oc := openai.NewClient(ooption.WithBaseURL(gw+"/v1"), ooption.WithAPIKey("anything"), ooption.WithMaxRetries(0))
	cc, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "echo", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(say)}})
	if err != nil || cc.Choices[0].Message.Content != say {
		t.Errorf("chat: %v %+v", err, cc)
	}
	cs := oc.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "echo", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(say)}})
	var cacc openai.ChatCompletionAccumulator
	for cs.Next() {
		cacc.AddChunk(cs.Current())
	}
	if cs.Err() != nil || cacc.Choices[0].Message.Content != say {
		t.Errorf("chat stream: %v %+v", cs.Err(), cacc.ChatCompletion)
	}

	rp := responses.ResponseNewParams{Model: "echo", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(say)}}
	r, err := oc.Responses.New(ctx, rp)
	if err != nil || r.OutputText() != say {
		t.Errorf("responses: %v %+v", err, r)
	}
	rs := oc.Responses.NewStreaming(ctx, rp)
	var done string
	for rs.Next() {
		if ev := rs.Current(); ev.Type == "response.completed" {
			done = ev.Response.OutputText()
		}
	}
	if rs.Err() != nil || done != say {
		t.Errorf("responses stream: %v %q", rs.Err(), done)
	}

	gc, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "anything", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: gw}})
	if err != nil {
		t.Fatal(err)
	}
	gr, err := gc.Models.GenerateContent(ctx, "echo", genai.Text(say), nil)
	if err != nil || gr.Text() != say {
		t.Errorf("generate content: %v %+v", err, gr)
	}
	var streamed strings.Builder
	chunks := 0
	for ch, err := range gc.Models.GenerateContentStream(ctx, "echo", genai.Text(say), nil) {
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		streamed.WriteString(ch.Text())
	}
	if streamed.String() != say || chunks < 3 {
		t.Errorf("generate content stream: %d chunks, %q", chunks, streamed.String())
	}
	count, err := gc.Models.CountTokens(ctx, "echo", genai.Text(say), nil)
	if err != nil || count.TotalTokens == 0 {
		t.Errorf("count tokens: %v %+v", err, count)
	}
	page, err := gc.Models.List(ctx, nil)
	if err != nil || len(page.Items) != 1 || page.Items[0].Name != "models/echo" {
		t.Errorf("genai model list: %v %+v", err, page.Items)
	}
	// Each listing in its own service's shape: the messages one with its
	// type, display name and page cursors, the OpenAI one with its object
	// and owner, and each model readable by name too.
	models, err := ac.Models.List(ctx, anthropic.ModelListParams{})
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "echo" || models.Data[0].Type != "model" ||
		models.Data[0].DisplayName == "" || models.FirstID != "echo" || models.LastID != "echo" || !models.JSON.HasMore.Valid() {
		t.Errorf("messages model list: %v %s", err, models.RawJSON())
	}
	if m, err := ac.Models.Get(ctx, "echo", anthropic.ModelGetParams{}); err != nil || m.ID != "echo" || m.Type != "model" || m.DisplayName == "" {
		t.Errorf("messages model: %v %+v", err, m)
	}
	omodels, err := oc.Models.List(ctx)
	if err != nil || len(omodels.Data) != 1 || omodels.Data[0].ID != "echo" || omodels.Data[0].Object != "model" || omodels.Data[0].OwnedBy == "" {
		t.Errorf("openai model list: %v %+v", err, omodels)
	}
	if m, err := oc.Models.Get(ctx, "echo"); err != nil || m.ID != "echo" || m.Object != "model" {
		t.Errorf("openai model: %v %+v", err, m)
	}
	if m, err := gc.Models.Get(ctx, "echo", nil); err != nil || m.Name != "models/echo" {
		t.Errorf("genai model: %v %+v", err, m)
	}
	resp, err := http.Get(gw + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`parley_requests_total{dialect="generate_content",model="echo",status="200",upstream="echo"} 3`,
		`parley_time_to_first_token_seconds_count{dialect="messages",model="echo",upstream="echo"} 1`,
		`parley_tokens_total{dialect="chat_completions",direction="output",model="echo",upstream="echo"}`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if _, err := os.Stat("parley-data"); err != nil {
		t.Errorf("no data directory: %v", err)
	}
}

func TestServeRefusesExposureWithoutKeys(t *testing.T) {
	err := run(context.Background(), []string{"serve", "--listen", "0.0.0.0:0"}, env{stdout: io.Discard, stderr: io.Discard, lookup: noEnv})
	if err == nil || !strings.Contains(err.Error(), "only listens on a loopback address") {
		t.Fatalf("err = %v", err)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(good, []byte("upstreams:\n  - {name: e, dialect: echo}\nmodels:\n  - {name: echo, upstream: e}\n"), 0o600)
	_ = os.WriteFile(bad, []byte("upstreams:\n  - {name: e, dialect: echoo}\nmodels:\n  - {name: echo, upstream: e}\n"), 0o600)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"config", "check", good}, env{stdout: &out, stderr: io.Discard, lookup: noEnv}); err != nil || !strings.Contains(out.String(), "ok") {
		t.Errorf("good config: %v %q", err, out.String())
	}
	err := run(context.Background(), []string{"config", "check", bad}, env{stdout: io.Discard, stderr: io.Discard, lookup: noEnv})
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:2: upstreams[0].dialect") {
		t.Errorf("bad config: %v", err)
	}
}

func TestTranslateCommand(t *testing.T) {
	in := `{"model":"claude-sonnet-4-5","max_tokens":100,"system":"Be brief.","messages":[{"role":"user","content":"Say hello."}]}`
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"translate", "--from", "messages", "--to", "generate_content"},
		env{stdin: strings.NewReader(in), stdout: &out, stderr: &errOut, lookup: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		SystemInstruction struct{ Parts []struct{ Text string } }
		Contents          []struct{ Parts []struct{ Text string } }
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.SystemInstruction.Parts[0].Text != "Be brief." || got.Contents[0].Parts[0].Text != "Say hello." {
		t.Errorf("translate: %v %s", err, out.String())
	}
	if !strings.Contains(errOut.String(), "POST /v1beta/models/claude-sonnet-4-5:generateContent") {
		t.Errorf("stderr = %q", errOut.String())
	}
	reply := `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":7}}`
	out.Reset()
	err = run(context.Background(), []string{"translate", "--from", "generate_content", "--to", "messages", "--response"},
		env{stdin: strings.NewReader(reply), stdout: &out, stderr: io.Discard, lookup: noEnv})
	if err != nil || !strings.Contains(out.String(), `"text":"Hello."`) || !strings.Contains(out.String(), `"stop_reason":"end_turn"`) {
		t.Errorf("translate --response: %v %s", err, out.String())
	}
	err = run(context.Background(), []string{"translate", "--from", "klingon", "--to", "messages"}, env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, lookup: noEnv})
	if err == nil {
		t.Error("an unknown dialect was accepted")
	}
}

// TestNewcomerLyrics follows the README's music example on the embedded
// defaults: a lyrics task is written by the echo model with no music
// service configured, and stored under the data directory.
func TestNewcomerLyrics(t *testing.T) {
	t.Chdir(t.TempDir())
	gw := startServe(t)
	post := func(path, body string) map[string]any {
		resp, err := http.Post(gw+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			t.Fatal(err)
		}
		env["status"] = resp.StatusCode
		return env
	}
	env := post("/songgen/submit/lyrics", `{"prompt": "Winter Light\n[Verse]\nsnow on the window"}`)
	id, _ := env["data"].(string)
	if env["code"] != "success" || id == "" {
		t.Fatalf("submit: %v", env)
	}
	var task map[string]any
	for range 200 {
		resp, err := http.Get(gw + "/songgen/fetch/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Data map[string]any }
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if task = got.Data; task["status"] != "IN_PROGRESS" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	lyrics, _ := task["data"].(map[string]any)
	if task["status"] != "SUCCESS" || lyrics["title"] != "Winter Light" || !strings.Contains(fmt.Sprint(lyrics["text"]), "snow on the window") {
		t.Errorf("lyrics task = %v", task)
	}
	if env := post("/songgen/submit/music", `{"ai_description_prompt": "rain"}`); env["code"] != "upstream_unavailable" || env["status"] != 503 {
		t.Errorf("music with no music service: %v", env)
	}
	if _, err := os.Stat("parley-data/parley.db"); err != nil {
		t.Errorf("no task database under the data directory: %v", err)
	}
}

// TestNewcomerGRPC: on the embedded defaults, a gRPC client reaches the
// Connect services over cleartext HTTP/2 on the same port as the JSON
// dialects: the echo model answers whole and streamed, and a lyrics task
// submitted over gRPC finishes.
func TestNewcomerGRPC(t *testing.T) {
	t.Chdir(t.TempDir())
	gw := startServe(t)
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: p}}
	defer hc.CloseIdleConnections()
	gen := parleyv1connect.NewGenerationServiceClient(hc, gw, connect.WithGRPC())
	const say = "hello over gRPC"
	req := &parleyv1.Request{Model: "echo", Messages: []*parleyv1.Message{{
		Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: say}}}},
	}}}
	res, err := gen.Generate(t.Context(), connect.NewRequest(&parleyv1.GenerateRequest{Request: req}))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Msg.GetResponse().GetCandidates()[0].GetParts()[0].GetText().GetText(); got != say {
		t.Errorf("Generate answered %q", got)
	}
	st, err := gen.StreamGenerate(t.Context(), connect.NewRequest(&parleyv1.StreamGenerateRequest{Request: req}))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for st.Receive() {
		text.WriteString(st.Msg().GetEvent().GetPartDelta().GetText())
	}
	if err := st.Err(); err != nil || text.String() != say {
		t.Errorf("StreamGenerate: %q, %v", text.String(), err)
	}
	_ = st.Close()

	tasks := parleyv1connect.NewTaskServiceClient(hc, gw, connect.WithGRPC())
	sub, err := tasks.SubmitTask(t.Context(), connect.NewRequest(&parleyv1.SubmitTaskRequest{
		Input: &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Lyrics{Lyrics: &parleyv1.LyricsInput{Prompt: "Winter Light\nsnow"}}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var task *parleyv1.Task
	for range 200 {
		got, err := tasks.GetTask(t.Context(), connect.NewRequest(&parleyv1.GetTaskRequest{Id: sub.Msg.GetTask().GetId()}))
		if err != nil {
			t.Fatal(err)
		}
		if task = got.Msg.GetTask(); task.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if task.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_SUCCESS || task.GetLyrics().GetTitle() != "Winter Light" {
		t.Errorf("lyrics task over gRPC: %v", task)
	}
}

// TestNewcomerChain: on the embedded defaults, a responses-style
// conversation continues by previous_response_id, stored under the data
// directory, and can be read back, listed and deleted with the SDK.
func TestNewcomerChain(t *testing.T) {
	t.Chdir(t.TempDir())
	gw := startServe(t)
	ctx := context.Background()
	oc := openai.NewClient(ooption.WithBaseURL(gw+"/v1"), ooption.WithAPIKey("anything"), ooption.WithMaxRetries(0))
	first, err := oc.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := oc.Responses.New(ctx, responses.ResponseNewParams{
		Model: "echo", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello again")},
		PreviousResponseID: openai.String(first.ID),
	})
	if err != nil || second.PreviousResponseID != first.ID || second.OutputText() != "hello again" {
		t.Fatalf("the second turn: %v %+v", err, second)
	}
	items, err := oc.Responses.InputItems.List(ctx, second.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil || len(items.Data) != 3 || items.Data[0].Role != "user" || items.Data[1].Role != "assistant" {
		t.Fatalf("input items of the second turn: %v %+v", err, items)
	}
	if err := oc.Responses.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := oc.Responses.Get(ctx, second.ID, responses.ResponseGetParams{}); err != nil || got.OutputText() != "hello again" {
		t.Errorf("the second turn after deleting the first: %v", err)
	}
}

// The PostgreSQL store's settings are checked without connecting and
// described without their password; an unreachable database stops serve
// with its host and port named; migrate brings a database up to date.
func TestPostgresStoreCommands(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fleet.yaml")
	_ = os.WriteFile(file, []byte("store:\n  driver: postgres\n  dsn: ${PARLEY_DATABASE_URL}\n"), 0o600)
	lookupDSN := func(dsn string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if k == "PARLEY_DATABASE_URL" {
				return dsn, true
			}
			return "", false
		}
	}
	var out bytes.Buffer
	err := run(t.Context(), []string{"config", "check", file}, env{stdout: &out, stderr: io.Discard, lookup: lookupDSN("postgres://parley:pw-secret@db.internal:5433/parley?sslmode=disable")})
	if err != nil || !strings.Contains(out.String(), "store postgres://parley@db.internal:5433/parley") || strings.Contains(out.String(), "pw-secret") {
		t.Fatalf("config check: %v %q", err, out.String())
	}

	var logs bytes.Buffer
	err = run(t.Context(), []string{"serve", "--config", file}, env{stdout: io.Discard, stderr: &logs, lookup: lookupDSN("postgres://parley:pw-secret@127.0.0.1:1/parley?sslmode=disable&connect_timeout=2")})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error()+logs.String(), "pw-secret") {
		t.Fatalf("serve on an unreachable database: %v\n%s", err, logs.String())
	}

	dsn := pgtest.DSN(t)
	out.Reset()
	if err := run(t.Context(), []string{"migrate", "--config", file}, env{stdout: &out, stderr: io.Discard, lookup: lookupDSN(dsn)}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d migrations applied", postgres.Version()); !strings.Contains(out.String(), want) {
		t.Fatalf("migrate: %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := run(t.Context(), []string{"migrate", "--config", file}, env{stdout: &out, stderr: io.Discard, lookup: lookupDSN(dsn)}); err != nil || !strings.Contains(out.String(), "0 migrations applied") {
		t.Fatalf("migrate again: %v %q", err, out.String())
	}
}
