package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/gen/parley/v1/parleyv1connect"
	"github.com/parleyhq/parley/tasks"
	"github.com/parleyhq/parley/translate"
)

// The Connect services answer the Connect, gRPC and gRPC-Web protocols on
// the same listener as the HTTP dialects (cmd/parley serves cleartext
// HTTP/2 next to HTTP/1.1, which gRPC clients need without TLS). Every
// call goes through rpcGate: the key (Authorization: Bearer), the log line
// and the metrics (dialect "connect"), and the one conversion of errors
// into Connect errors. gRPC reflection and health checking are open to
// callers without a key, as probes expect.

// connectRoutes registers the services, reflection and health checking.
func (s *Server) connectRoutes() {
	opts := connect.WithHandlerOptions(
		connect.WithInterceptors(rpcGate{s}),
		connect.WithReadMaxBytes(int(min(s.state().maxBody, 1<<31-1))),
		// Stream events are mostly a few dozen bytes: compressing each
		// costs more than it saves (a gzip writer reset per message was a
		// seventh of a stream's CPU time).
		connect.WithCompressMinBytes(1024),
	)
	s.mux.Handle(parleyv1connect.NewGenerationServiceHandler(generationService{s}, opts))
	s.mux.Handle(parleyv1connect.NewTaskServiceHandler(taskService{s}, opts))
	s.mux.Handle(parleyv1connect.NewResponseServiceHandler(responseService{s}, opts))
	services := []string{parleyv1connect.GenerationServiceName, parleyv1connect.TaskServiceName, parleyv1connect.ResponseServiceName}
	reflector := grpcreflect.NewStaticReflector(services...)
	s.mux.Handle(grpcreflect.NewHandlerV1(reflector))
	s.mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	s.mux.Handle(grpchealth.NewHandler(grpchealth.NewStaticChecker(services...)))
}

// rpc is one call in flight: who made it and what the log and the metrics
// need.
type rpc struct {
	meter
	st        *state // the configuration the call started on
	p         *principal
	procedure string
}

type rpcKey struct{}

func rpcOf(ctx context.Context) *rpc {
	r, _ := ctx.Value(rpcKey{}).(*rpc)
	return r
}

// rpcGate authenticates each call, converts its error, and records it.
type rpcGate struct{ s *Server }

func (g rpcGate) start(ctx context.Context, procedure string, h http.Header) (context.Context, *rpc, error) {
	r := &rpc{meter: newMeter(), st: g.s.state(), procedure: procedure}
	ctx = r.startSpan(ctx, h, procedure)
	p, err := r.st.keys.authenticate(translate.BearerToken(h))
	r.p = p
	if p != nil {
		r.key = p.name
	}
	return context.WithValue(ctx, rpcKey{}, r), r, err
}

// end converts err into a Connect error, and writes the log line and the
// metrics.
func (g rpcGate) end(r *rpc, err error) *connect.Error {
	var (
		ce     *connect.Error
		e      *parleyv1.Error
		status = http.StatusOK
	)
	if err != nil {
		if errors.As(err, &ce) {
			// Connect's own (a client that went away, say): keep it.
			e = &parleyv1.Error{Code: parleyv1.Code(ce.Code()), Message: ce.Message()}
		} else {
			e = translate.ToProto(err)
			if e.GetRequestId() == "" {
				e.RequestId = r.id
			}
			ce = connectError(e)
		}
		status = translate.HTTPStatusOf(e)
		if e.GetCode() == parleyv1.Code_CODE_CANCELED {
			status = 499
		}
		ce.Meta().Set("X-Request-Id", r.id)
	}
	if r.p != nil {
		r.finish(g.s, "connect", status, e, slog.String("procedure", r.procedure), slog.String("key", r.p.name))
	} else {
		r.finish(g.s, "connect", status, e, slog.String("procedure", r.procedure))
	}
	if err == nil {
		return nil
	}
	return ce
}

