package cloud

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/eventstream"
)

// bedrock serves the converse and messages dialects on Amazon Bedrock.
type bedrock struct {
	d      parleyv1.Dialect
	region string
	creds  aws.CredentialsProvider // nil with an API key
	apiKey string
	signer *v4.Signer
}

// The Bedrock service's signing name and the Anthropic body version.
const (
	bedrockService       = "bedrock"
	bedrockAnthropicBody = "bedrock-2023-05-31"
)

func newBedrock(ctx context.Context, u *config.Upstream, d parleyv1.Dialect) (*bedrock, string, error) {
	p := u.Provider
	b := &bedrock{d: d, apiKey: u.APIKey, signer: v4.NewSigner()}
	var opts []func(*awsconfig.LoadOptions) error
	if p.Region != "" {
		opts = append(opts, awsconfig.WithRegion(p.Region))
	}
	if p.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(p.Profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", errors.New("the AWS configuration could not be loaded: " + err.Error())
	}
	b.region = cfg.Region
	if b.region == "" {
		return nil, "", errors.New("no region: set provider.region or AWS_REGION")
	}
	if b.apiKey == "" {
		if cfg.Credentials == nil {
			return nil, "", errors.New("the AWS credential chain is empty")
		}
		b.creds = cfg.Credentials
	}
	return b, "https://bedrock-runtime." + b.region + ".amazonaws.com", nil
}

func (b *bedrock) Provider() string { return "aws.bedrock" }

// Prepare implements Adapter.
func (b *bedrock) Prepare(op Op, out *translate.Outgoing, t translate.Target) error {
	clearAuth(out.Header)
	if b.d != parleyv1.Dialect_DIALECT_MESSAGES {
		return nil // the converse dialect builds Bedrock's own paths
	}
	if op == OpCount {
		return ErrNoCount
	}
	betas := betaList(out.Header.Values("anthropic-beta"))
	out.Header.Del("anthropic-beta")
	out.Header.Del("anthropic-version")
	add := []member{{"anthropic_version", stringValue(bedrockAnthropicBody)}}
	if len(betas) > 0 {
		add = append(add, member{"anthropic_beta", stringList(betas)})
	}
	body, err := editBody(out.Body, []string{"model", "stream"}, add...)
	if err != nil {
		return err
	}
	out.Body = body
	action := "/invoke"
	if out.Stream {
		action = "/invoke-with-response-stream"
		out.Header.Set("Accept", eventstream.ContentType)
	}
	out.Path = "/model/" + escapeSegment(t.Model) + action
	return nil
}

// Authorize implements Adapter: a Bedrock API key as a bearer token, else
// a SigV4 signature over the request as it will be sent.
func (b *bedrock) Authorize(ctx context.Context, req *http.Request, body []byte) error {
	if b.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+b.apiKey)
		return nil
	}
	creds, err := b.creds.Retrieve(ctx)
	if err != nil {
		return AuthError(b.d, "AWS", err)
	}
	sum := sha256.Sum256(body)
	if err := b.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), bedrockService, b.region, time.Now()); err != nil {
		return AuthError(b.d, "AWS", err)
	}
	return nil
}

// DecodeError implements Adapter: every Bedrock error is AWS's.
func (b *bedrock) DecodeError(status int, h http.Header, body []byte) *parleyv1.Error {
	return eventstream.DecodeError(b.d, status, h, body)
}

// escapeSegment escapes a model id or ARN as one path segment, as the AWS
// SDK does: ':' and '/' included.
func escapeSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
}

// betaList splits anthropic-beta header values into their names.
func betaList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

func stringList(ss []string) []byte {
	out := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, stringValue(s)...)
	}
	return append(out, ']')
}
