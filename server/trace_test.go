package server_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// A streamed request that is retried and falls back is one server span,
// continuing the caller's traceparent, with a client span per upstream
// attempt under it; the upstream request carries the trace on; the spans
// carry the GenAI conventions and no prompt, completion or key.
func TestTraces(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(telemetry.Use(tp, propagation.TraceContext{}))

	g := faultGatewayWithFake(t)
	g.d.Rand = func(int) int { return 0 } // the dead route first, then the fallback
	fake := g.fakes["chat_completions"]
	fake.set("text", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			http.Error(w, `{"error":{"message":"busy","type":"server_error","param":null,"code":null}}`, http.StatusServiceUnavailable)
			return
		}
		// The service answers with a dated version of the model it was
		// asked for: the span names the one that answered.
		writeStream(w, bytes.ReplaceAll(fixture(t, "text", "chat_completions", "stream.sse"), []byte(`"gpt-4.1"`), []byte(`"gpt-4.1-2025-04-14"`)), nil)
	})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	body := withModel(t, fixture(t, "text", "messages", "request.json"), "fallback", true)
	req, _ := http.NewRequest(http.MethodPost, g.url+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("x-api-key", clientKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "message_stop") {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}

	var server sdktrace.ReadOnlySpan
	var attempts []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.SpanKind() {
		case trace.SpanKindServer:
			server = s
		case trace.SpanKindClient:
			attempts = append(attempts, s)
		}
	}
	if server == nil {
		t.Fatal("no server span")
	}
	if got := server.SpanContext().TraceID().String(); got != traceID {
		t.Errorf("the request's trace %s, want the caller's %s", got, traceID)
	}
	sa := attrs(server)
	for k, want := range map[attribute.Key]string{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "fallback", "gen_ai.provider.name": "openai",
		"gen_ai.response.model": "gpt-4.1-2025-04-14", "parley.upstream": "patient", "parley.client.dialect": "messages", "parley.key": "test",
	} {
		if sa[k].AsString() != want {
			t.Errorf("server span %s = %q, want %q", k, sa[k].String(), want)
		}
	}
	if server.Name() != "chat fallback" || sa["parley.attempts"].AsInt64() != 4 || sa["gen_ai.usage.output_tokens"].AsInt64() == 0 ||
		len(sa["gen_ai.response.finish_reasons"].AsStringSlice()) == 0 || sa["parley.time_to_first_token_ms"].AsFloat64() <= 0 {
		t.Errorf("server span %q: %v", server.Name(), sa)
	}
	if len(attempts) != 4 {
		t.Fatalf("%d attempt spans, want 4 (dead twice, then the fallback's 503 and its success)", len(attempts))
	}
	for i, s := range attempts {
		a := attrs(s)
		if s.Parent().SpanID() != server.SpanContext().SpanID() || a["parley.attempt"].AsInt64() != int64(i+1) {
			t.Errorf("attempt span %d: parent %s, attempt %d", i, s.Parent().SpanID(), a["parley.attempt"].AsInt64())
		}
		if failed := i < 3; failed != (a["error.type"].AsString() != "") || failed != (a["parley.retry.reason"].AsString() != "") {
			t.Errorf("attempt %d: error.type %q, retry reason %q", i+1, a["error.type"].AsString(), a["parley.retry.reason"].AsString())
		}
	}
	if a := attrs(attempts[0]); a["parley.upstream"].AsString() != "dead" || a["gen_ai.provider.name"].AsString() != "anthropic" {
		t.Errorf("first attempt: %v", a)
	}
	// The upstream request carries the attempt's span as its parent.
	got := fake.requests()
	if len(got) != 2 || !strings.Contains(got[1].Header.Get("traceparent"), traceID) ||
		!strings.Contains(got[1].Header.Get("traceparent"), attempts[3].SpanContext().SpanID().String()) {
		t.Errorf("the upstream's traceparent: %q", got[len(got)-1].Header.Get("traceparent"))
	}
	// Nothing of the conversation or of a key is in any span.
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			v := kv.Value.String()
			for _, secret := range []string{clientKey, "up-key-chat_completions"} {
				if strings.Contains(v, secret) {
					t.Errorf("span %s attribute %s holds a key", s.Name(), kv.Key)
				}
			}
			if len(v) > 200 {
				t.Errorf("span %s attribute %s holds %d bytes", s.Name(), kv.Key, len(v))
			}
		}
	}
}

