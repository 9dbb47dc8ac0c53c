package cloudtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
)

// Vertex fakes Vertex AI for one project and location: Gemini models
// (generateContent, streamGenerateContent with alt=sse, countTokens),
// Anthropic models (rawPredict, streamRawPredict, count-tokens), and the
// OAuth token endpoint of a service account it made.
type Vertex struct {
	*httptest.Server
	log
	Project, Location string
	// TokenLifetime is the expires_in of the tokens minted next; default
	// an hour.
	TokenLifetime atomic.Int64
	// Throttle refuses that many of the next model requests with 429
	// RESOURCE_EXHAUSTED.
	Throttle atomic.Int32

	key   *rsa.PrivateKey
	email string
	mu    sync.Mutex
	live  map[string]time.Time // token → expiry
	mints atomic.Int32
}

// NewVertex starts a fake of project's location.
func NewVertex(t testing.TB, project, location string) *Vertex {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	v := &Vertex{Project: project, Location: location, key: key, email: "parley-test@" + project + ".iam.gserviceaccount.com", live: map[string]time.Time{}}
	v.TokenLifetime.Store(3600)
	v.Server = httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(v.Close)
	return v
}

// ServiceAccountFile writes the service account's key file, whose
// token_uri is the fake's token endpoint, into dir and returns its path.
func (v *Vertex) ServiceAccountFile(t testing.TB, dir string) string {
	der, err := x509.MarshalPKCS8PrivateKey(v.key)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	body, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     v.Project,
		"private_key_id": "fake-key-1",
		"private_key":    string(pemKey),
		"client_email":   v.email,
		"client_id":      "100000000000000000001",
		"token_uri":      v.URL + "/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "service-account.json")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Mints is how many tokens the token endpoint has minted.
func (v *Vertex) Mints() int { return int(v.mints.Load()) }

func googleError(w http.ResponseWriter, status int, name, msg string) {
	writeJSON(w, status, fmt.Appendf(nil, `{"error":{"code":%d,"message":%q,"status":%q}}`, status, msg, name))
}

func (v *Vertex) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v.add(r, body)
	if r.URL.Path == "/token" {
		v.token(w, r, body)
		return
	}
	if !v.authorized(r) {
		googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token.")
		return
	}
	if v.Throttle.Load() > 0 {
		v.Throttle.Add(-1)
		googleError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model.")
		return
	}
	prefix := "/v1/projects/" + v.Project + "/locations/" + v.Location + "/publishers/"
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
	if !ok || r.Method != http.MethodPost {
		googleError(w, http.StatusNotFound, "NOT_FOUND", "The requested resource was not found.")
		return
	}
	publisher, model, _ := strings.Cut(rest, "/models/")
	model, method, _ := strings.Cut(model, ":")
	model, _ = url.PathUnescape(model)
	switch publisher {
	case "google":
		v.gemini(w, r, model, method, body)
	case "anthropic":
		v.anthropic(w, model, method, body)
	default:
		googleError(w, http.StatusNotFound, "NOT_FOUND", "Publisher model not found.")
	}
}

// token mints an access token for a JWT bearer assertion signed by the
// service account's key, as Google's token endpoint does.
func (v *Vertex) token(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error":"unsupported_grant_type"}`))
		return
	}
	parts := strings.Split(form.Get("assertion"), ".")
	if len(parts) != 3 {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error":"invalid_grant","error_description":"Invalid JWT"}`))
		return
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(&v.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`))
		return
	}
	claimJSON, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
		Iat   int64  `json:"iat"`
	}
	if json.Unmarshal(claimJSON, &claims, json.RejectUnknownMembers(false)) != nil ||
		claims.Iss != v.email || claims.Aud != v.URL+"/token" || !strings.Contains(claims.Scope, "https://www.googleapis.com/auth/cloud-platform") ||
		claims.Exp-claims.Iat > 3600 || time.Unix(claims.Exp, 0).Before(time.Now()) {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error":"invalid_grant","error_description":"Invalid JWT claims."}`))
		return
	}
	n := v.mints.Add(1)
	life := v.TokenLifetime.Load()
	tok := fmt.Sprintf("ya29.fake-%d", n)
	v.mu.Lock()
	v.live[tok] = time.Now().Add(time.Duration(life) * time.Second)
	v.mu.Unlock()
	writeJSON(w, http.StatusOK, fmt.Appendf(nil, `{"access_token":%q,"expires_in":%d,"token_type":"Bearer"}`, tok, life))
}

// authorized reports whether the request carries a live token the fake
// minted.
func (v *Vertex) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	exp, ok := v.live[tok]
	return ok && time.Now().Before(exp)
}

func (v *Vertex) gemini(w http.ResponseWriter, r *http.Request, model, method string, body []byte) {
	if method == "countTokens" {
		m, err := members(body)
		if _, wrapped := m["generateContentRequest"]; err != nil || wrapped {
			googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", `Invalid JSON payload received. Unknown name "generateContentRequest": Cannot find field.`)
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"totalTokens":23,"totalBillableCharacters":80}`))
		return
	}
	stream := method == "streamGenerateContent"
	if !stream && method != "generateContent" {
		googleError(w, http.StatusNotFound, "NOT_FOUND", "unknown method")
		return
	}
	if stream && r.URL.Query().Get("alt") != "sse" {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "this fake streams only with alt=sse")
		return
	}
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Header: http.Header{}, Model: model, Stream: stream, Body: body})
	if err != nil {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
		return
	}
	req.Stream = stream
	out, err := render(generatecontent.Client{}, req, Reply("vertex", model, req), stream)
	if err != nil {
		googleError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
		return
	}
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (v *Vertex) anthropic(w http.ResponseWriter, model, method string, body []byte) {
	m, err := members(body)
	if err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "The request body is not valid JSON.")
		return
	}
	if string(m["anthropic_version"]) != `"vertex-2023-10-16"` {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "anthropic_version: vertex-2023-10-16 is required")
		return
	}
	delete(m, "anthropic_version")
	if model == "count-tokens" && method == "rawPredict" {
		if _, has := m["model"]; !has {
			anthropicError(w, http.StatusBadRequest, "invalid_request_error", "model: Field required")
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"input_tokens":29}`))
		return
	}
	if _, has := m["model"]; has {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "model: Extra inputs are not permitted")
		return
	}
	stream := method == "streamRawPredict"
	if !stream && method != "rawPredict" {
		googleError(w, http.StatusNotFound, "NOT_FOUND", "unknown method")
		return
	}
	if s := string(m["stream"]); stream != (s == "true") {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "stream must be true at streamRawPredict, and only there")
		return
	}
	m["model"] = []byte(fmt.Sprintf("%q", model))
	clean, _ := jsonMarshal(m)
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Header: http.Header{}, Body: clean})
	if err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if _, bad := foreignThinking("vertex", model, req); bad {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "messages: Invalid `signature` in `thinking` block")
		return
	}
	if unthoughtToolTurn(req) {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", unthoughtMessage(req))
		return
	}
	out, err := render(messages.Client{}, req, Reply("vertex", model, req), stream)
	if err != nil {
		anthropicError(w, http.StatusInternalServerError, "api_error", err.Error())
		return
	}
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func anthropicError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, fmt.Appendf(nil, `{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg))
}