func (g rpcGate) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		ctx, r, err := g.start(ctx, req.Spec().Procedure, req.Header())
		var res connect.AnyResponse
		if err == nil {
			var held int64
			if held, err = g.hold(req.Any()); err == nil {
				res, err = next(ctx, req)
				g.s.bodies.give(held)
			}
		}
		if err != nil {
			err = endedBy(ctx, err)
		}
		if ce := g.end(r, err); ce != nil {
			return nil, ce
		}
		res.Header().Set("X-Request-Id", r.id)
		setDroppedHeader(res.Header(), r.call.Dropped)
		return res, nil
	}
}

func (g rpcGate) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (g rpcGate) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, r, err := g.start(ctx, conn.Spec().Procedure, conn.RequestHeader())
		conn.ResponseHeader().Set("X-Request-Id", r.id)
		if err == nil {
			held := &heldConn{StreamingHandlerConn: conn, g: g}
			err = next(ctx, held)
			g.s.bodies.give(held.n)
		}
		if err != nil {
			err = endedBy(ctx, err)
		}
		if ce := g.end(r, err); ce != nil {
			return ce
		}
		return nil
	}
}

// hold takes a request message's size from the budget of bodies held at
// once, as the JSON dialects take their bodies', for as long as the call
// runs: decoded, it is about what its body was.
func (g rpcGate) hold(msg any) (int64, error) {
	m, ok := msg.(proto.Message)
	if !ok {
		return 0, nil
	}
	n := int64(proto.Size(m))
	if err := g.s.bodies.take(n); err != nil {
		return 0, err
	}
	return n, nil
}

// heldConn takes each message a streaming call receives from the budget
// of bodies held at once.
type heldConn struct {
	connect.StreamingHandlerConn
	g rpcGate
	n int64
}

func (c *heldConn) Receive(msg any) error {
	if err := c.StreamingHandlerConn.Receive(msg); err != nil {
		return err
	}
	n, err := c.g.hold(msg)
	c.n += n
	return err
}

// connectError is the Connect form of a canonical error: its code and
// message, the canonical error itself as a detail (origin, reason, upstream
// status), and the standard details that generic clients read: field
// violations as google.rpc.BadRequest, an upstream's advised wait as
// google.rpc.RetryInfo (and Retry-After).
func connectError(e *parleyv1.Error) *connect.Error {
	code := connect.Code(e.GetCode())
	if e.GetCode() == parleyv1.Code_CODE_UNSPECIFIED {
		code = connect.CodeUnknown
	}
	ce := connect.NewError(code, errors.New(e.GetMessage()))
	details := []proto.Message{e}
	if fv := e.GetFieldViolations(); len(fv) > 0 {
		br := &errdetails.BadRequest{}
		for _, v := range fv {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
		}
		details = append(details, br)
	}
	if ra := e.GetRetry().GetRetryAfter(); ra != nil && ra.AsDuration() > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: ra})
		setRetryAfter(ce.Meta(), e)
	}
	for _, m := range details {
		if d, err := connect.NewErrorDetail(m); err == nil {
			ce.AddDetail(d)
		}
	}
	return ce
}

// setDroppedHeader lists what the serving upstream's dialect could not
// carry.
func setDroppedHeader(h http.Header, dropped []string) {
	if len(dropped) > 0 {
		h.Set("X-Parley-Dropped", strings.Join(dropped, ", "))
	}
}

// generationService implements parleyv1connect.GenerationServiceHandler.
type generationService struct{ s *Server }

// request checks a canonical request and admits its model. A request
// without extensions is marked as the canonical dialect's, so that every
// upstream encoder treats it as another dialect's (normalising turns).
func (g generationService) request(r *rpc, req *parleyv1.Request, stream, count bool) (*parleyv1.Request, error) {
	if req == nil {
		return nil, translate.Invalid("request", "is required")
	}
	if err := translate.CheckRequest(req, "request."); err != nil {
		return nil, err
	}
	r.call.Model = req.GetModel()
	if err := r.st.admit(r.p, req.GetModel(), "request.model"); err != nil {
		return nil, err
	}
	req.Stream = stream
	// Counting tokens generates nothing: like the dialects' count
	// endpoints it is neither limited nor charged.
	if !count {
		if err := r.govern(g.s, r.st, r.p, nil, nil, req); err != nil {
			return nil, err
		}
	}
	if req.GetExtensions().GetDialect() == parleyv1.Dialect_DIALECT_UNSPECIFIED {
		if req.Extensions == nil {
			req.Extensions = &parleyv1.Extensions{}
		}
		req.Extensions.Dialect = parleyv1.Dialect_DIALECT_CANONICAL
	}
	return req, nil
}

