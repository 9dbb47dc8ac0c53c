package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/gen/parley/v1/parleyv1connect"
	"github.com/parleyhq/parley/server"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlite"
)

// adminDo calls the admin API.
func adminDo(t *testing.T, gw, method, path, key, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, gw+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	} else {
		m = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, m, resp.Header
}

// TestAdminKeys creates, lists, changes and revokes a managed key through
// the admin API, and uses it through a client dialect in between: the
// secret is shown once, limits set by PATCH hold at once, a revoked key is
// refused. Bad bodies get 400 naming the field and create nothing; client
// keys get 401. (issue 20)
func TestAdminKeys(t *testing.T) {
	g, st := governedGateway(t, "")
	status, created, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey,
		`{"name":"team-a","models":["via-*"],"metadata":{"team":"a","owner":"ana"},"limits":{"requests_per_minute":100,"budget":{"usd":5,"per":"day"}}}`)
	secret, _ := created["key"].(string)
	if status != http.StatusCreated || !strings.HasPrefix(secret, "prly_") || created["hint"] != secret[:11] {
		t.Fatalf("create: %d %v", status, created)
	}
	if resp, body := dialectCall(t, g.url, "responses", secret, "via-chat_completions"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the new key: %d %s", resp.StatusCode, body)
	}
	status, list, _ := adminDo(t, g.url, "GET", "/admin/v1/keys", adminKey, "")
	data, _ := list["data"].([]any)
	if status != http.StatusOK || len(data) != 1 || strings.Contains(fmt.Sprint(list), secret) {
		t.Fatalf("list: %d %v (the secret must not be listed)", status, list)
	}
	// A limit set by PATCH holds at once on this replica, counting the
	// request already made this minute.
	status, patched, _ := adminDo(t, g.url, "PATCH", "/admin/v1/keys/team-a", adminKey, `{"limits":{"requests_per_minute":2},"metadata":null}`)
	// A merge patch: the budget the patch does not name stays.
	if lim, _ := patched["limits"].(map[string]any); status != http.StatusOK || patched["metadata"] != nil || lim["requests_per_minute"] != float64(2) || lim["budget"] == nil {
		t.Fatalf("patch: %d %v", status, patched)
	}
	if resp, _ := dialectCall(t, g.url, "responses", secret, "via-chat_completions"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the second request under the new limit: %d", resp.StatusCode)
	}
	if resp, _ := dialectCall(t, g.url, "responses", secret, "via-chat_completions"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the third request under a limit of 2: %d", resp.StatusCode)
	}
	status, revoked, _ := adminDo(t, g.url, "DELETE", "/admin/v1/keys/team-a", adminKey, "")
	if status != http.StatusOK || revoked["revoked_at"] == nil {
		t.Fatalf("revoke: %d %v", status, revoked)
	}
	if resp, _ := dialectCall(t, g.url, "messages", secret, "via-messages"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a revoked key: %d", resp.StatusCode)
	}
	if status, _, _ := adminDo(t, g.url, "DELETE", "/admin/v1/keys/team-a", adminKey, ""); status != http.StatusNotFound {
		t.Errorf("revoking twice: %d", status)
	}
	if status, _, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey, `{"name":"team-a"}`); status != http.StatusConflict {
		t.Errorf("a revoked key's name again: %d", status)
	}
	if status, _, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey, `{"name":"test"}`); status != http.StatusConflict {
		t.Errorf("the name of a configured key: %d", status)
	}

	for _, tc := range []struct{ body, field string }{
		{`{"name":""}`, "name"},
		{`{"name":"has space"}`, "name"},
		{`{"name":"x","limits":{"requests_per_minute":-1}}`, "limits.requests_per_minute"},
		{`{"name":"x","limits":{"requests_per_minute":"many"}}`, "limits.requests_per_minute"},
		{`{"name":"x","limits":{"budget":{"usd":5}}}`, "limits.budget.per"},
		{`{"name":"x","limits":{"budget":{"usd":5,"per":"year"}}}`, "limits.budget.per"},
		{`{"name":"x","limits":{"budget":{"usd":5,"tokens":5,"per":"day"}}}`, "limits.budget"},
		{`{"name":"x","models":["[bad"]}`, "models[0]"},
		{`{"name":"x","colour":"red"}`, "colour"},
		{`{"name":"x","key":"prly_chosen"}`, "key"},
		{`{"name":"x","expires_at":"tomorrow"}`, "expires_at"},
	} {
		status, body, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey, tc.body)
		e, _ := body["error"].(map[string]any)
		if status != http.StatusBadRequest || e["field"] != tc.field {
			t.Errorf("%s: %d %v, want 400 naming %s", tc.body, status, body, tc.field)
		}
	}
	if status, body, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey, `{"name":`); status != http.StatusBadRequest {
		t.Errorf("a truncated body: %d %v", status, body)
	}
	if ks, _ := st.ManagedKeys(context.Background()); len(ks) != 1 {
		t.Errorf("bad bodies created keys: %d keys", len(ks))
	}
	// Only admin keys.
	for _, key := range []string{"", clientKey, "admin-0123456789abcdeX"} {
		if status, _, _ := adminDo(t, g.url, "GET", "/admin/v1/keys", key, ""); status != http.StatusUnauthorized {
			t.Errorf("key %q: %d, want 401", key, status)
		}
	}
}

