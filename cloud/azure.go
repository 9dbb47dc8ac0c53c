package cloud

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// azure serves the chat_completions and responses dialects on Azure
// OpenAI.
type azure struct {
	d          parleyv1.Dialect
	apiVersion string
	apiKey     string
	tokens     oauth2.TokenSource // Entra ID, when set
}

// The Entra ID sign-in host and the scope of Azure OpenAI tokens.
const (
	entraAuthority = "https://login.microsoftonline.com"
	azureScope     = "https://cognitiveservices.azure.com/.default"
)

func newAzure(_ context.Context, u *config.Upstream, d parleyv1.Dialect, o Options) (*azure, string, error) {
	p := u.Provider
	a := &azure{d: d, apiVersion: p.APIVersion, apiKey: u.APIKey}
	if e := p.Entra; e != nil {
		authority := strings.TrimSuffix(e.Authority, "/")
		if authority == "" {
			authority = entraAuthority
		}
		cc := &clientcredentials.Config{
			ClientID:     e.ClientID,
			ClientSecret: e.ClientSecret,
			TokenURL:     authority + "/" + url.PathEscape(e.TenantID) + "/oauth2/v2.0/token",
			Scopes:       []string{azureScope},
			AuthStyle:    oauth2.AuthStyleInParams,
		}
		a.tokens = cachedTokens(cc.TokenSource(tokenContext(o.HTTPClient)))
	}
	return a, "", nil
}

func (a *azure) Provider() string { return "azure.ai.openai" }

// Prepare implements Adapter.
func (a *azure) Prepare(op Op, out *translate.Outgoing, t translate.Target) error {
	clearAuth(out.Header)
	rest, ok := strings.CutPrefix(out.Path, "/v1/")
	if !ok {
		return fmt.Errorf("azure: unexpected path %q", out.Path)
	}
	if a.apiVersion == "" {
		out.Path = "/openai/v1/" + rest
		return nil
	}
	if rest == "chat/completions" {
		out.Path = "/openai/deployments/" + url.PathEscape(t.Model) + "/chat/completions"
	} else {
		out.Path = "/openai/" + rest
	}
	if out.Query == nil {
		out.Query = url.Values{}
	}
	out.Query.Set("api-version", a.apiVersion)
	return nil
}

// Authorize implements Adapter: the api-key header, or an Entra ID token.
func (a *azure) Authorize(_ context.Context, req *http.Request, _ []byte) error {
	if a.tokens == nil {
		req.Header.Set("api-key", a.apiKey)
		return nil
	}
	if err := bearer(req, a.tokens); err != nil {
		return AuthError(a.d, "Microsoft Entra ID", err)
	}
	return nil
}

// DecodeError implements Adapter: Azure's errors are the dialect's.
func (a *azure) DecodeError(int, http.Header, []byte) *parleyv1.Error { return nil }
