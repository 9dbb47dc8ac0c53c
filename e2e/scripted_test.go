package e2e_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// scripted is an upstream service of one dialect whose answers a test
// writes in canonical form. It speaks its dialect as the service does,
// through Parley's client side of the dialect (whose output the SDK tests
// pin), whole or streamed as asked, and keeps every body it was sent.
type scripted struct {
	name   string
	client translate.Client
	url    string
	reply  func(*parleyv1.Request) *parleyv1.Response
	mu     sync.Mutex
	bodies []string
	reqs   []*parleyv1.Request
}

func newScripted(t *testing.T, name string, c translate.Client, reply func(*parleyv1.Request) *parleyv1.Response) *scripted {
	t.Helper()
	s := &scripted{name: name, client: c, reply: reply}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// last is the body of the latest request, and that request decoded.
func (s *scripted) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) == 0 {
		return ""
	}
	return s.bodies[len(s.bodies)-1]
}

func (s *scripted) lastRequest() *parleyv1.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return nil
	}
	return s.reqs[len(s.reqs)-1]
}

// configLine is the upstream's entry in a configuration file.
func (s *scripted) configLine() string {
	return "  - {name: " + s.name + ", dialect: " + translate.DialectName(s.client.Dialect()) + ", base_url: " + s.url + ", api_key: sk-" + s.name + "-0123456789, max_retries: 0}\n"
}

func (s *scripted) serve(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	in := &translate.Incoming{Header: hr.Header, Query: hr.URL.Query(), Body: body}
	if rest, ok := strings.CutPrefix(hr.URL.Path, "/v1beta/models/"); ok {
		model, method, _ := strings.Cut(rest, ":")
		in.Model, in.Stream = model, method == "streamGenerateContent"
	}
	req, err := s.client.DecodeRequest(in)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(body))
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := s.reply(req)
	var out []byte
	if req.GetStream() {
		var buf bytes.Buffer
		sw := sse.NewWriter(&buf)
		enc := s.client.NewStreamEncoder(req)
		for _, ev := range translate.ReplayResponse(resp) {
			if err = enc.Encode(sw, ev); err != nil {
				break
			}
		}
		if err == nil {
			err = sw.Close()
		}
		out = buf.Bytes()
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		out, err = s.client.EncodeResponse(req, resp)
		w.Header().Set("Content-Type", "application/json")
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(out)
}

// answer is a finished reply holding parts.
func answer(req *parleyv1.Request, parts []*parleyv1.Part, finish parleyv1.FinishReason) *parleyv1.Response {
	in, out := int64(20), int64(9)
	return &parleyv1.Response{
		Id: "resp_scripted", Model: req.GetModel(), CreatedAt: timestamppb.New(time.Unix(1764000000, 0)),
		Status:     parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED,
		Candidates: []*parleyv1.Candidate{{Parts: parts, FinishReason: finish}},
		Usage:      &parleyv1.Usage{InputTokens: &in, OutputTokens: &out, TotalTokens: new(in + out)},
	}
}