func (g generationService) Generate(ctx context.Context, in *connect.Request[parleyv1.GenerateRequest]) (*connect.Response[parleyv1.GenerateResponse], error) {
	r := rpcOf(ctx)
	req, err := g.request(r, in.Msg.GetRequest(), false, false)
	if err != nil {
		return nil, err
	}
	resp, err := r.st.d.Generate(ctx, req, &r.call)
	if err != nil {
		return nil, err
	}
	if resp.GetId() == "" {
		resp.Id = r.id
	}
	r.usage = resp.GetUsage()
	return connect.NewResponse(&parleyv1.GenerateResponse{Response: resp}), nil
}

func (g generationService) StreamGenerate(ctx context.Context, in *connect.Request[parleyv1.StreamGenerateRequest], out *connect.ServerStream[parleyv1.StreamGenerateResponse]) error {
	r := rpcOf(ctx)
	req, err := g.request(r, in.Msg.GetRequest(), true, false)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := true
	for ev, err := range r.st.d.Stream(ctx, req, &r.call) {
		if err != nil {
			// Before the first event this is the call's status; after it,
			// the error that ends the stream.
			return err
		}
		r.note(ev)
		if first {
			first = false
			setDroppedHeader(out.ResponseHeader(), r.call.Dropped)
		}
		if err := out.Send(&parleyv1.StreamGenerateResponse{Event: ev}); err != nil {
			// The client went away: stop reading the upstream.
			return connect.NewError(connect.CodeCanceled, err)
		}
	}
	return nil
}

func (g generationService) CountTokens(ctx context.Context, in *connect.Request[parleyv1.CountTokensRequest]) (*connect.Response[parleyv1.CountTokensResponse], error) {
	r := rpcOf(ctx)
	req, err := g.request(r, in.Msg.GetRequest(), false, true)
	if err != nil {
		return nil, err
	}
	n, err := r.st.d.CountTokens(ctx, req, &r.call)
	if err != nil {
		return nil, err
	}
	r.usage = &parleyv1.Usage{InputTokens: new(n.GetInputTokens())}
	return connect.NewResponse(&parleyv1.CountTokensResponse{Count: n}), nil
}

func (g generationService) ListModels(ctx context.Context, _ *connect.Request[parleyv1.ListModelsRequest]) (*connect.Response[parleyv1.ListModelsResponse], error) {
	r := rpcOf(ctx)
	return connect.NewResponse(&parleyv1.ListModelsResponse{Models: r.st.d.Router().Models(r.p.allows)}), nil
}

// taskService implements parleyv1connect.TaskServiceHandler over the
// same task service as /songgen.
type taskService struct{ s *Server }

func (t taskService) service() (*tasks.Service, error) {
	if t.s.tasks == nil {
		return nil, &translate.StatusError{Err: &parleyv1.Error{
			Code: parleyv1.Code_CODE_UNAVAILABLE, Reason: translate.ReasonUpstreamUnavailable,
			Message: "music tasks are not served here: parley serve runs them with a data directory",
		}}
	}
	return t.s.tasks, nil
}

// shown is a task as a caller may see it: a copy without the upstream's
// own id (the task itself may be shared with the work that serves it).
func shown(t *parleyv1.Task) *parleyv1.Task {
	c := proto.CloneOf(t)
	c.UpstreamTaskId = ""
	return c
}

