package server_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// TestConnectMatrix calls Generate and StreamGenerate with the generated
// client over Connect, gRPC and gRPC-Web, served by a fake upstream of
// every dialect, on every recorded scenario. It checks what the client read
// against what the upstream's recording says, and what reached the
// upstream against what the canonical request asked.
func TestConnectMatrix(t *testing.T) {
	g := startGateway(t, gwExtra{})
	scenarios, err := os.ReadDir(tableDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, protocol := range rpcProtocols {
		c := newRPC(t, g.url, clientKey, protocol)
		for _, b := range dialectList {
			for _, sc := range scenarios {
				for _, stream := range []bool{false, true} {
					mode := map[bool]string{false: "whole", true: "stream"}[stream]
					t.Run(protocol+"/via_"+b.name+"/"+sc.Name()+"/"+mode, func(t *testing.T) {
						connectCase(t, g, c, sc.Name(), b, stream)
					})
				}
			}
		}
	}
}

func connectCase(t *testing.T, g *gateway, c rpcClient, scenario string, b dialect, stream bool) {
	fake := g.fakes[b.name]
	fake.set(scenario, nil)
	req := canonicalRequest(t, scenario, "via-"+b.name)
	resp, header, err := c.generate(t.Context(), req, stream)

	got := fake.requests()
	if len(got) != 1 {
		t.Fatalf("the %s upstream got %d requests, want 1 (the client saw %v)", b.name, len(got), err)
	}
	if d := cmp.Diff(askedOf(req), askedOf(decodeAt(t, b, got[0])), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the upstream was asked something else (-client +upstream):\n%s", d)
	}
	if scenario == "errors" {
		f := failureOf(t, err)
		if f.code != connect.CodeResourceExhausted || f.canonical.GetHttpStatus() != http.StatusTooManyRequests {
			t.Fatalf("got %s (upstream status %d), want resource_exhausted from the upstream's 429", f.code, f.canonical.GetHttpStatus())
		}
		if f.retry.GetRetryDelay().AsDuration() != 7*time.Second || f.meta.Get("Retry-After") != "7" {
			t.Errorf("retry advice %v, Retry-After %q; want the upstream's 7s", f.retry, f.meta.Get("Retry-After"))
		}
		if f.canonical.GetOrigin().GetDialect() != b.upstream.Dialect() {
			t.Errorf("the error's origin is %v, want the %s upstream", f.canonical.GetOrigin(), b.name)
		}
		return
	}
	if err != nil {
		t.Fatalf("the call failed: %v", err)
	}
	if d := cmp.Diff(expected(t, scenario, b, stream), answerOf(t, resp), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the client read another answer than the upstream gave (-upstream +client):\n%s", d)
	}
	if !strings.HasPrefix(header.Get("X-Request-Id"), "req_") {
		t.Errorf("X-Request-Id is %q", header.Get("X-Request-Id"))
	}
}

// TestConnectToolRoundTrip: the model asks for a tool through Connect;
// the client runs it and sends the call and its result back, streamed;
// the upstream of every dialect sees its own call answered, and the
// client a second answer.
func TestConnectToolRoundTrip(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, protocol := range rpcProtocols {
		c := newRPC(t, g.url, clientKey, protocol)
		for _, b := range dialectList {
			t.Run(protocol+"/via_"+b.name, func(t *testing.T) {
				fake := g.fakes[b.name]
				fake.set("tool", nil)
				req := canonicalRequest(t, "tool", "via-"+b.name)
				resp, _, err := c.generate(t.Context(), req, false)
				if err != nil {
					t.Fatal(err)
				}
				parts := resp.GetCandidates()[0].GetParts()
				var callPart *parleyv1.ToolCall
				for _, p := range parts {
					if p.GetToolCall() != nil {
						callPart = p.GetToolCall()
					}
				}
				if callPart == nil || callPart.GetId() == "" {
					t.Fatalf("the answer holds no tool call with an id: %v", parts)
				}
				next := proto.CloneOf(req)
				next.Messages = append(next.Messages,
					&parleyv1.Message{Role: parleyv1.Role_ROLE_ASSISTANT, Parts: parts},
					translate.NewMessage(parleyv1.Role_ROLE_TOOL, &parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{
						CallId: callPart.GetId(), Name: callPart.GetName(), Content: []*parleyv1.Part{translate.TextPart("19C")},
					}}}))
				if _, _, err := c.generate(t.Context(), next, true); err != nil {
					t.Fatalf("the second turn failed: %v", err)
				}
				got := fake.requests()
				if len(got) != 2 {
					t.Fatalf("the upstream got %d requests, want 2", len(got))
				}
				up := decodeAt(t, b, got[1])
				a := askedOf(up)
				if !slices.Equal(a.Calls, []string{"get_weather", "get_weather"}) || a.Results != 2 {
					t.Fatalf("the upstream saw calls %v and %d results, want two get_weather calls, both answered", a.Calls, a.Results)
				}
				// The last result answers the call the upstream itself made.
				var lastCall string
				var lastResult *parleyv1.ToolResult
				for _, m := range up.GetMessages() {
					for _, p := range m.GetParts() {
						if tc := p.GetToolCall(); tc != nil {
							lastCall = tc.GetId()
						}
						if tr := p.GetToolResult(); tr != nil {
							lastResult = tr
						}
					}
				}
				if lastCall == "" || lastResult.GetCallId() != lastCall {
					t.Errorf("the last result answers %q, the last call is %q", lastResult.GetCallId(), lastCall)
				}
				if !strings.Contains(lastResult.GetContent()[0].GetText().GetText(), "19C") {
					t.Errorf("the last result holds %v, want the client's 19C", lastResult.GetContent())
				}
			})
		}
	}
}