// A whole request is traced as a stream is: one server span with the
// reply's usage and finish reason, and one attempt under it.
func TestTracesWholeRequest(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(telemetry.Use(tp, propagation.TraceContext{}))

	g := faultGatewayWithFake(t)
	fake := g.fakes["chat_completions"]
	fake.set("text", func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixture(t, "text", "chat_completions", "response.json"))
	})
	body := withModel(t, fixture(t, "text", "messages", "request.json"), "retrying", false)
	if status, out := postBody(t, g.url, "/v1/messages", body); status != http.StatusOK {
		t.Fatalf("%d %s", status, out)
	}
	var server, attempt sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.SpanKind() {
		case trace.SpanKindServer:
			server = s
		case trace.SpanKindClient:
			attempt = s
		}
	}
	if server == nil || attempt == nil || attempt.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Fatalf("want a server span with one attempt under it; got %d spans", len(rec.Ended()))
	}
	sa := attrs(server)
	if server.Name() != "chat retrying" || sa["gen_ai.usage.input_tokens"].AsInt64() == 0 || sa["gen_ai.usage.output_tokens"].AsInt64() == 0 ||
		sa["gen_ai.response.model"].AsString() != "gpt-4.1" || len(sa["gen_ai.response.finish_reasons"].AsStringSlice()) != 1 ||
		sa["parley.attempts"].AsInt64() != 1 {
		t.Errorf("server span %q: %v", server.Name(), sa)
	}
}

// A token count is traced under an operation of its own, not as a chat.
func TestTracesCountTokens(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(telemetry.Use(tp, propagation.TraceContext{}))

	g := startGateway(t, gwExtra{})
	if status, out := postBody(t, g.url, "/v1/messages/count_tokens", []byte(`{"model":"via-messages","messages":[{"role":"user","content":"hi"}]}`)); status != http.StatusOK {
		t.Fatalf("%d %s", status, out)
	}
	kinds := map[trace.SpanKind]int{}
	for _, s := range rec.Ended() {
		kinds[s.SpanKind()]++
		if a := attrs(s); !strings.HasPrefix(s.Name(), "count_tokens ") || a["gen_ai.operation.name"].AsString() != "count_tokens" {
			t.Errorf("%s span %q: operation %q", s.SpanKind(), s.Name(), a["gen_ai.operation.name"].AsString())
		}
	}
	if kinds[trace.SpanKindServer] != 1 || kinds[trace.SpanKindClient] != 1 {
		t.Errorf("spans by kind %v, want one request and one attempt", kinds)
	}
}

// The built-in echo model's attempts name it as the configuration does,
// not as the canonical model it speaks. (issue 15)
func TestTracesEcho(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(telemetry.Use(tp, propagation.TraceContext{}))

	g := echoGateway(t, "")
	if status, out := postBody(t, g.url, "/v1/chat/completions", []byte(`{"model":"echo","messages":[{"role":"user","content":"hi"}]}`)); status != http.StatusOK {
		t.Fatalf("%d %s", status, out)
	}
	var attempts int
	for _, s := range rec.Ended() {
		if s.SpanKind() != trace.SpanKindClient {
			continue
		}
		attempts++
		if a := attrs(s); a["parley.upstream.dialect"].AsString() != "echo" || a["parley.upstream"].AsString() != "e" {
			t.Errorf("the echo attempt's span: %v", a)
		}
	}
	if attempts != 1 {
		t.Errorf("%d attempt spans, want 1", attempts)
	}
}
