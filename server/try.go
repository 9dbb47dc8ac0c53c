package server

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// The console's try-it view: POST /admin/v1/try sends one prompt to a
// model as a client of the chosen dialect sends it (the dialect's own
// request, through the dialect's own endpoint, as the key "console"), and
// streams back, as server-sent events, what happened on both sides:
//
//	event: request           the client request: {"dialect", "method", "path", "body"}
//	event: upstream_request  each upstream request as it went: {"path", "body"}
//	event: reply             the reply's status and content type: {"status", "content_type"}
//	event: chunk             the reply's bytes as they came, as a JSON string
//	event: done              {"status", "duration_ms"}
//
// The translation is made visible: the client's dialect on one side, the
// upstream's on the other. Upstream headers and query strings are never
// shown (they carry the upstream's key).

// tryCall marks an internal request of the try-it view: its caller is the
// console (no key is read), and its upstream requests are reported.
type tryCall struct {
	sent func(path string, body []byte)
}

type tryKey struct{}

func tryOf(ctx context.Context) *tryCall {
	t, _ := ctx.Value(tryKey{}).(*tryCall)
	return t
}

// consolePrincipal is who a try-it request runs as.
var consolePrincipal = &principal{name: "console"}

// tryInput is the body of POST /admin/v1/try.
type tryInput struct {
	Model   string `json:"model"`
	Dialect string `json:"dialect"`
	Prompt  string `json:"prompt"`
}

// maxTryPrompt bounds a try-it prompt.
const maxTryPrompt = 32 << 10

func (s *Server) adminTry(w http.ResponseWriter, r *http.Request) {
	start, id := time.Now(), store.NewRequestID()
	w.Header().Set("X-Request-Id", id)
	err := s.adminAuth(r.Header)
	if errors.Is(err, errAdminOff) {
		http.NotFound(w, r)
		return
	}
	var in tryInput
	if err == nil {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		err = decodeBody(r, &in)
	}
	var d *translate.Dialect
	if err == nil {
		names := make([]string, 0, len(s.tryable))
		for _, t := range s.tryable {
			names = append(names, t.Name())
		}
		switch i := slices.IndexFunc(s.tryable, func(t *translate.Dialect) bool { return t.Name() == in.Dialect }); {
		case in.Model == "":
			err = translate.Invalid("model", "is required")
		case strings.TrimSpace(in.Prompt) == "":
			err = translate.Invalid("prompt", "is required")
		case len(in.Prompt) > maxTryPrompt:
			err = translate.Invalid("prompt", "is longer than %d bytes", maxTryPrompt)
		case i < 0:
			err = translate.Invalid("dialect", "%q is not one of %s", in.Dialect, strings.Join(names, ", "))
		default:
			d = s.tryable[i]
		}
	}
	if err != nil {
		status := adminError(w, err)
		s.log.Info("admin", "id", id, "method", r.Method, "path", r.URL.Path, "status", status)
		return
	}
	tr := d.Try(in.Model, in.Prompt)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &tryStream{rc: http.NewResponseController(w), ev: sse.NewWriter(w)}
	out.send("request", map[string]any{"dialect": d.Name(), "method": tr.Method, "path": tr.Path, "body": rawOrText(tr.Body)})

	ctx := context.WithValue(r.Context(), tryKey{}, &tryCall{sent: func(path string, body []byte) {
		out.send("upstream_request", map[string]any{"path": path, "body": rawOrText(body)})
	}})
	req, _ := http.NewRequestWithContext(ctx, tr.Method, tr.Path, bytes.NewReader(tr.Body))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = r.RemoteAddr
	tw := &tryWriter{out: out, h: http.Header{}}
	s.mux.ServeHTTP(tw, req)
	if tw.status == 0 {
		tw.WriteHeader(http.StatusOK)
	}
	out.send("done", map[string]any{"status": tw.status, "duration_ms": time.Since(start).Milliseconds()})
	s.log.Info("admin", "id", id, "method", r.Method, "path", r.URL.Path, "status", http.StatusOK, "try_status", tw.status,
		"duration", time.Since(start).Round(time.Microsecond))
}

// rawOrText is a body as JSON when it is JSON, else as text.
func rawOrText(b []byte) any {
	if jsontext.Value(b).IsValid() {
		return jsontext.Value(b)
	}
	return string(b)
}

// tryStream writes the try-it view's events, one at a time (the upstream
// request is reported from the request's own goroutine, the reply from
// the handler's; they never overlap, but the lock costs nothing here).
type tryStream struct {
	mu sync.Mutex
	rc *http.ResponseController
	ev *sse.Writer
}

func (t *tryStream) send(event string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ev.Event(event, data) == nil {
		_ = t.rc.Flush()
	}
}

// tryWriter is the response writer of the internal request: its status
// and bytes become the view's reply and chunk events as they come.
type tryWriter struct {
	out    *tryStream
	h      http.Header
	status int
}

func (t *tryWriter) Header() http.Header { return t.h }

func (t *tryWriter) WriteHeader(status int) {
	if t.status != 0 {
		return
	}
	t.status = status
	t.out.send("reply", map[string]any{"status": status, "content_type": t.h.Get("Content-Type")})
}

func (t *tryWriter) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.WriteHeader(http.StatusOK)
	}
	t.out.send("chunk", string(p))
	return len(p), nil
}

// Flush lets the handler's flushes through: each chunk is sent at once.
func (t *tryWriter) Flush() {}

var _ http.Flusher = (*tryWriter)(nil)

// consoleCall reports whether the request is the try-it view's, and the
// principal it runs as.
func consoleCall(r *http.Request) (*principal, *tryCall) {
	t := tryOf(r.Context())
	if t == nil {
		return nil, nil
	}
	return consolePrincipal, t
}
