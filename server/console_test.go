package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/server"
	"github.com/parleyhq/parley/store/sqlite"
)

// TestConsoleAPI checks the admin endpoints the console reads: info, the
// live figures (in flight, upstream health), the models and their routes,
// usage by hour; and that the console's page is served with a policy that
// keeps it to its own origin. (issue 21)
func TestConsoleAPI(t *testing.T) {
	g, _ := governedGateway(t, "")
	for range 3 {
		dialectCall(t, g.url, "messages", clientKey, "via-messages")
	}
	status, info, _ := adminDo(t, g.url, "GET", "/admin/v1/info", adminKey, "")
	if status != http.StatusOK || info["open"] != false || info["ledger"] != true || info["managed_keys"] != true {
		t.Errorf("info: %d %v", status, info)
	}
	if status, _, _ := adminDo(t, g.url, "GET", "/admin/v1/info", "", ""); status != http.StatusUnauthorized {
		t.Errorf("info without a key on a gateway with keys: %d", status)
	}
	status, stats, _ := adminDo(t, g.url, "GET", "/admin/v1/stats", adminKey, "")
	ups, _ := stats["upstreams"].([]any)
	var seen bool
	for _, u := range ups {
		u := u.(map[string]any)
		if u["name"] == "fake-messages" {
			seen = true
			lat, _ := u["latency_ms"].(map[string]any)
			if u["requests"] != float64(3) || u["errors"] != float64(0) || u["dialect"] != "messages" || lat["p50"] == nil {
				t.Errorf("fake-messages health = %v", u)
			}
		} else if u["requests"] != float64(0) || u["latency_ms"] != nil {
			t.Errorf("an upstream nobody called: %v", u)
		}
	}
	if status != http.StatusOK || !seen || stats["in_flight"].(map[string]any)["requests"] != float64(0) {
		t.Errorf("stats: %d %v", status, stats)
	}
	status, models, _ := adminDo(t, g.url, "GET", "/admin/v1/models", adminKey, "")
	data, _ := models["data"].([]any)
	if raw, _ := json.Marshal(models); status != http.StatusOK || len(data) != 4 || strings.Contains(string(raw), "up-key-") {
		t.Errorf("models: %d %v", status, models)
	}
	first := data[0].(map[string]any)
	route := first["routes"].([]any)[0].(map[string]any)
	if first["name"] != "via-chat_completions" || route["upstream"] != "fake-chat_completions" || route["dialect"] != "chat_completions" || route["upstream_model"] != "gpt-4.1" {
		t.Errorf("the first model = %v", first)
	}
	var rows []any
	waitUntil(t, func() bool {
		_, usage, _ := adminDo(t, g.url, "GET", "/admin/v1/usage?group_by=hour", adminKey, "")
		rows, _ = usage["data"].([]any)
		return len(rows) == 1 && rows[0].(map[string]any)["requests"] == float64(3)
	})
	hour, _ := time.Parse(time.RFC3339, rows[0].(map[string]any)["hour"].(string))
	if now := time.Now().UTC(); !hour.Equal(now.Truncate(time.Hour)) && !hour.Equal(now.Add(-time.Minute).Truncate(time.Hour)) {
		t.Errorf("the hour = %v", rows[0])
	}

	resp, err := http.Get(g.url + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "<title>") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("/console/: %d %v %.200s", resp.StatusCode, resp.Header, page)
	}
	// A browser that has the page revalidates it for nothing.
	req, _ := http.NewRequest("GET", g.url+"/console/", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = again.Body.Close()
	if resp.Header.Get("ETag") == "" || again.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: ETag %q, then %d", resp.Header.Get("ETag"), again.StatusCode)
	}
}

