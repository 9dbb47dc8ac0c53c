package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/config"
)

// A provider block names its cloud; base_url may be left out where the
// region or location gives it.
func TestParseProviders(t *testing.T) {
	c, err := config.Parse("x.yaml", []byte(`upstreams:
  - name: bedrock
    dialect: messages
    provider: {cloud: bedrock, region: us-east-1, profile: prod}
  - name: vertex
    dialect: generate_content
    provider:
      cloud: vertex
      project: my-project
      location: us-central1
      credentials_file: ${GOOGLE_APPLICATION_CREDENTIALS}
  - name: azure
    dialect: chat_completions
    base_url: https://my-resource.openai.azure.com
    provider:
      cloud: azure
      api_version: "2024-10-21"
      entra: {tenant_id: t, client_id: c, client_secret: "${AZURE_CLIENT_SECRET}"}
`), env(map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": "/etc/sa.json", "AZURE_CLIENT_SECRET": "entra-secret-0123456789"}), names)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Upstreams[0].Provider; p.Cloud != config.CloudBedrock || p.Region != "us-east-1" || p.Profile != "prod" {
		t.Errorf("bedrock = %+v", p)
	}
	if p := c.Upstreams[1].Provider; p.Project != "my-project" || p.CredentialsFile != "/etc/sa.json" {
		t.Errorf("vertex = %+v", p)
	}
	if p := c.Upstreams[2].Provider; p.APIVersion != "2024-10-21" || p.Entra.ClientSecret != "entra-secret-0123456789" {
		t.Errorf("azure = %+v", p)
	}
}

func TestProviderErrors(t *testing.T) {
	up := func(dialect, provider string, more ...string) string {
		return "upstreams:\n  - name: u\n    dialect: " + dialect + "\n" + strings.Join(more, "") + "    provider:\n" + provider
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"no cloud", up("messages", "      region: us-east-1\n"),
			"x.yaml:4: upstreams[0].provider.cloud: is required: one of bedrock, vertex, azure"},
		{"unknown cloud", up("messages", "      cloud: oracle\n"),
			"x.yaml:5: upstreams[0].provider.cloud: \"oracle\" is not one of bedrock, vertex, azure"},
		{"dialect not served", up("responses", "      cloud: bedrock\n"),
			"upstreams[0].provider.cloud: bedrock does not serve the responses dialect (it serves messages and converse)"},
		{"region on vertex", up("generate_content", "      cloud: vertex\n      project: p\n      location: us-central1\n      region: us-east-1\n"),
			"x.yaml:8: upstreams[0].provider.region: applies to bedrock only"},
		{"vertex location", up("generate_content", "      cloud: vertex\n      project: p\n"),
			"upstreams[0].provider.location: is required for vertex"},
		{"vertex project", up("messages", "      cloud: vertex\n      location: us-east5\n"),
			"upstreams[0].provider.project: is required for vertex unless an api_key"},
		{"bad region", up("messages", "      cloud: bedrock\n      region: US East\n"),
			"upstreams[0].provider.region: \"US East\" is not an AWS region"},
		{"azure base_url", up("chat_completions", "      cloud: azure\n", "    api_key: az-secret-0123456789\n"),
			"upstreams[0].base_url: is required for a chat_completions upstream"},
		{"azure no auth", up("chat_completions", "      cloud: azure\n", "    base_url: https://r.openai.azure.com\n"),
			"upstreams[0].provider.cloud: azure needs an api_key or an entra block"},
		{"azure both", up("chat_completions", "      cloud: azure\n      entra: {tenant_id: t, client_id: c, client_secret: entra-secret-0123456789}\n",
			"    base_url: https://r.openai.azure.com\n    api_key: az-secret-0123456789\n"),
			"upstreams[0].provider.entra: and api_key are both set; give one"},
		{"entra partial", up("responses", "      cloud: azure\n      entra: {tenant_id: t, client_secret: entra-secret-0123456789}\n",
			"    base_url: https://r.openai.azure.com\n"),
			"upstreams[0].provider.entra: needs tenant_id, client_id and client_secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("x.yaml", []byte(tc.yaml), env(nil), names)
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
			for _, secret := range []string{"az-secret-0123456789", "entra-secret-0123456789"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("err quotes a secret: %q", err)
				}
			}
		})
	}
}
