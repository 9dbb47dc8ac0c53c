package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// vertex serves the generate_content and messages dialects on Vertex AI.
type vertex struct {
	d        parleyv1.Dialect
	project  string
	location string
	apiKey   string // express mode
	tokens   oauth2.TokenSource
}

// The OAuth scope Vertex AI takes and the Anthropic body version.
const (
	cloudPlatformScope  = "https://www.googleapis.com/auth/cloud-platform"
	vertexAnthropicBody = "vertex-2023-10-16"
)

func newVertex(ctx context.Context, u *config.Upstream, d parleyv1.Dialect, o Options) (*vertex, string, error) {
	p := u.Provider
	v := &vertex{d: d, project: p.Project, location: p.Location, apiKey: u.APIKey}
	var base string
	switch p.Location {
	case "global":
		base = "https://aiplatform.googleapis.com"
	case "us", "eu":
		base = "https://aiplatform." + p.Location + ".rep.googleapis.com"
	default:
		base = "https://" + p.Location + "-aiplatform.googleapis.com"
	}
	if v.apiKey != "" {
		return v, base, nil
	}
	tctx := tokenContext(o.HTTPClient)
	var creds *google.Credentials
	if p.CredentialsFile != "" {
		data, err := os.ReadFile(p.CredentialsFile)
		if err != nil {
			return nil, "", fmt.Errorf("credentials_file: %w", err)
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(data, &head, json.RejectUnknownMembers(false)); err != nil {
			return nil, "", errors.New("credentials_file is not a Google credentials JSON file")
		}
		var typ google.CredentialsType
		switch head.Type {
		case string(google.ServiceAccount), string(google.AuthorizedUser), string(google.ExternalAccount), string(google.ImpersonatedServiceAccount):
			typ = google.CredentialsType(head.Type)
		default:
			return nil, "", fmt.Errorf("credentials_file has type %q; want service_account, authorized_user, external_account or impersonated_service_account", head.Type)
		}
		creds, err = google.CredentialsFromJSONWithType(tctx, data, typ, cloudPlatformScope)
		if err != nil {
			return nil, "", errors.New("credentials_file could not be read as Google credentials")
		}
	} else {
		var err error
		creds, err = google.FindDefaultCredentials(tctx, cloudPlatformScope)
		if err != nil {
			return nil, "", errors.New("no Application Default Credentials (set GOOGLE_APPLICATION_CREDENTIALS or provider.credentials_file)")
		}
	}
	v.tokens = cachedTokens(creds.TokenSource)
	return v, base, nil
}

func (v *vertex) Provider() string { return "gcp.vertex_ai" }

// models is the path of a publisher's models.
func (v *vertex) models(publisher string) string {
	if v.project == "" {
		return "/v1/publishers/" + publisher + "/models/"
	}
	return "/v1/projects/" + v.project + "/locations/" + v.location + "/publishers/" + publisher + "/models/"
}

// Prepare implements Adapter.
func (v *vertex) Prepare(op Op, out *translate.Outgoing, t translate.Target) error {
	clearAuth(out.Header)
	if v.d == parleyv1.Dialect_DIALECT_MESSAGES {
		return v.prepareAnthropic(op, out, t)
	}
	// The content-generation dialect: .../models/{model}:{method}.
	_, method, ok := strings.Cut(out.Path[strings.LastIndexByte(out.Path, '/')+1:], ":")
	if !ok {
		return fmt.Errorf("vertex: unexpected path %q", out.Path)
	}
	out.Path = v.models("google") + escapeSegment(t.Model) + ":" + method
	if op == OpCount {
		body, err := vertexCountBody(out.Body)
		if err != nil {
			return err
		}
		out.Body = body
	}
	return nil
}

func (v *vertex) prepareAnthropic(op Op, out *translate.Outgoing, t translate.Target) error {
	out.Header.Del("anthropic-version")
	version := member{"anthropic_version", stringValue(vertexAnthropicBody)}
	if op == OpCount {
		body, err := editBody(out.Body, nil, version)
		if err != nil {
			return err
		}
		out.Body = body
		out.Path = v.models("anthropic") + "count-tokens:rawPredict"
		return nil
	}
	body, err := editBody(out.Body, []string{"model"}, version)
	if err != nil {
		return err
	}
	out.Body = body
	action := ":rawPredict"
	if out.Stream {
		action = ":streamRawPredict"
	}
	out.Path = v.models("anthropic") + escapeSegment(t.Model) + action
	return nil
}

// vertexCountBody turns the dialect's count body ({"generateContentRequest":
// {...}}) into Vertex's, which takes the request's members itself and no
// model.
func vertexCountBody(body []byte) ([]byte, error) {
	inner := bodyMember(body, "generateContentRequest")
	if inner == nil {
		return body, nil
	}
	var m map[string]jsontext.Value
	if err := json.Unmarshal(inner, &m); err != nil {
		return nil, err
	}
	keep := map[string]jsontext.Value{}
	for _, k := range []string{"contents", "systemInstruction", "tools", "generationConfig"} {
		if v, ok := m[k]; ok {
			keep[k] = v
		}
	}
	return json.Marshal(keep, json.Deterministic(true))
}

// Authorize implements Adapter.
func (v *vertex) Authorize(_ context.Context, req *http.Request, _ []byte) error {
	if v.apiKey != "" {
		req.Header.Set("x-goog-api-key", v.apiKey)
		return nil
	}
	if err := bearer(req, v.tokens); err != nil {
		return AuthError(v.d, "Google Cloud", err)
	}
	return nil
}

// DecodeError implements Adapter: a Google-shaped error in front of an
// Anthropic model ({"error": {"code", "message", "status"}}, from Vertex
// rather than from the model) is read by its status name; the
// content-generation dialect reads its own.
func (v *vertex) DecodeError(status int, h http.Header, body []byte) *parleyv1.Error {
	if v.d != parleyv1.Dialect_DIALECT_MESSAGES {
		return nil
	}
	var g struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &g, json.RejectUnknownMembers(false)) != nil || g.Error == nil || g.Error.Status == "" {
		return nil
	}
	code := translate.CodeForHTTPStatus(status)
	if c, ok := parleyv1.Code_value["CODE_"+g.Error.Status]; ok {
		code = parleyv1.Code(c)
	}
	facts := translate.ReplyRetryFacts(status, h)
	facts.Code = code
	return &parleyv1.Error{
		Code:       code,
		Message:    g.Error.Message,
		HttpStatus: int32(status),
		Reason:     g.Error.Status,
		Origin:     &parleyv1.Origin{Dialect: v.d},
		Retry:      translate.Retry(facts),
	}
}