// TestAdminOff answers 404 under /admin/ when no admin key is configured.
func TestAdminOff(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, p := range []string{"/admin/v1/keys", "/admin/v1/usage", "/admin/"} {
		if status, _, _ := adminDo(t, g.url, "GET", p, clientKey, ""); status != http.StatusNotFound {
			t.Errorf("%s: %d", p, status)
		}
	}
}

// TestAdminUsage reads the ledger back grouped, as JSON and as CSV, with
// bad queries named. (issue 20)
func TestAdminUsage(t *testing.T) {
	g, _ := governedGateway(t, "")
	for range 3 {
		dialectCall(t, g.url, "messages", clientKey, "via-messages")
	}
	dialectCall(t, g.url, "chat_completions", clientKey, "via-responses")
	deadline := time.Now().Add(5 * time.Second)
	var body map[string]any
	for time.Now().Before(deadline) {
		var status int
		status, body, _ = adminDo(t, g.url, "GET", "/admin/v1/usage?group_by=key,model,day", adminKey, "")
		if status != http.StatusOK {
			t.Fatalf("usage: %d %v", status, body)
		}
		if data, _ := body["data"].([]any); len(data) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	data, _ := body["data"].([]any)
	if len(data) != 2 {
		t.Fatalf("usage = %v", body)
	}
	first := data[0].(map[string]any)
	if first["key"] != "test" || first["model"] != "via-messages" || first["requests"] != float64(3) || first["input_tokens"] != float64(36) ||
		first["day"] != time.Now().UTC().Format(time.DateOnly) || first["upstream"] != nil || first["status"] != nil {
		t.Errorf("first row = %v", first)
	}
	req, _ := http.NewRequest("GET", g.url+"/admin/v1/usage?group_by=model", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("Accept", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" || len(lines) != 3 ||
		lines[0] != "model,requests,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,cost_usd,duration_ms" ||
		!strings.HasPrefix(lines[1], "via-messages,3,36,15,") {
		t.Errorf("CSV = %s", raw)
	}
	for _, q := range []string{"group_by=colour", "from=yesterday", "status=abc", "from=2026-01-02&to=2026-01-01"} {
		status, body, _ := adminDo(t, g.url, "GET", "/admin/v1/usage?"+q, adminKey, "")
		e, _ := body["error"].(map[string]any)
		if status != http.StatusBadRequest || e["field"] == nil {
			t.Errorf("%s: %d %v", q, status, body)
		}
	}
}

// TestAdminService drives the Connect AdminService: create with a secret
// shown once, update by field mask, usage, revoke; bad requests name the
// field; client keys are refused. A Connect generation call over its key's
// limit gets resource_exhausted. (issue 20)
func TestAdminService(t *testing.T) {
	g, _ := governedGateway(t, "")
	ctx := context.Background()
	auth := func(key string) connect.ClientOption {
		return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, r connect.AnyRequest) (connect.AnyResponse, error) {
				r.Header().Set("Authorization", "Bearer "+key)
				return next(ctx, r)
			}
		}))
	}
	c := parleyv1connect.NewAdminServiceClient(http.DefaultClient, g.url, auth(adminKey))
	created, err := c.CreateKey(ctx, connect.NewRequest(&parleyv1.CreateKeyRequest{Key: &parleyv1.ManagedKey{
		Name: "rpc", Limits: &parleyv1.KeyLimits{RequestsPerMinute: proto.Int64(1)},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	secret := created.Msg.GetKey().GetKey()
	if !strings.HasPrefix(secret, "prly_") {
		t.Fatalf("created = %v", created.Msg)
	}
	gen := parleyv1connect.NewGenerationServiceClient(http.DefaultClient, g.url, auth(secret))
	req := &parleyv1.GenerateRequest{Request: &parleyv1.Request{Model: "via-messages", Messages: []*parleyv1.Message{{
		Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "hi"}}}},
	}}}}
	if _, err := gen.Generate(ctx, connect.NewRequest(req)); err != nil {
		t.Fatalf("the first call: %v", err)
	}
	_, err = gen.Generate(ctx, connect.NewRequest(req))
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(err.Error(), "requests_per_minute") {
		t.Fatalf("the second call over 1 per minute: %v", err)
	}
	up, err := c.UpdateKey(ctx, connect.NewRequest(&parleyv1.UpdateKeyRequest{
		Key:        &parleyv1.ManagedKey{Name: "rpc", Metadata: map[string]string{"team": "b"}},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"metadata"}},
	}))
	if err != nil || up.Msg.GetKey().GetMetadata()["team"] != "b" || up.Msg.GetKey().GetLimits().GetRequestsPerMinute() != 1 {
		t.Fatalf("update: %v %v", up, err)
	}
	_, err = c.UpdateKey(ctx, connect.NewRequest(&parleyv1.UpdateKeyRequest{
		Key: &parleyv1.ManagedKey{Name: "rpc"}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"name"}},
	}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("a mask naming name: %v", err)
	}
	_, err = c.CreateKey(ctx, connect.NewRequest(&parleyv1.CreateKeyRequest{Key: &parleyv1.ManagedKey{Name: "x", Limits: &parleyv1.KeyLimits{
		Budget: &parleyv1.Budget{Usd: proto.Float64(5)},
	}}}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "key.limits.budget.per") {
		t.Errorf("a budget without a period: %v", err)
	}
	list, err := c.ListKeys(ctx, connect.NewRequest(&parleyv1.ListKeysRequest{}))
	if err != nil || len(list.Msg.GetKeys()) != 1 || list.Msg.GetKeys()[0].GetKey() != "" {
		t.Fatalf("list: %v %v", list, err)
	}
	if _, err := c.RevokeKey(ctx, connect.NewRequest(&parleyv1.RevokeKeyRequest{Name: "rpc"})); err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(ctx, connect.NewRequest(req)); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("a revoked key: %v", err)
	}
	var usage *connect.Response[parleyv1.QueryUsageResponse]
	waitUntil(t, func() bool {
		usage, err = c.QueryUsage(ctx, connect.NewRequest(&parleyv1.QueryUsageRequest{
			StartTime: timestamppb.New(time.Now().Add(-time.Hour)), GroupBy: []string{"key", "status"}, Key: "rpc",
		}))
		return err == nil && len(usage.Msg.GetRows()) == 2
	})
	if rows := usage.Msg.GetRows(); rows[0].GetStatus() != 200 || rows[0].GetRequests() != 1 || rows[1].GetStatus() != 429 {
		t.Errorf("usage = %v", rows)
	}
	client := parleyv1connect.NewAdminServiceClient(http.DefaultClient, g.url, auth(clientKey))
	if _, err := client.ListKeys(ctx, connect.NewRequest(&parleyv1.ListKeysRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("a client key on the admin service: %v", err)
	}
}

