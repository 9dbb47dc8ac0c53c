package messages

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Request settings, both ways: the generation settings, output_config
// (effort and structured-output format), cache_control breakpoints, the
// settings this dialect has no field for (Outgoing.Dropped), and the
// members of a client of this dialect that ride in the extension bag.

// DefaultMaxTokens is max_tokens when the client's dialect let it be unset;
// every model of this dialect can produce at least this many tokens.
const DefaultMaxTokens = 8192

func isEmptyGeneration(g *parleyv1.GenerationConfig) bool {
	return g.MaxOutputTokens == nil && g.Temperature == nil && g.TopP == nil && g.TopK == nil && len(g.StopSequences) == 0
}

func (d *decoder) outputConfig(req *parleyv1.Request, oc *outputConfig) error {
	if oc.Effort != "" {
		e, ok := effortFromWire[oc.Effort]
		if !ok {
			return translate.Invalid("output_config.effort", "Input should be 'low', 'medium', 'high' or 'max'")
		}
		if req.Reasoning == nil {
			req.Reasoning = &parleyv1.ReasoningConfig{}
		}
		req.Reasoning.Effort = e
	}
	if f := oc.Format; f != nil {
		if f.Type != "json_schema" {
			return translate.Invalid("output_config.format.type", "Input should be 'json_schema'")
		}
		req.ResponseFormat = &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Schema: string(f.Schema)}
		jsonx.Keep(&req.Extensions, thisDialect, "output_config/format", f.Unknown)
	}
	jsonx.Keep(&req.Extensions, thisDialect, "output_config", oc.Unknown)
	return nil
}

// dropped lists the settings of a request that this dialect has no field
// for; they are not sent.
func dropped(req *parleyv1.Request) []string {
	out := translate.RarerSettings(req)
	switch req.GetResponseFormat().GetKind() {
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT, parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_ENUM:
		// Only a JSON schema has a form here (output_config.format).
		out = append(out, "response_format")
	}
	return out
}

func readCacheControl(cc *cacheControl, path string) (*parleyv1.CacheControl, error) {
	if cc.Type != "ephemeral" {
		return nil, translate.Invalid(path+".type", "Input should be 'ephemeral'")
	}
	out := &parleyv1.CacheControl{}
	switch cc.TTL {
	case "":
	case "5m":
		out.Ttl = durationpb.New(5 * time.Minute)
	case "1h":
		out.Ttl = durationpb.New(time.Hour)
	default:
		return nil, translate.Invalid(path+".ttl", "Input should be '5m' or '1h'")
	}
	return out, nil
}

func wireCacheControl(cc *parleyv1.CacheControl) *cacheControl {
	if cc == nil {
		return nil
	}
	out := &cacheControl{Type: "ephemeral"}
	if ttl := cc.GetTtl(); ttl != nil {
		d := ttl.AsDuration()
		if d > 5*time.Minute {
			out.TTL = "1h"
		} else {
			out.TTL = "5m"
		}
	}
	return out
}

// take returns the client's unknown members under prefix, when the client
// spoke this dialect.
func (e *encoder) take(prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(e.req.GetExtensions(), thisDialect, prefix)
}

// partUnknown returns the client's unknown members of a part's block.
// Citations kept raw are left out: they go out in the block's own
// citations field (wireCitations, and media in part), and a member
// written twice is not JSON the service reads as sent.
func (e *encoder) partUnknown(p *parleyv1.Part) jsonx.Unknown {
	if !e.same {
		return nil
	}
	u := jsonx.Take(p.GetExtensions(), thisDialect, "")
	delete(u, "citations")
	return u
}