// TestConsoleOpen: a gateway with no key of any kind (loopback only) opens
// its admin API, and so its console, without a sign-in. (issue 21)
// A managed key presented to an open gateway still names the caller and
// brings its limits.
func TestConsoleOpen(t *testing.T) {
	cfg, err := config.Parse("open.yaml", []byte("upstreams:\n  - {name: e, dialect: echo}\nmodels:\n  - {name: echo, upstream: e}\n"),
		func(string) (string, bool) { return "", false }, dialects.All().Names())
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.FromConfig(cfg, dialects.All(), dispatch.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	sv := server.New(server.Options{Config: cfg, Dispatcher: d, Dialects: dialects.All(), Keys: st, Ledger: st})
	t.Cleanup(func() { _ = sv.Close(context.Background()) })
	url := startServer(t, sv).URL
	status, info, _ := adminDo(t, url, "GET", "/admin/v1/info", "", "")
	if status != http.StatusOK || info["open"] != true {
		t.Fatalf("info on an open gateway: %d %v", status, info)
	}
	status, created, _ := adminDo(t, url, "POST", "/admin/v1/keys", "", `{"name":"mine","limits":{"requests_per_minute":1}}`)
	secret, _ := created["key"].(string)
	if status != http.StatusCreated || secret == "" {
		t.Fatalf("create on an open gateway: %d %v", status, created)
	}
	body := `{"model":"echo","messages":[{"role":"user","content":"hi"}]}`
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("request %d with the managed key: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	// Without a key, anyone may still call.
	if status, out := postBody(t, url, "/v1/chat/completions", []byte(body)); status != http.StatusOK {
		t.Errorf("an anonymous request: %d %s", status, out)
	}
}

// TestConsoleTry sends a prompt through one dialect to an upstream of
// another and reads back both sides as they went: the client's request,
// the upstream's request (translated, without its key), and the reply in
// the client's dialect, streamed. (issue 21)
func TestConsoleTry(t *testing.T) {
	g, _ := governedGateway(t, "")
	req, _ := http.NewRequest("POST", g.url+"/admin/v1/try", strings.NewReader(`{"model":"via-responses","dialect":"messages","prompt":"Say hello."}`))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	events := map[string][]string{}
	var order []string
	for block := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n\n") {
		var name, data string
		for line := range strings.SplitSeq(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = v
			}
		}
		events[name] = append(events[name], data)
		if len(order) == 0 || order[len(order)-1] != name {
			order = append(order, name)
		}
	}
	if resp.StatusCode != http.StatusOK || strings.Join(order, ",") != "request,upstream_request,reply,chunk,done" {
		t.Fatalf("%d, events in order %v:\n%s", resp.StatusCode, order, raw)
	}
	var up struct {
		Path string
		Body map[string]any
	}
	if err := json.Unmarshal([]byte(events["upstream_request"][0]), &up); err != nil || up.Path != "/v1/responses" || up.Body["model"] != "gpt-5" {
		t.Errorf("the upstream request = %s (%v)", events["upstream_request"][0], err)
	}
	if strings.Contains(string(raw), "up-key-") {
		t.Error("the try-it view shows an upstream key")
	}
	var reply strings.Builder
	for _, c := range events["chunk"] {
		var s string
		_ = json.Unmarshal([]byte(c), &s)
		reply.WriteString(s)
	}
	if !strings.Contains(reply.String(), "event: message_start") || !strings.Contains(reply.String(), "event: message_stop") {
		t.Errorf("the reply is not a messages stream:\n%s", reply.String())
	}
	if !strings.Contains(events["done"][0], `"status":200`) {
		t.Errorf("done = %s", events["done"][0])
	}
	for _, tc := range []struct{ body, field string }{
		{`{"model":"via-responses","dialect":"klingon","prompt":"hi"}`, "dialect"},
		{`{"model":"","dialect":"messages","prompt":"hi"}`, "model"},
		{`{"model":"via-responses","dialect":"messages","prompt":" "}`, "prompt"},
	} {
		status, body, _ := adminDo(t, g.url, "POST", "/admin/v1/try", adminKey, tc.body)
		if e, _ := body["error"].(map[string]any); status != http.StatusBadRequest || e["field"] != tc.field {
			t.Errorf("%s: %d %v", tc.body, status, body)
		}
	}
	if status, _, _ := adminDo(t, g.url, "POST", "/admin/v1/try", clientKey, `{"model":"via-responses","dialect":"messages","prompt":"hi"}`); status != http.StatusUnauthorized {
		t.Errorf("a client key: %d", status)
	}
}

// TestAdminTasks lists recent music tasks with their callbacks, newest
// first, paging back; a hook's address shows its host only. (issue 21)
func TestAdminTasks(t *testing.T) {
	g := startMusic(t, musicOpts{admin: true, allowPrivate: true})
	rc := newReceiver(t, 0)
	first := g.submit(t, "/songgen/submit/lyrics", aliceKey, `{"prompt":"rain"}`)
	g.await(t, aliceKey, first)
	second := g.submit(t, "/songgen/submit/lyrics", bobKey, `{"prompt":"snow","notify_hook":"`+rc.srv.URL+`/hook?token=secret-token"}`)
	g.await(t, bobKey, second)
	rc.waitDelivered(t)
	var page map[string]any
	waitUntil(t, func() bool {
		_, page, _ = adminDo(t, g.url, "GET", "/admin/v1/tasks?limit=1", adminKey, "")
		data, _ := page["data"].([]any)
		cb, _ := data[0].(map[string]any)["callback"].(map[string]any)
		return cb["state"] == "done"
	})
	data := page["data"].([]any)
	row := data[0].(map[string]any)
	cb := row["callback"].(map[string]any)
	if len(data) != 1 || row["id"] != second || row["owner"] != "bob" || row["action"] != "lyrics" || row["status"] != "success" ||
		row["progress"] != float64(100) || cb["attempts"] != float64(1) || page["next_before"] == nil {
		t.Errorf("the first page = %v", page)
	}
	if raw, _ := json.Marshal(page); strings.Contains(string(raw), "secret-token") || !strings.Contains(string(raw), strings.TrimPrefix(rc.srv.URL, "http://")) {
		t.Errorf("the callback shows more than the hook's host: %s", raw)
	}
	status, older, _ := adminDo(t, g.url, "GET", "/admin/v1/tasks?limit=1&before="+page["next_before"].(string), adminKey, "")
	data, _ = older["data"].([]any)
	if status != http.StatusOK || len(data) != 1 || data[0].(map[string]any)["id"] != first || data[0].(map[string]any)["callback"] != nil {
		t.Errorf("the second page = %d %v", status, older)
	}
	for _, q := range []string{"limit=0", "limit=x", "before=yesterday"} {
		if status, _, _ := adminDo(t, g.url, "GET", "/admin/v1/tasks?"+q, adminKey, ""); status != http.StatusBadRequest {
			t.Errorf("%s: %d", q, status)
		}
	}
}
