package generatecontent

import (
	"fmt"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Safety: a request's safety settings, and the safety ratings and prompt
// feedback of a reply, in both directions.

func safetySettings(req *parleyv1.Request, ss []safetySetting) error {
	mapped := true
	for i, s := range ss {
		cat, okc := parleyv1.HarmCategory_value[strings.ToUpper(s.Category)]
		thr, okt := parleyv1.HarmBlockThreshold_value["HARM_BLOCK_THRESHOLD_"+strings.ToUpper(strings.TrimPrefix(s.Threshold, "HARM_BLOCK_THRESHOLD_"))]
		if s.Category == "" {
			return translate.Invalid(fmt.Sprintf("safetySettings[%d].category", i), "required field category is missing")
		}
		if s.Threshold == "" {
			return translate.Invalid(fmt.Sprintf("safetySettings[%d].threshold", i), "required field threshold is missing")
		}
		if !okc || !okt || len(s.Unknown) > 0 || s.Category != strings.ToUpper(s.Category) || s.Threshold != strings.ToUpper(s.Threshold) {
			mapped = false
			if !okc || !okt {
				continue // a category or threshold newer than Parley: kept raw below
			}
		}
		req.SafetySettings = append(req.SafetySettings, &parleyv1.SafetySetting{Category: parleyv1.HarmCategory(cat), Threshold: parleyv1.HarmBlockThreshold(thr)})
	}
	if !mapped {
		raw, err := jsonx.Marshal(ss)
		if err != nil {
			return err
		}
		markSafety.Keep(&req.Extensions, raw)
	}
	return nil
}

func (e *encoder) safety() []safetySetting {
	if v, ok := markSafety.Value(e.req.GetExtensions()); ok && e.same {
		var raw []safetySetting
		if jsonx.Unmarshal(v, &raw) == nil {
			return raw
		}
	}
	var out []safetySetting
	for _, s := range e.req.GetSafetySettings() {
		out = append(out, safetySetting{Category: s.GetCategory().String(), Threshold: strings.TrimPrefix(s.GetThreshold().String(), "HARM_BLOCK_THRESHOLD_")})
	}
	return out
}

func safetyRatings(rs []safetyRating) []*parleyv1.SafetyRating {
	var out []*parleyv1.SafetyRating
	for _, r := range rs {
		out = append(out, &parleyv1.SafetyRating{
			Category:         parleyv1.HarmCategory(parleyv1.HarmCategory_value[r.Category]),
			Probability:      parleyv1.HarmProbability(parleyv1.HarmProbability_value["HARM_PROBABILITY_"+r.Probability]),
			Blocked:          deref(r.Blocked),
			ProbabilityScore: r.ProbabilityScore,
			Severity:         parleyv1.HarmSeverity(parleyv1.HarmSeverity_value[r.Severity]),
			SeverityScore:    r.SeverityScore,
		})
	}
	return out
}

func wireSafetyRatings(rs []*parleyv1.SafetyRating) []safetyRating {
	var out []safetyRating
	for _, r := range rs {
		w := safetyRating{Category: r.GetCategory().String(), ProbabilityScore: r.ProbabilityScore, SeverityScore: r.SeverityScore}
		if r.GetProbability() != parleyv1.HarmProbability_HARM_PROBABILITY_UNSPECIFIED {
			w.Probability = strings.TrimPrefix(r.GetProbability().String(), "HARM_PROBABILITY_")
		}
		if r.GetSeverity() != parleyv1.HarmSeverity_HARM_SEVERITY_UNSPECIFIED {
			w.Severity = r.GetSeverity().String()
		}
		if r.GetBlocked() {
			w.Blocked = ptr(true)
		}
		out = append(out, w)
	}
	return out
}

func readPromptFeedback(w *promptFeedback, ext **parleyv1.Extensions) *parleyv1.PromptFeedback {
	pf := &parleyv1.PromptFeedback{SafetyRatings: safetyRatings(w.SafetyRatings), BlockReasonMessage: w.BlockReasonMessage}
	if w.BlockReason != "" {
		if v, ok := parleyv1.BlockReason_value["BLOCK_REASON_"+w.BlockReason]; ok {
			pf.BlockReason = parleyv1.BlockReason(v)
		} else {
			pf.BlockReason = parleyv1.BlockReason_BLOCK_REASON_OTHER
			markBlockReason.KeepString(ext, w.BlockReason)
		}
	}
	jsonx.Keep(ext, thisDialect, "promptFeedback", w.Unknown)
	return pf
}

func wirePromptFeedback(pf *parleyv1.PromptFeedback, resp *parleyv1.Response, same bool) *promptFeedback {
	if pf == nil {
		return nil
	}
	w := &promptFeedback{SafetyRatings: wireSafetyRatings(pf.GetSafetyRatings()), BlockReasonMessage: pf.GetBlockReasonMessage()}
	if pf.GetBlockReason() != parleyv1.BlockReason_BLOCK_REASON_UNSPECIFIED {
		w.BlockReason = strings.TrimPrefix(pf.GetBlockReason().String(), "BLOCK_REASON_")
	}
	if same {
		if s, ok := markBlockReason.String(resp.GetExtensions()); ok {
			w.BlockReason = s
		}
		w.Unknown = jsonx.Take(resp.GetExtensions(), thisDialect, "promptFeedback")
	}
	return w
}
