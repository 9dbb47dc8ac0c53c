package openai

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// The enumerations both dialects spell the same way.

var efforts = map[string]parleyv1.ReasoningEffort{
	"none":    parleyv1.ReasoningEffort_REASONING_EFFORT_NONE,
	"minimal": parleyv1.ReasoningEffort_REASONING_EFFORT_MINIMAL,
	"low":     parleyv1.ReasoningEffort_REASONING_EFFORT_LOW,
	"medium":  parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
	"high":    parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH,
	"xhigh":   parleyv1.ReasoningEffort_REASONING_EFFORT_XHIGH,
}

// Effort reads a reasoning effort word.
func Effort(s string) (parleyv1.ReasoningEffort, bool) {
	e, ok := efforts[s]
	return e, ok
}

// EffortWord spells a reasoning effort, "" when unset.
func EffortWord(e parleyv1.ReasoningEffort) string {
	for w, v := range efforts {
		if v == e {
			return w
		}
	}
	return ""
}

var tiers = map[string]parleyv1.ServiceTier{
	"auto":     parleyv1.ServiceTier_SERVICE_TIER_AUTO,
	"default":  parleyv1.ServiceTier_SERVICE_TIER_DEFAULT,
	"flex":     parleyv1.ServiceTier_SERVICE_TIER_FLEX,
	"priority": parleyv1.ServiceTier_SERVICE_TIER_PRIORITY,
	"scale":    parleyv1.ServiceTier_SERVICE_TIER_SCALE,
}

// ServiceTier reads a service tier word.
func ServiceTier(s string) (parleyv1.ServiceTier, bool) {
	t, ok := tiers[s]
	return t, ok
}

// ServiceTierWord spells a service tier, "" when unset or when the tier has
// no word here.
func ServiceTierWord(t parleyv1.ServiceTier) string {
	for w, v := range tiers {
		if v == t {
			return w
		}
	}
	return ""
}

var verbosities = map[string]parleyv1.Verbosity{
	"low":    parleyv1.Verbosity_VERBOSITY_LOW,
	"medium": parleyv1.Verbosity_VERBOSITY_MEDIUM,
	"high":   parleyv1.Verbosity_VERBOSITY_HIGH,
}

// Verbosity reads a verbosity word.
func Verbosity(s string) (parleyv1.Verbosity, bool) {
	v, ok := verbosities[s]
	return v, ok
}

// VerbosityWord spells a verbosity, "" when unset.
func VerbosityWord(v parleyv1.Verbosity) string {
	for w, x := range verbosities {
		if x == v {
			return w
		}
	}
	return ""
}
