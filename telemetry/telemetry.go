// Package telemetry holds Parley's traces: the OpenTelemetry set-up the
// command makes from the standard OTEL_* environment variables, and the
// attribute names the server and the dispatcher put on their spans.
//
// Tracing is off unless OTEL_TRACES_EXPORTER names an exporter (otlp,
// console; see go.opentelemetry.io/contrib/exporters/autoexport). Each
// client request is a server span, continuing an incoming W3C traceparent;
// each upstream attempt is a client span under it, and the upstream
// request carries its traceparent. Spans carry the OpenTelemetry GenAI
// conventions (gen_ai.*) and Parley's own (parley.*), never the text of a
// prompt or of a completion, and never a key: a key is named by its name.
package telemetry

import (
	"context"
	"errors"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of Parley's spans.
const Name = "github.com/parleyhq/parley"

// on is set once a tracer provider is installed: until then no span is
// started, so that tracing off costs nothing per request.
var on atomic.Bool

// On reports whether tracing is on.
func On() bool { return on.Load() }

// Tracer is the tracer of Parley's spans, the global provider's.
func Tracer() trace.Tracer { return otel.Tracer(Name) }

// Use installs a tracer provider and propagator and turns tracing on, for
// tests; the returned function puts back what was there.
func Use(tp trace.TracerProvider, p propagation.TextMapPropagator) (restore func()) {
	oldTP, oldP, oldOn := otel.GetTracerProvider(), otel.GetTextMapPropagator(), on.Load()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(p)
	on.Store(true)
	return func() {
		otel.SetTracerProvider(oldTP)
		otel.SetTextMapPropagator(oldP)
		on.Store(oldOn)
	}
}

// Propagator reads and writes W3C trace context.
func Propagator() propagation.TextMapPropagator { return otel.GetTextMapPropagator() }

// Setup installs a tracer provider with the exporter OTEL_TRACES_EXPORTER
// names, and W3C trace context propagation; it returns the function that
// flushes and stops it. With the variable unset (or "none") it installs
// nothing and tracing costs a no-op span per request.
func Setup(ctx context.Context, version string) (shutdown func(context.Context) error, enabled bool, err error) {
	none := func(context.Context) error { return nil }
	if e := os.Getenv("OTEL_TRACES_EXPORTER"); e == "" || e == "none" {
		return none, false, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return none, false, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("parley"), semconv.ServiceVersion(version)))
	if err != nil && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return none, false, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	on.Store(true)
	return tp.Shutdown, true, nil
}

// Attribute names, from the OpenTelemetry GenAI conventions and Parley's
// own.
const (
	OperationName      = attribute.Key("gen_ai.operation.name")
	ProviderName       = attribute.Key("gen_ai.provider.name")
	RequestModel       = attribute.Key("gen_ai.request.model")
	ResponseModel      = attribute.Key("gen_ai.response.model")
	InputTokens        = attribute.Key("gen_ai.usage.input_tokens")
	OutputTokens       = attribute.Key("gen_ai.usage.output_tokens")
	FinishReasons      = attribute.Key("gen_ai.response.finish_reasons")
	ErrorType          = attribute.Key("error.type")
	HTTPStatus         = attribute.Key("http.response.status_code")
	ClientDialect      = attribute.Key("parley.client.dialect")
	KeyName            = attribute.Key("parley.key")
	Upstream           = attribute.Key("parley.upstream")
	UpstreamDialect    = attribute.Key("parley.upstream.dialect")
	Attempt            = attribute.Key("parley.attempt")
	Attempts           = attribute.Key("parley.attempts")
	RetryReason        = attribute.Key("parley.retry.reason")
	Forwarded          = attribute.Key("parley.forwarded")
	TimeToFirstTokenMS = attribute.Key("parley.time_to_first_token_ms")
)
