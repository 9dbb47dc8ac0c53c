package cloudtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/sse"
)

// Bedrock fakes Amazon Bedrock's runtime: InvokeModel and
// InvokeModelWithResponseStream for Anthropic models, and the Converse
// API (Converse, ConverseStream and CountTokens) for any model.
type Bedrock struct {
	*httptest.Server
	log
	// Region and Creds are what requests must be signed for and with.
	Region string
	Creds  aws.Credentials
	// APIKey, when set, is a Bedrock API key accepted as a bearer token
	// instead of a signature.
	APIKey string
	// Throttle refuses that many of the next requests with a
	// ThrottlingException (429).
	Throttle atomic.Int32
	// StreamException, when set, ends the next InvokeModel stream after
	// its first chunk with an exception of this type, as the service
	// does when a stream breaks.
	StreamException atomic.Value // string
}

// NewBedrock starts a fake for region, whose requests must be signed with
// creds.
func NewBedrock(t testing.TB, region string, creds aws.Credentials) *Bedrock {
	b := &Bedrock{Region: region, Creds: creds}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

func awsError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("X-Amzn-RequestId", "req-fake-0001")
	writeJSON(w, status, fmt.Appendf(nil, `{"message":%q}`, msg))
}

func (b *Bedrock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.add(r, body)
	if err := b.authorized(r, body); err != nil {
		awsError(w, http.StatusForbidden, "InvalidSignatureException", err.Error())
		return
	}
	if b.Throttle.Load() > 0 {
		b.Throttle.Add(-1)
		awsError(w, http.StatusTooManyRequests, "ThrottlingException", "Too many requests, please wait before trying again.")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	if !ok || r.Method != http.MethodPost {
		awsError(w, http.StatusNotFound, "UnknownOperationException", "unknown operation")
		return
	}
	rawID, action, _ := strings.Cut(rest, "/")
	id, err := url.PathUnescape(rawID)
	if err != nil || id == "" {
		awsError(w, http.StatusBadRequest, "ValidationException", "bad model id")
		return
	}
	switch action {
	case "invoke", "invoke-with-response-stream":
		b.invoke(w, id, action != "invoke", body)
	case "converse", "converse-stream":
		b.converse(w, id, action != "converse", body)
	case "count-tokens":
		b.countTokens(w, id, body)
	default:
		awsError(w, http.StatusNotFound, "UnknownOperationException", "unknown operation")
	}
}

// authorized checks the request's bearer API key or recomputes its SigV4
// signature with the SDK's signer, over the headers it says it signed.
func (b *Bedrock) authorized(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	if b.APIKey != "" {
		if auth != "Bearer "+b.APIKey {
			return fmt.Errorf("the API key is not valid")
		}
		return nil
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		return fmt.Errorf("the request is not signed")
	}
	var signed []string
	for _, f := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ", ") {
		if v, ok := strings.CutPrefix(f, "SignedHeaders="); ok {
			signed = strings.Split(v, ";")
		}
		if v, ok := strings.CutPrefix(f, "Credential="); ok {
			want := b.Creds.AccessKeyID + "/" + time.Now().UTC().Format("20060102") + "/" + b.Region + "/bedrock/aws4_request"
			if v != want {
				return fmt.Errorf("credential scope %q, want %q", v, want)
			}
		}
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || time.Since(at).Abs() > 5*time.Minute {
		return fmt.Errorf("the signature's date is missing or stale")
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.RequestURI, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range signed {
		if h == "host" {
			continue
		}
		again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), b.Creds, again, hex.EncodeToString(sum[:]), "bedrock", b.Region, at); err != nil {
		return err
	}
	if again.Header.Get("Authorization") != auth {
		return fmt.Errorf("the request signature we calculated does not match the signature you provided")
	}
	return nil
}

// invoke answers InvokeModel for an Anthropic model.
func (b *Bedrock) invoke(w http.ResponseWriter, id string, stream bool, body []byte) {
	m, err := members(body)
	if err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again.")
		return
	}
	if string(m["anthropic_version"]) != `"bedrock-2023-05-31"` {
		awsError(w, http.StatusBadRequest, "ValidationException", "anthropic_version: bedrock-2023-05-31 is required")
		return
	}
	for _, k := range []string{"model", "stream"} {
		if _, has := m[k]; has {
			awsError(w, http.StatusBadRequest, "ValidationException", fmt.Sprintf("Malformed input request: extraneous key [%s] is not permitted", k))
			return
		}
	}
	delete(m, "anthropic_version")
	delete(m, "anthropic_beta")
	m["model"] = []byte(fmt.Sprintf("%q", id))
	clean, _ := jsonMarshal(m)
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Header: http.Header{}, Body: clean})
	if err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", err.Error())
		return
	}
	if _, bad := foreignThinking("bedrock", id, req); bad {
		awsError(w, http.StatusBadRequest, "ValidationException", "messages: Invalid `signature` in `thinking` block")
		return
	}
	if unthoughtToolTurn(req) {
		awsError(w, http.StatusBadRequest, "ValidationException", unthoughtMessage(req))
		return
	}
	req.Stream = stream
	out, err := render(messages.Client{}, req, Reply("bedrock", id, req), stream)
	if err != nil {
		awsError(w, http.StatusInternalServerError, "InternalServerException", err.Error())
		return
	}
	if !stream {
		w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", "11")
		writeJSON(w, http.StatusOK, out)
		return
	}
	w.Header().Set("Content-Type", eventstream.ContentType)
	w.Header().Set("X-Amzn-Bedrock-Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	exception, _ := b.StreamException.Swap("").(string)
	rd := sse.NewReader(bytes.NewReader(out), 0)
	for i := 0; ; i++ {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		if i == 1 && exception != "" {
			_ = eventstream.EncodeException(w, exception, "The model stream was interrupted. Try your request again.")
			return
		}
		if err := eventstream.EncodeChunk(w, ev.Data); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}
