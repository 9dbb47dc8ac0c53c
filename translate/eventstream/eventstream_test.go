package eventstream_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	es "github.com/parleyhq/parley/translate/eventstream"
	_ "github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/sse"
)

const d = parleyv1.Dialect_DIALECT_CONVERSE

func frames(t testing.TB, write func(w io.Writer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReaderEvents(t *testing.T) {
	var buf bytes.Buffer
	_ = es.Encode(&buf, "messageStart", []byte(`{"role":"assistant","p":"abc"}`))
	_ = es.EncodeChunk(&buf, []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`))
	// A message that is not an event (an initial-response, say) is skipped.
	m := eventstream.Message{Payload: []byte(`{}`)}
	m.Headers.Set(":message-type", eventstream.StringValue("initial-response"))
	_ = eventstream.NewEncoder().Encode(&buf, m)
	_ = es.Encode(&buf, "metadata", []byte(`{"usage":{"inputTokens":3}}`))

	r := es.NewReader(d, bytes.NewReader(buf.Bytes()), 0)
	want := []struct{ typ, data string }{
		{"messageStart", `{"role":"assistant","p":"abc"}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`},
		{"metadata", `{"usage":{"inputTokens":3}}`},
	}
	for i, w := range want {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.Type != w.typ || string(ev.Data) != w.data {
			t.Errorf("event %d = %s %s, want %s %s", i, ev.Type, ev.Data, w.typ, w.data)
		}
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last event: %v, want io.EOF", err)
	}
}

func TestReaderReady(t *testing.T) {
	one := frames(t, func(w io.Writer) error { return es.Encode(w, "contentBlockStop", []byte(`{"contentBlockIndex":0}`)) })
	pr, pw := io.Pipe()
	r := es.NewReader(d, pr, 0)
	go func() { _, _ = pw.Write(append(append([]byte{}, one...), one[:10]...)) }()
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if r.Ready() {
		t.Error("Ready with only part of the next message buffered")
	}
	go func() { _, _ = pw.Write(one[10:]); _, _ = pw.Write(one); _ = pw.Close() }()
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	// The third message may not have arrived yet; once read, none is left.
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if r.Ready() {
		t.Error("Ready with nothing buffered")
	}
}

func TestReaderException(t *testing.T) {
	var buf bytes.Buffer
	_ = es.Encode(&buf, "messageStart", []byte(`{"role":"assistant"}`))
	_ = es.EncodeException(&buf, "throttlingException", "Too many tokens, please wait before trying again.")
	r := es.NewReader(d, &buf, 0)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := r.Next()
	var up *translate.UpstreamError
	if !errors.As(err, &up) {
		t.Fatalf("err = %v, want an upstream error", err)
	}
	e := up.Err
	if e.GetCode() != parleyv1.Code_CODE_RESOURCE_EXHAUSTED || e.GetHttpStatus() != 429 || !e.GetRetry().GetRetryable() ||
		e.GetMessage() != "Too many tokens, please wait before trying again." || e.GetReason() != "throttlingException" {
		t.Errorf("error = %v", e)
	}
}

func TestReaderBrokenFrames(t *testing.T) {
	one := frames(t, func(w io.Writer) error { return es.Encode(w, "contentBlockStop", []byte(`{"contentBlockIndex":0}`)) })
	t.Run("cut", func(t *testing.T) {
		for _, n := range []int{2, 8, 20, len(one) - 1} {
			_, err := es.NewReader(d, bytes.NewReader(one[:n]), 0).Next()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("cut at %d: %v, want io.ErrUnexpectedEOF", n, err)
			}
		}
	})
	t.Run("checksum", func(t *testing.T) {
		bad := bytes.Clone(one)
		bad[len(bad)-6] ^= 0xff // a payload byte: the message CRC fails
		_, err := es.NewReader(d, bytes.NewReader(bad), 0).Next()
		var up *translate.UpstreamError
		if !errors.As(err, &up) || up.Err.GetRetry().GetRetryable() {
			t.Errorf("err = %v, want the upstream's protocol error", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		_, err := es.NewReader(d, bytes.NewReader(one), 16).Next()
		if !errors.Is(err, es.ErrFrameTooLarge) {
			t.Errorf("err = %v, want ErrFrameTooLarge", err)
		}
	})
	t.Run("chunk not base64", func(t *testing.T) {
		bad := frames(t, func(w io.Writer) error { return es.Encode(w, "chunk", []byte(`{"bytes":"%%%"}`)) })
		_, err := es.NewReader(d, bytes.NewReader(bad), 0).Next()
		var up *translate.UpstreamError
		if !errors.As(err, &up) {
			t.Errorf("err = %v, want the upstream's protocol error", err)
		}
	})
}

// A stream decoded through DecodeFramed ends early, and may be retried,
// when the body stops in the middle of a message.
func TestDecodeFramedCutStream(t *testing.T) {
	one := frames(t, func(w io.Writer) error { return es.Encode(w, "x", []byte(`{}`)) })
	open := func(body io.Reader, max int) translate.Frames { return es.NewReader(d, body, max) }
	var last error
	for _, err := range translate.DecodeFramed(d, bytes.NewReader(one[:len(one)-3]), open, nopDecoder{}, translate.StreamLimits{}, nil, nil) {
		last = err
	}
	e := translate.ToProto(last)
	if e.GetCode() != parleyv1.Code_CODE_UNAVAILABLE || !e.GetRetry().GetRetryable() {
		t.Errorf("a cut stream ended with %v", last)
	}
}

type nopDecoder struct{}

func (nopDecoder) Decode(dst []*parleyv1.StreamEvent, _ sse.Event) ([]*parleyv1.StreamEvent, error) {
	return dst, nil
}
func (nopDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) { return dst, nil }

func TestDecodeError(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		header    string
		body      string
		code      parleyv1.Code
		outStatus int32
		retry     bool
		reason    string
		message   string
	}{
		{"throttled", 429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", `{"message":"Too many requests, please wait before trying again."}`,
			parleyv1.Code_CODE_RESOURCE_EXHAUSTED, 429, true, "ThrottlingException", "Too many requests, please wait before trying again."},
		{"quota", 400, "ServiceQuotaExceededException", `{"message":"Your account has exceeded its quota."}`,
			parleyv1.Code_CODE_RESOURCE_EXHAUSTED, 429, true, "ServiceQuotaExceededException", "Your account has exceeded its quota."},
		{"validation", 400, "ValidationException", `{"message":"The provided model identifier is invalid."}`,
			parleyv1.Code_CODE_INVALID_ARGUMENT, 400, false, "ValidationException", "The provided model identifier is invalid."},
		{"denied", 403, "AccessDeniedException", `{"Message":"You don't have access to the model with the specified model ID."}`,
			parleyv1.Code_CODE_PERMISSION_DENIED, 403, false, "AccessDeniedException", "You don't have access to the model with the specified model ID."},
		{"signature", 403, "", `{"__type":"com.amazon.coral.service#InvalidSignatureException","message":"Signature expired"}`,
			parleyv1.Code_CODE_UNAUTHENTICATED, 403, false, "InvalidSignatureException", "Signature expired"},
		{"unavailable", 503, "ServiceUnavailableException", `{"message":"Service unavailable"}`,
			parleyv1.Code_CODE_UNAVAILABLE, 503, true, "ServiceUnavailableException", "Service unavailable"},
		{"not ready", 429, "ModelNotReadyException", `{"message":"Model is not ready"}`,
			parleyv1.Code_CODE_UNAVAILABLE, 429, true, "ModelNotReadyException", "Model is not ready"},
		{"timeout", 408, "ModelTimeoutException", `{"message":"Model timed out"}`,
			parleyv1.Code_CODE_DEADLINE_EXCEEDED, 408, true, "ModelTimeoutException", "Model timed out"},
		{"unknown", 502, "", `<html>bad gateway</html>`,
			parleyv1.Code_CODE_UNAVAILABLE, 502, true, "", "<html>bad gateway</html>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.header != "" {
				h.Set("X-Amzn-ErrorType", c.header)
			}
			e := es.DecodeError(d, c.status, h, []byte(c.body))
			if e.GetCode() != c.code || e.GetHttpStatus() != c.outStatus || e.GetRetry().GetRetryable() != c.retry || e.GetReason() != c.reason || e.GetMessage() != c.message {
				t.Errorf("got %v", e)
			}
		})
	}
}
