package cloudtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/responses"
)

// Azure fakes an Azure OpenAI resource: the deployments surface (with
// api-version) and the v1 surface, for chat completions and responses,
// and a Microsoft Entra ID tenant's token endpoint.
type Azure struct {
	*httptest.Server
	log
	// APIKey is the resource's key (the api-key header).
	APIKey string
	// Deployments are the deployment names the resource has.
	Deployments []string
	// Tenant, ClientID and ClientSecret are the Entra ID application
	// allowed to sign in.
	Tenant, ClientID, ClientSecret string

	mu    sync.Mutex
	live  map[string]time.Time
	mints atomic.Int32
}

// NewAzure starts a fake resource with key and deployments.
func NewAzure(t testing.TB, key string, deployments ...string) *Azure {
	a := &Azure{APIKey: key, Deployments: deployments, Tenant: "tenant-0001", ClientID: "client-0001", ClientSecret: "entra-secret-value-0001", live: map[string]time.Time{}}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

// Mints is how many Entra ID tokens were minted.
func (a *Azure) Mints() int { return int(a.mints.Load()) }

func openaiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, fmt.Appendf(nil, `{"error":{"code":%q,"message":%q}}`, code, msg))
}

func (a *Azure) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.add(r, body)
	if r.URL.Path == "/"+a.Tenant+"/oauth2/v2.0/token" {
		a.token(w, body)
		return
	}
	if !a.authorized(r) {
		openaiError(w, http.StatusUnauthorized, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.")
		return
	}
	path := r.URL.Path
	var op string
	switch {
	case strings.HasPrefix(path, "/openai/v1/"):
		if r.URL.Query().Has("api-version") && r.URL.Query().Get("api-version") != "preview" && r.URL.Query().Get("api-version") != "latest" {
			openaiError(w, http.StatusBadRequest, "BadRequest", "API version not supported")
			return
		}
		op = strings.TrimPrefix(path, "/openai/v1/")
	case strings.HasPrefix(path, "/openai/"):
		if r.URL.Query().Get("api-version") == "" {
			openaiError(w, http.StatusNotFound, "404", "Resource not found")
			return
		}
		rest := strings.TrimPrefix(path, "/openai/")
		if d, ok := strings.CutPrefix(rest, "deployments/"); ok {
			name, tail, _ := strings.Cut(d, "/")
			if !a.has(name) {
				openaiError(w, http.StatusNotFound, "DeploymentNotFound", "The API deployment for this resource does not exist.")
				return
			}
			op = tail
			if tail == "chat/completions" {
				body = withModel(body, name)
			}
		} else {
			op = rest
		}
	default:
		openaiError(w, http.StatusNotFound, "404", "Resource not found")
		return
	}
	switch op {
	case "chat/completions":
		a.answer(w, chatcompletions.Client{}, body)
	case "responses":
		a.answer(w, responses.Client{}, body)
	default:
		openaiError(w, http.StatusNotFound, "404", "Resource not found")
	}
}

func (a *Azure) has(name string) bool {
	for _, d := range a.Deployments {
		if d == name {
			return true
		}
	}
	return false
}

// withModel sets the body's model to the deployment, which is what a
// deployment serves whatever the body says.
func withModel(body []byte, model string) []byte {
	m, err := members(body)
	if err != nil {
		return body
	}
	m["model"] = []byte(fmt.Sprintf("%q", model))
	out, _ := jsonMarshal(m)
	return out
}

func (a *Azure) authorized(r *http.Request) bool {
	if k := r.Header.Get("api-key"); k != "" {
		return k == a.APIKey
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.live[tok]
	return ok && time.Now().Before(exp)
}

func (a *Azure) token(w http.ResponseWriter, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error":"unsupported_grant_type"}`))
		return
	}
	if form.Get("client_id") != a.ClientID || form.Get("client_secret") != a.ClientSecret {
		writeJSON(w, http.StatusUnauthorized, []byte(`{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`))
		return
	}
	if form.Get("scope") != "https://cognitiveservices.azure.com/.default" {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error":"invalid_scope"}`))
		return
	}
	n := a.mints.Add(1)
	tok := fmt.Sprintf("eyJ0eXAiOiJKV1QifQ.fake-%d", n)
	a.mu.Lock()
	a.live[tok] = time.Now().Add(time.Hour)
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, fmt.Appendf(nil, `{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":%q}`, tok))
}

func (a *Azure) answer(w http.ResponseWriter, c translate.Client, body []byte) {
	req, err := c.DecodeRequest(&translate.Incoming{Header: http.Header{}, Body: body})
	if err != nil {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	out, err := render(c, req, Reply("azure", req.GetModel(), req), req.GetStream())
	if err != nil {
		openaiError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	if req.GetStream() {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
