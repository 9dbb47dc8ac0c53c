package server

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/govern"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// adminGate checks admin keys on the Connect AdminService.
type adminGate struct{ s *Server }

func (g adminGate) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		err := g.s.adminAuth(req.Header())
		if errors.Is(err, errAdminOff) {
			return nil, connect.NewError(connect.CodeUnimplemented, errors.New("the admin service is off: no admin key is configured"))
		}
		if err == nil {
			var resp connect.AnyResponse
			if resp, err = next(ctx, req); err == nil {
				return resp, nil
			}
		}
		var ce *connect.Error
		if errors.As(err, &ce) {
			return nil, ce
		}
		e := translate.ToProto(err)
		if e.GetCode() == parleyv1.Code_CODE_INTERNAL || e.GetCode() == parleyv1.Code_CODE_UNKNOWN {
			e = &parleyv1.Error{Code: e.GetCode(), Message: "internal error"}
		}
		return nil, connectError(e)
	}
}

func (g adminGate) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler refuses streaming calls: the service has none, and
// one added later must not be open by default.
func (g adminGate) WrapStreamingHandler(connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(context.Context, connect.StreamingHandlerConn) error {
		return connect.NewError(connect.CodeUnimplemented, errors.New("the admin service has no streaming calls"))
	}
}

// adminService implements parleyv1connect.AdminServiceHandler.
type adminService struct{ s *Server }

func (a adminService) CreateKey(ctx context.Context, in *connect.Request[parleyv1.CreateKeyRequest]) (*connect.Response[parleyv1.CreateKeyResponse], error) {
	if in.Msg.GetKey() == nil {
		return nil, translate.Invalid("key", "is required")
	}
	k, err := a.s.admin.CreateKey(ctx, in.Msg.GetKey(), "key.")
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&parleyv1.CreateKeyResponse{Key: k}), nil
}

func (a adminService) ListKeys(ctx context.Context, _ *connect.Request[parleyv1.ListKeysRequest]) (*connect.Response[parleyv1.ListKeysResponse], error) {
	ks, err := a.s.admin.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&parleyv1.ListKeysResponse{Keys: ks}), nil
}

func (a adminService) UpdateKey(ctx context.Context, in *connect.Request[parleyv1.UpdateKeyRequest]) (*connect.Response[parleyv1.UpdateKeyResponse], error) {
	k := in.Msg.GetKey()
	if k.GetName() == "" {
		return nil, translate.Invalid("key.name", "is required")
	}
	out, err := a.s.admin.UpdateKey(ctx, k.GetName(), k, in.Msg.GetUpdateMask().GetPaths(), "key.")
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&parleyv1.UpdateKeyResponse{Key: out}), nil
}

func (a adminService) RevokeKey(ctx context.Context, in *connect.Request[parleyv1.RevokeKeyRequest]) (*connect.Response[parleyv1.RevokeKeyResponse], error) {
	if in.Msg.GetName() == "" {
		return nil, translate.Invalid("name", "is required")
	}
	k, err := a.s.admin.RevokeKey(ctx, in.Msg.GetName())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&parleyv1.RevokeKeyResponse{Key: k}), nil
}

func (a adminService) QueryUsage(ctx context.Context, in *connect.Request[parleyv1.QueryUsageRequest]) (*connect.Response[parleyv1.QueryUsageResponse], error) {
	m := in.Msg
	now := time.Now().UTC()
	q := store.UsageQuery{GroupBy: m.GetGroupBy(), Key: m.GetKey(), Model: m.GetModel(), Upstream: m.GetUpstream(), To: now,
		From: time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)}
	if m.GetStartTime() != nil {
		q.From = m.GetStartTime().AsTime()
	}
	if m.GetEndTime() != nil {
		q.To = m.GetEndTime().AsTime()
	}
	rows, err := a.s.admin.Usage(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &parleyv1.QueryUsageResponse{Rows: make([]*parleyv1.UsageRow, len(rows))}
	for i, r := range rows {
		out.Rows[i] = &parleyv1.UsageRow{
			Key: r.Key, Model: r.Model, Upstream: r.Upstream, Dialect: r.Dialect, Operation: r.Operation,
			Status: int32(r.Status), Day: r.Day, Requests: r.Requests, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, ReasoningTokens: r.ReasoningTokens,
			CostUsd: float64(r.CostNanos) / govern.NanosPerUSD,
		}
	}
	return connect.NewResponse(out), nil
}