// TestConnectCancelMidStream: a client that cancels a stream after its
// first event makes Parley drop the upstream's request, over every
// protocol.
func TestConnectCancelMidStream(t *testing.T) {
	// An idle timeout far beyond the wait below, so that only the client's
	// cancellation can end the upstream's request in time.
	g := startGateway(t, gwExtra{idle: "10m"})
	for _, protocol := range rpcProtocols {
		t.Run(protocol, func(t *testing.T) {
			c := newRPC(t, g.url, clientKey, protocol)
			gone := make(chan struct{})
			g.fakes["messages"].set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
				writeStream(w, fixture(t, "text", "messages", "stream.sse"), func(i int) bool {
					if i < 3 {
						return true
					}
					select {
					case <-r.Context().Done():
						close(gone)
					case <-time.After(30 * time.Second):
					}
					return false
				})
			})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			st, err := c.gen.StreamGenerate(ctx, connect.NewRequest(&parleyv1.StreamGenerateRequest{Request: canonicalRequest(t, "text", "via-messages")}))
			if err != nil {
				t.Fatal(err)
			}
			if !st.Receive() {
				t.Fatalf("no first event: %v", st.Err())
			}
			cancel()
			select {
			case <-gone:
			case <-time.After(20 * time.Second):
				t.Fatal("the upstream's request was still open 20s after the client cancelled")
			}
			for st.Receive() {
			}
			if code := connect.CodeOf(st.Err()); code != connect.CodeCanceled {
				t.Errorf("the client's stream ended with %v, want canceled", st.Err())
			}
			_ = st.Close()
		})
	}
}

// TestConnectUpstreamFailsMidStream: an upstream whose stream breaks off
// after some events ends the client's stream with the canonical error,
// after the events already sent.
func TestConnectUpstreamFailsMidStream(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, protocol := range rpcProtocols {
		t.Run(protocol, func(t *testing.T) {
			c := newRPC(t, g.url, clientKey, protocol)
			g.fakes["messages"].set("text", func(w http.ResponseWriter, _ *http.Request, _ int) {
				writeStream(w, fixture(t, "text", "messages", "stream.sse"), func(i int) bool { return i < 3 })
			})
			st, err := c.gen.StreamGenerate(t.Context(), connect.NewRequest(&parleyv1.StreamGenerateRequest{Request: canonicalRequest(t, "text", "via-messages")}))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = st.Close() }()
			events := 0
			for st.Receive() {
				events++
			}
			if events == 0 {
				t.Fatal("no event before the failure")
			}
			f := failureOf(t, st.Err())
			if f.code != connect.CodeUnavailable && f.code != connect.CodeInternal {
				t.Errorf("the stream ended with %s: %v", f.code, st.Err())
			}
			if f.canonical.GetOrigin().GetDialect() != parleyv1.Dialect_DIALECT_MESSAGES || f.canonical.GetRequestId() == "" {
				t.Errorf("the canonical error does not say where it came from: %v", f.canonical)
			}
		})
	}
}

