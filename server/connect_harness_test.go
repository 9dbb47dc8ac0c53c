package server_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/reflect/protoreflect"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/gen/parley/v1/parleyv1connect"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/messages"
)

// rpcProtocols are the protocols the generated clients speak: Connect and
// gRPC-Web over HTTP/1.1, gRPC over cleartext HTTP/2.
var rpcProtocols = []string{"connect", "grpc", "grpcweb"}

// rpcClient is the generated Connect clients of one protocol with a key.
type rpcClient struct {
	gen       parleyv1connect.GenerationServiceClient
	tasks     parleyv1connect.TaskServiceClient
	responses parleyv1connect.ResponseServiceClient
}

// h2cClient speaks only cleartext HTTP/2, as gRPC clients do without TLS.
func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p}}
}

func newRPC(t testing.TB, url, key, protocol string) rpcClient {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	opts := []connect.ClientOption{connect.WithInterceptors(bearer(key))}
	switch protocol {
	case "grpc":
		hc = h2cClient()
		opts = append(opts, connect.WithGRPC())
	case "grpcweb":
		opts = append(opts, connect.WithGRPCWeb())
	}
	t.Cleanup(hc.CloseIdleConnections)
	return rpcClient{
		gen:   parleyv1connect.NewGenerationServiceClient(hc, url, opts...),
		tasks: parleyv1connect.NewTaskServiceClient(hc, url, opts...),

		responses: parleyv1connect.NewResponseServiceClient(hc, url, opts...),
	}
}

// bearer sends a key as Authorization: Bearer on every call.
type bearer string

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if b != "" {
			req.Header().Set("Authorization", "Bearer "+string(b))
		}
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		if b != "" {
			conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		}
		return conn
	}
}

func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// canonicalRequest is a scenario's request as a Connect client would build
// it: the messages-style recording decoded, with every dialect extension
// taken out, asking for model.
func canonicalRequest(t testing.TB, scenario, model string) *parleyv1.Request {
	t.Helper()
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Header: http.Header{}, Body: fixture(t, scenario, "messages", "request.json")})
	if err != nil {
		t.Fatal(err)
	}
	stripExtensions(req.ProtoReflect())
	req.Model = model
	return req
}

// stripExtensions clears every Extensions field in m.
func stripExtensions(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Message() == nil || fd.IsMap():
		case fd.Message().FullName() == "parley.v1.Extensions":
			m.Clear(fd)
		case fd.IsList():
			for i := range v.List().Len() {
				stripExtensions(v.List().Get(i).Message())
			}
		default:
			stripExtensions(v.Message())
		}
		return true
	})
}

// generate calls Generate or StreamGenerate and returns the response (the
// stream accumulated), the reply's headers and the error.
func (c rpcClient) generate(ctx context.Context, req *parleyv1.Request, stream bool) (*parleyv1.Response, http.Header, error) {
	if !stream {
		res, err := c.gen.Generate(ctx, connect.NewRequest(&parleyv1.GenerateRequest{Request: req}))
		if err != nil {
			return nil, nil, err
		}
		return res.Msg.GetResponse(), res.Header(), nil
	}
	st, err := c.gen.StreamGenerate(ctx, connect.NewRequest(&parleyv1.StreamGenerateRequest{Request: req}))
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = st.Close() }()
	acc := translate.NewAccumulator()
	for st.Receive() {
		if err := acc.Add(st.Msg().GetEvent()); err != nil {
			return nil, st.ResponseHeader(), err
		}
	}
	if err := st.Err(); err != nil {
		return acc.Response(), st.ResponseHeader(), err
	}
	if !acc.Ended() {
		return nil, st.ResponseHeader(), errors.New("the stream ended without its done event")
	}
	return acc.Response(), st.ResponseHeader(), nil
}

// rpcFailure is what a client reads of a Connect error.
type rpcFailure struct {
	code       connect.Code
	canonical  *parleyv1.Error
	violations []*errdetails.BadRequest_FieldViolation
	retry      *errdetails.RetryInfo
	meta       http.Header
}

func failureOf(t testing.TB, err error) rpcFailure {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("want a Connect error, got %v", err)
	}
	f := rpcFailure{code: ce.Code(), meta: ce.Meta()}
	for _, d := range ce.Details() {
		m, err := d.Value()
		if err != nil {
			t.Fatalf("an error detail of type %s cannot be read: %v", d.Type(), err)
		}
		switch m := m.(type) {
		case *parleyv1.Error:
			f.canonical = m
		case *errdetails.BadRequest:
			f.violations = m.GetFieldViolations()
		case *errdetails.RetryInfo:
			f.retry = m
		}
	}
	if f.canonical == nil {
		t.Fatalf("the error %v has no parley.v1.Error detail", err)
	}
	if f.canonical.GetCode() != parleyv1.Code(f.code) {
		t.Errorf("the detail's code %s differs from the status %s", f.canonical.GetCode(), f.code)
	}
	return f
}
