package dispatch

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/parleyhq/parley/telemetry"
	"github.com/parleyhq/parley/translate"
)

// The operations a call makes, named as traces name them: chat is the
// GenAI conventions' own; counting tokens has no name there, so it takes
// one of its own.
const (
	OperationChat        = "chat"
	OperationCountTokens = "count_tokens"
	// OperationCompact writes the summary a conversation is compacted
	// into (translate/compaction.go).
	OperationCompact = "compact"
)

// RetryRefusedReasoning is the retry reason of an attempt whose upstream
// refused the reasoning it was sent: the next attempt goes without it.
const RetryRefusedReasoning = "refused_reasoning"

// startAttempt opens the client span of one upstream attempt, under the
// request's span: a stream's attempt lasts until the stream ends.
func startAttempt(ctx context.Context, r *route, t translate.Target, op string, attempt int) (context.Context, trace.Span) {
	if !telemetry.On() {
		return ctx, nil
	}
	return telemetry.Tracer().Start(ctx, op+" "+t.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		telemetry.OperationName.String(op),
		telemetry.ProviderName.String(r.provider),
		telemetry.RequestModel.String(t.Model),
		telemetry.Upstream.String(r.upstream),
		telemetry.UpstreamDialect.String(r.kind),
		telemetry.Attempt.Int(attempt),
	))
}

// endAttempt closes an attempt's span with its outcome: the canonical
// code of a failure names why the next attempt is made (never its
// message, which is the upstream's text).
func endAttempt(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil && span.IsRecording() {
		pe := translate.ToProto(err)
		code, reason := pe.GetCode().String(), pe.GetCode().String()
		if pe.GetRefusedReasoning() {
			reason = RetryRefusedReasoning
		}
		span.SetAttributes(telemetry.ErrorType.String(code), telemetry.RetryReason.String(reason))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}