// TestConnectBadInput: a request that no encoder can take is refused with
// InvalidArgument naming the canonical field, in the Connect error's
// details, and never reaches the upstream.
func TestConnectBadInput(t *testing.T) {
	g := startGateway(t, gwExtra{})
	cases := []struct {
		name  string
		edit  func(r *parleyv1.Request) *parleyv1.Request
		code  connect.Code
		field string
	}{
		{"no request", func(*parleyv1.Request) *parleyv1.Request { return nil }, connect.CodeInvalidArgument, "request"},
		{"no model", func(r *parleyv1.Request) *parleyv1.Request { r.Model = ""; return r }, connect.CodeInvalidArgument, "request.model"},
		{"unknown model", func(r *parleyv1.Request) *parleyv1.Request { r.Model = "no-such-model"; return r }, connect.CodeNotFound, "request.model"},
		{"turn without role", func(r *parleyv1.Request) *parleyv1.Request {
			r.Messages[0].Role = parleyv1.Role_ROLE_UNSPECIFIED
			return r
		}, connect.CodeInvalidArgument, "request.messages[0].role"},
		{"turn without parts", func(r *parleyv1.Request) *parleyv1.Request { r.Messages[0].Parts = nil; return r }, connect.CodeInvalidArgument, "request.messages[0].parts"},
		{"part without kind", func(r *parleyv1.Request) *parleyv1.Request {
			r.Messages[0].Parts = append(r.Messages[0].Parts, &parleyv1.Part{})
			return r
		}, connect.CodeInvalidArgument, "request.messages[0].parts[1]"},
		{"unknown role number", func(r *parleyv1.Request) *parleyv1.Request { r.Messages[0].Role = 42; return r }, connect.CodeInvalidArgument, "request.messages[0].role"},
		{"temperature out of range", func(r *parleyv1.Request) *parleyv1.Request {
			r.Generation = &parleyv1.GenerationConfig{Temperature: proto.Float64(3)}
			return r
		}, connect.CodeInvalidArgument, "request.generation.temperature"},
		{"tool call arguments not JSON", func(r *parleyv1.Request) *parleyv1.Request {
			r.Messages = append(r.Messages, translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, translate.CallPart("c1", "f", "{not json")))
			return r
		}, connect.CodeInvalidArgument, "request.messages[1].parts[0].tool_call.arguments"},
		{"tool result without call", func(r *parleyv1.Request) *parleyv1.Request {
			r.Messages = append(r.Messages, translate.NewMessage(parleyv1.Role_ROLE_TOOL, translate.ResultPart("", "18C", false)))
			return r
		}, connect.CodeInvalidArgument, "request.messages[1].parts[0].tool_result.call_id"},
		{"tool choice of an undeclared function", func(r *parleyv1.Request) *parleyv1.Request {
			r.ToolChoice = &parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, Name: "nowhere"}
			return r
		}, connect.CodeInvalidArgument, "request.tool_choice.name"},
		{"function without name", func(r *parleyv1.Request) *parleyv1.Request {
			r.Tools = []*parleyv1.Tool{{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Parameters: `{"type":"object"}`}}}}
			return r
		}, connect.CodeInvalidArgument, "request.tools[0].function.name"},
		{"extension value not JSON", func(r *parleyv1.Request) *parleyv1.Request {
			r.Extensions = &parleyv1.Extensions{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Fields: map[string]string{"top_k": "{"}}
			return r
		}, connect.CodeInvalidArgument, `request.extensions.fields["top_k"]`},
	}
	for _, protocol := range rpcProtocols {
		c := newRPC(t, g.url, clientKey, protocol)
		for _, tc := range cases {
			for _, stream := range []bool{false, true} {
				t.Run(protocol+"/"+tc.name+"/"+map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
					g.fakes["messages"].set("text", nil)
					_, _, err := c.generate(t.Context(), tc.edit(canonicalRequest(t, "text", "via-messages")), stream)
					f := failureOf(t, err)
					if f.code != tc.code {
						t.Errorf("code %s, want %s (%v)", f.code, tc.code, err)
					}
					if len(f.violations) == 0 || f.violations[0].GetField() != tc.field {
						t.Errorf("field violations %v, want one naming %s", f.violations, tc.field)
					}
					if len(f.canonical.GetFieldViolations()) == 0 || f.canonical.GetFieldViolations()[0].GetField() != tc.field {
						t.Errorf("the canonical detail names %v, want %s", f.canonical.GetFieldViolations(), tc.field)
					}
					if n := len(g.fakes["messages"].requests()); n != 0 {
						t.Errorf("a refused request reached the upstream %d times", n)
					}
				})
			}
		}
	}
}

