package converse

import (
	"math"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Request settings: inferenceConfig, the model request fields of the
// model families Parley knows (thinking and top_k for Anthropic models),
// structured output, the service tier, request metadata, and the settings
// this dialect has no field for (Outgoing.Dropped).

// anthropicModel reports whether a model id (a model, an inference
// profile such as "us.anthropic.claude-...", or an ARN that names one)
// is one of Anthropic's models, whose request fields Parley knows.
func anthropicModel(model string) bool {
	m := strings.ToLower(model)
	return strings.Contains(m, "anthropic.") || strings.Contains(m, "claude")
}

func (e *encoder) settings(w *Request) error {
	req := e.req
	g := req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	ic := &InferenceConfig{}
	if g.MaxOutputTokens != nil {
		ic.MaxTokens = ptr(g.GetMaxOutputTokens())
	}
	if g.Temperature != nil {
		// Models take [0, 1]; other dialects go to 2, whose upper half
		// means "more random", which 1 is here.
		ic.Temperature = ptr(math.Min(math.Max(g.GetTemperature(), 0), 1))
	}
	ic.TopP = g.TopP
	for _, s := range g.GetStopSequences() {
		if s != "" { // the service refuses empty stop sequences
			ic.StopSequences = append(ic.StopSequences, s)
		}
	}

	fields := map[string]any{}
	anthropic := anthropicModel(e.model())
	if anthropic {
		th, on := e.thinking(ic)
		if on && midTurnUnthought(w.Messages) {
			// As toward the messages dialect (its thinkingOffMidTurn):
			// the models refuse thinking on a tool-use turn whose
			// assistant message does not start with reasoning, so the
			// turn goes on without it.
			th, on = map[string]any{"type": "disabled"}, false
			e.drop("reasoning")
		}
		if th != nil {
			fields["thinking"] = th
		}
		if g.TopK != nil {
			if on {
				e.drop("generation.top_k")
			} else {
				fields["top_k"] = g.GetTopK()
			}
		}
	} else {
		if g.TopK != nil {
			e.drop("generation.top_k")
		}
		if req.GetReasoning() != nil {
			e.drop("reasoning")
		}
	}
	if len(fields) > 0 {
		raw, err := jsonx.Marshal(fields)
		if err != nil {
			return err
		}
		w.AdditionalModelRequestFields = jsontext.Value(raw)
	}
	if ic.MaxTokens != nil || ic.Temperature != nil || ic.TopP != nil || len(ic.StopSequences) > 0 {
		w.InferenceConfig = ic
	}

	switch rf := req.GetResponseFormat(); rf.GetKind() {
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA:
		w.OutputConfig = &outputConfig{TextFormat: &outputFormat{
			Type: "json_schema",
			Structure: outputStructure{JSONSchema: &jsonSchemaDefinition{
				Schema: rf.GetSchema(), Name: rf.GetName(), Description: rf.GetDescription(),
			}},
		}}
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT, parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_ENUM:
		e.drop("response_format") // only a JSON schema has a form here
	}

	switch req.GetServiceTier() {
	case parleyv1.ServiceTier_SERVICE_TIER_PRIORITY:
		w.ServiceTier = &serviceTier{Type: "priority"}
	case parleyv1.ServiceTier_SERVICE_TIER_FLEX:
		w.ServiceTier = &serviceTier{Type: "flex"}
	case parleyv1.ServiceTier_SERVICE_TIER_DEFAULT, parleyv1.ServiceTier_SERVICE_TIER_STANDARD_ONLY:
		w.ServiceTier = &serviceTier{Type: "default"}
	case parleyv1.ServiceTier_SERVICE_TIER_SCALE:
		e.drop("service_tier")
	}

	if md := req.GetMetadata(); len(md) > 0 {
		if metadataFits(md) {
			w.RequestMetadata = md
		} else {
			e.drop("metadata")
		}
	}
	e.dropUnsupported()
	return nil
}

// metadataKey is what the service takes as a request metadata key or
// value.
var metadataKey = regexp.MustCompile(`^[a-zA-Z0-9\s:_@$#=/+,.-]{1,256}$`)

// metadataFits reports whether a client's metadata is what requestMetadata
// takes: at most 16 pairs, keys and values of 1 to 256 of the characters
// it allows (values may be empty).
func metadataFits(md map[string]string) bool {
	if len(md) > 16 {
		return false
	}
	for k, v := range md {
		if !metadataKey.MatchString(k) || v != "" && !metadataKey.MatchString(v) {
			return false
		}
	}
	return true
}

// dropUnsupported lists the settings of a request that this dialect has
// no field for; they are not sent.
func (e *encoder) dropUnsupported() {
	for _, path := range translate.RarerSettings(e.req) {
		e.drop(path)
	}
	if e.req.GetEndUserId() != "" {
		e.drop("end_user_id")
	}
}
