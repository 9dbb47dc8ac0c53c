package server

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/telemetry"
)

// endSpan names the request's span after the GenAI conventions ("chat
// {model}") and closes it with what the log line says of the request:
// never a prompt, a completion or a key, only the key's name.
func (m *meter) endSpan(dialect string, status int, e *parleyv1.Error) {
	span := m.span
	if span == nil {
		return
	}
	defer span.End()
	if !span.IsRecording() {
		return
	}
	c := &m.call
	op := c.Operation
	if op == "" {
		op = dispatch.OperationChat
	}
	if c.Model != "" {
		span.SetName(op + " " + c.Model)
	}
	attrs := []attribute.KeyValue{
		telemetry.ClientDialect.String(dialect),
		telemetry.HTTPStatus.Int(status),
		telemetry.Attempts.Int(c.Attempts),
	}
	if m.key != "" {
		attrs = append(attrs, telemetry.KeyName.String(m.key))
	}
	if c.Model != "" {
		attrs = append(attrs, telemetry.OperationName.String(op), telemetry.RequestModel.String(c.Model))
	}
	if c.Upstream != "" {
		// The response model is the one the upstream says answered (a
		// dated version of an alias, say), else the one it was asked for.
		model := m.model
		if model == "" {
			model = c.UpstreamModel
		}
		attrs = append(attrs, telemetry.Upstream.String(c.Upstream), telemetry.ProviderName.String(c.Provider),
			telemetry.ResponseModel.String(model), telemetry.Forwarded.Bool(c.Forwarded))
	}
	if u := m.usage; u != nil {
		attrs = append(attrs, telemetry.InputTokens.Int64(u.GetInputTokens()), telemetry.OutputTokens.Int64(u.GetOutputTokens()))
	}
	if len(m.finishes) > 0 {
		attrs = append(attrs, telemetry.FinishReasons.StringSlice(m.finishes))
	}
	if m.ttft > 0 {
		attrs = append(attrs, telemetry.TimeToFirstTokenMS.Float64(float64(m.ttft.Microseconds())/1000))
	}
	if e != nil {
		attrs = append(attrs, telemetry.ErrorType.String(e.GetCode().String()))
		span.SetStatus(codes.Error, e.GetCode().String())
	}
	span.SetAttributes(attrs...)
}

// finishName spells a finish reason as the GenAI conventions do: the
// canonical name, lower case, without its prefix (stop, length, ...).
func finishName(r parleyv1.FinishReason) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "FINISH_REASON_"))
}