// TestConnectKeys: keys as Authorization: Bearer; a missing or wrong key
// is Unauthenticated, a model outside the key's list PermissionDenied, and
// the model list is the key's.
func TestConnectKeys(t *testing.T) {
	g := startGateway(t, gwExtra{})
	req := func() *parleyv1.Request { return canonicalRequest(t, "text", "via-generate_content") }
	for _, protocol := range rpcProtocols {
		t.Run(protocol, func(t *testing.T) {
			for _, key := range []string{"", "sk-wrong-key"} {
				c := newRPC(t, g.url, key, protocol)
				_, _, err := c.generate(t.Context(), req(), false)
				if f := failureOf(t, err); f.code != connect.CodeUnauthenticated {
					t.Errorf("key %q: %s, want unauthenticated", key, f.code)
				}
				_, err = c.gen.ListModels(t.Context(), connect.NewRequest(&parleyv1.ListModelsRequest{}))
				if connect.CodeOf(err) != connect.CodeUnauthenticated {
					t.Errorf("key %q lists models: %v", key, err)
				}
			}
			narrow := newRPC(t, g.url, "sk-narrow-key-0001", protocol)
			_, _, err := narrow.generate(t.Context(), req(), true)
			if f := failureOf(t, err); f.code != connect.CodePermissionDenied || len(f.violations) == 0 || f.violations[0].GetField() != "request.model" {
				t.Errorf("a model outside the key's list: %s %v", f.code, f.violations)
			}
			res, err := narrow.gen.ListModels(t.Context(), connect.NewRequest(&parleyv1.ListModelsRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range res.Msg.GetModels() {
				names = append(names, m.GetId())
			}
			if !slices.Equal(names, []string{"via-messages"}) {
				t.Errorf("the narrow key lists %v, want [via-messages]", names)
			}
			all, err := newRPC(t, g.url, clientKey, protocol).gen.ListModels(t.Context(), connect.NewRequest(&parleyv1.ListModelsRequest{}))
			if err != nil || len(all.Msg.GetModels()) != len(dialectList) {
				t.Errorf("the full key lists %v (%v)", all.Msg.GetModels(), err)
			}
		})
	}
}

// TestConnectCountTokens: the upstream counts where its dialect can (42 in
// every recording), else Parley estimates and says so.
func TestConnectCountTokens(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, protocol := range rpcProtocols {
		c := newRPC(t, g.url, clientKey, protocol)
		for _, b := range dialectList {
			t.Run(protocol+"/via_"+b.name, func(t *testing.T) {
				g.fakes[b.name].set("text", nil)
				res, err := c.gen.CountTokens(t.Context(), connect.NewRequest(&parleyv1.CountTokensRequest{Request: canonicalRequest(t, "text", "via-"+b.name)}))
				if err != nil {
					t.Fatal(err)
				}
				n := res.Msg.GetCount()
				_, counts := countReplies[b.name]
				switch {
				case counts && (n.GetInputTokens() != 42 || n.GetEstimated()):
					t.Errorf("count %v, want the upstream's 42", n)
				case !counts && (!n.GetEstimated() || n.GetInputTokens() <= 0):
					t.Errorf("count %v, want a positive estimate marked estimated", n)
				}
			})
		}
	}
}

// TestConnectProbes: standard tools find the services by gRPC reflection
// and probe them by gRPC health checking, without a key.
func TestConnectProbes(t *testing.T) {
	g := startGateway(t, gwExtra{})
	hc := h2cClient()
	defer hc.CloseIdleConnections()
	rc := grpcreflect.NewClient(hc, g.url, connect.WithGRPC())
	st := rc.NewStream(t.Context())
	defer func() { _, _ = st.Close() }()
	names, err := st.ListServices()
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, n := range names {
		listed = append(listed, string(n))
	}
	for _, want := range []string{"parley.v1.GenerationService", "parley.v1.TaskService"} {
		if !slices.Contains(listed, want) {
			t.Errorf("reflection lists %v, without %s", listed, want)
		}
	}
	files, err := st.FileContainingSymbol("parley.v1.GenerationService")
	if err != nil || len(files) == 0 {
		t.Fatalf("reflection does not describe the service: %v", err)
	}
	var methods []string
	for _, m := range files[0].GetService()[0].GetMethod() {
		methods = append(methods, m.GetName())
	}
	if !slices.Equal(methods, []string{"Generate", "StreamGenerate", "CountTokens", "ListModels"}) || !files[0].GetService()[0].GetMethod()[1].GetServerStreaming() {
		t.Errorf("reflection describes the methods %v", methods)
	}

	for _, svc := range []string{"", "parley.v1.GenerationService", "parley.v1.TaskService", "no.such.Service"} {
		resp, err := http.Post(g.url+"/grpc.health.v1.Health/Check", "application/json", strings.NewReader(`{"service":"`+svc+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		want, status := `SERVING"`, http.StatusOK
		if svc == "no.such.Service" {
			want, status = `"not_found"`, http.StatusNotFound
		}
		if resp.StatusCode != status || !strings.Contains(string(body), want) {
			t.Errorf("health of %q: %d %s, want %d and %s", svc, resp.StatusCode, body, status, want)
		}
	}
}