// TestGovernanceMetrics checks the Prometheus series: tokens and cost by
// key name and model, refusals by key and limit, never a secret; the
// ledger's cost is the model's pricing of the upstream's usage. (issue 20)
func TestGovernanceMetrics(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	g := startGateway(t, gwExtra{
		keys:   "  - {name: metered, key: sk-metered-0123456789, limits: {budget: {usd: 0.00001, per: month}}}\n",
		models: "  - {name: priced, upstream: fake-messages, upstream_model: claude-sonnet-4-5, pricing: {input: 3.00, output: 15.00}}\n",
		options: func(o *server.Options) {
			o.Ledger, o.LedgerFlush = st, 10*time.Millisecond
		},
	})
	if resp, body := dialectCall(t, g.url, "chat_completions", "sk-metered-0123456789", "priced"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the first request: %d %s", resp.StatusCode, body)
	}
	// 12 × $3 + 5 × $15 per million: $0.000111, over the budget of $0.00001.
	if resp, body := dialectCall(t, g.url, "chat_completions", "sk-metered-0123456789", "priced"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the second request over a spent budget: %d %s", resp.StatusCode, body)
	}
	resp, err := http.Get(g.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	metrics := string(raw)
	for _, want := range []string{
		`parley_key_tokens_total{key="metered",kind="input",model="priced"} 12`,
		`parley_key_tokens_total{key="metered",kind="output",model="priced"} 5`,
		`parley_key_cost_usd_total{key="metered",model="priced"} 0.000111`,
		`parley_limit_refusals_total{key="metered",limit="budget"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(metrics, "parley_key_"))
		}
	}
	if strings.Contains(metrics, "sk-metered") {
		t.Error("/metrics holds a client key")
	}
	if err := g.server.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Usage(context.Background(), store.UsageQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), Status: http.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].CostNanos != 111_000 {
		t.Errorf("the ledger's cost = %+v, want 111000 nano-USD", rows)
	}
}