func (t taskService) SubmitTask(ctx context.Context, in *connect.Request[parleyv1.SubmitTaskRequest]) (*connect.Response[parleyv1.SubmitTaskResponse], error) {
	svc, err := t.service()
	if err != nil {
		return nil, err
	}
	input, err := tasks.CheckInput(in.Msg.GetInput(), in.Msg.GetNotifyHook(), svc.ModelVersions())
	if err != nil {
		return nil, err
	}
	p := rpcOf(ctx).p
	task, err := t.s.governTask(ctx, p, "connect", input, func() (*parleyv1.Task, error) {
		return svc.Submit(ctx, p.name, input, in.Msg.GetNotifyHook())
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&parleyv1.SubmitTaskResponse{Task: shown(task)}), nil
}

func (t taskService) GetTask(ctx context.Context, in *connect.Request[parleyv1.GetTaskRequest]) (*connect.Response[parleyv1.GetTaskResponse], error) {
	svc, err := t.service()
	if err != nil {
		return nil, err
	}
	if in.Msg.GetId() == "" {
		return nil, translate.Invalid("id", "is required")
	}
	task, err := svc.Get(ctx, rpcOf(ctx).p.name, in.Msg.GetId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&parleyv1.GetTaskResponse{Task: shown(task)}), nil
}

func (t taskService) ListTasks(ctx context.Context, in *connect.Request[parleyv1.ListTasksRequest]) (*connect.Response[parleyv1.ListTasksResponse], error) {
	svc, err := t.service()
	if err != nil {
		return nil, err
	}
	ids := in.Msg.GetIds()
	if len(ids) > tasks.MaxListIDs {
		return nil, translate.Invalid("ids", "holds %d ids; at most %d are allowed in one call", len(ids), tasks.MaxListIDs)
	}
	for i, id := range ids {
		if id == "" {
			return nil, translate.Invalid("ids["+strconv.Itoa(i)+"]", "is empty")
		}
	}
	switch a := in.Msg.GetAction(); a {
	case parleyv1.TaskAction_TASK_ACTION_UNSPECIFIED, parleyv1.TaskAction_TASK_ACTION_MUSIC, parleyv1.TaskAction_TASK_ACTION_LYRICS:
	default:
		return nil, translate.Invalid("action", "%s is not a filter: give MUSIC, LYRICS or leave it unspecified", a)
	}
	found, err := svc.List(ctx, rpcOf(ctx).p.name, ids, in.Msg.GetAction())
	if err != nil {
		return nil, err
	}
	for i, task := range found {
		found[i] = shown(task)
	}
	return connect.NewResponse(&parleyv1.ListTasksResponse{Tasks: found}), nil
}

// responseService implements parleyv1connect.ResponseServiceHandler over
// the responses stateful dialects stored; failures read as that dialect's.
type responseService struct{ s *Server }

// client is the stateful dialect whose errors the service reports, or nil.
func (rs responseService) client() translate.StoredClient {
	if rs.s.stateful == nil {
		return nil
	}
	return rs.s.stateful.stored
}

func (rs responseService) GetResponse(ctx context.Context, in *connect.Request[parleyv1.GetResponseRequest]) (*connect.Response[parleyv1.GetResponseResponse], error) {
	if in.Msg.GetId() == "" {
		return nil, translate.Invalid("id", "is required")
	}
	rec, err := rs.s.stored.Get(ctx, rs.client(), rpcOf(ctx).p.name, in.Msg.GetId(), "id")
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&parleyv1.GetResponseResponse{Response: rec}), nil
}

func (rs responseService) DeleteResponse(ctx context.Context, in *connect.Request[parleyv1.DeleteResponseRequest]) (*connect.Response[parleyv1.DeleteResponseResponse], error) {
	if in.Msg.GetId() == "" {
		return nil, translate.Invalid("id", "is required")
	}
	if err := rs.s.stored.Delete(ctx, rs.client(), rpcOf(ctx).p.name, in.Msg.GetId(), "id"); err != nil {
		return nil, err
	}
	return connect.NewResponse(&parleyv1.DeleteResponseResponse{Id: in.Msg.GetId()}), nil
}
