package responses

import (
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// appendRequest appends the request w as jsonx.Marshal writes it, without
// reflection (TestQuickRequestIsTheMarshalledRequest): the input as a
// string or as items (appendItem, as output items are written), the
// instructions, every tool and setting, and the members kept from a
// client of this dialect. ok is false for what it leaves to Marshal (a
// tool choice's list of tools) and what Marshal would refuse.
func appendRequest(b []byte, w *Request) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.NonEmpty(b, `"model":`, w.Model); !ok {
		return b, false
	}
	if in := w.Input; in != nil {
		if in.String {
			b, ok = m.String(b, `"input":`, in.Text)
		} else {
			b, ok = jsonx.List(m.Name(b, `"input":[`), in.Items, appendItem)
		}
		if !ok {
			return b, false
		}
	}
	if b, ok = omitNilString(&m, b, `"instructions":`, w.Instructions); !ok {
		return b, false
	}
	if w.Tools != nil {
		if b, ok = jsonx.List(m.Name(b, `"tools":[`), w.Tools, appendTool); !ok {
			return b, false
		}
	}
	if tc := w.ToolChoice; tc != nil {
		if b, ok = appendToolChoice(m.Name(b, `"tool_choice":`), tc); !ok {
			return b, false
		}
	}
	if t := w.Text; t != nil {
		var tm jsonx.Members
		b = m.Name(b, `"text":{`)
		if f := t.Format; f != nil {
			if b, ok = appendFormat(tm.Name(b, `"format":`), f); !ok {
				return b, false
			}
		}
		if b, ok = omitNilString(&tm, b, `"verbosity":`, t.Verbosity); !ok {
			return b, false
		}
		if b, ok = tm.Kept(b, t.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if r := w.Reasoning; r != nil {
		var rm jsonx.Members
		b = m.Name(b, `"reasoning":{`)
		for _, f := range [...]struct {
			name string
			s    *string
		}{{`"effort":`, r.Effort}, {`"summary":`, r.Summary}, {`"generate_summary":`, r.GenerateSummary}} {
			if b, ok = omitNilString(&rm, b, f.name, f.s); !ok {
				return b, false
			}
		}
		if b, ok = rm.Kept(b, r.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if w.Include != nil {
		if b, ok = jsonx.List(m.Name(b, `"include":[`), w.Include, appendString); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"max_output_tokens":`, w.MaxOutputTokens)
	if w.Metadata != nil {
		if b, ok = jsonx.AppendStringMap(m.Name(b, `"metadata":`), w.Metadata); !ok {
			return b, false
		}
	}
	b = m.Bool(b, `"parallel_tool_calls":`, w.ParallelToolCalls)
	if b, ok = omitNilString(&m, b, `"previous_response_id":`, w.PreviousResponseID); !ok {
		return b, false
	}
	if b, ok = omitNilString(&m, b, `"service_tier":`, w.ServiceTier); !ok {
		return b, false
	}
	b = m.Bool(b, `"store":`, w.Store)
	b = m.Bool(b, `"stream":`, w.Stream)
	if b, ok = m.Float(b, `"temperature":`, w.Temperature); !ok {
		return b, false
	}
	if b, ok = m.Float(b, `"top_p":`, w.TopP); !ok {
		return b, false
	}
	b = m.Int(b, `"top_logprobs":`, w.TopLogprobs)
	for _, f := range [...]struct {
		name string
		s    *string
	}{{`"truncation":`, w.Truncation}, {`"user":`, w.User}, {`"prompt_cache_key":`, w.PromptCacheKey}} {
		if b, ok = omitNilString(&m, b, f.name, f.s); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, w.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendTool appends a function or built-in tool.
func appendTool(b []byte, t *tool) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, t.Type); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"name":`, t.Name); !ok {
		return b, false
	}
	if b, ok = omitNilString(&m, b, `"description":`, t.Description); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"parameters":`, t.Parameters); !ok {
		return b, false
	}
	b = m.Bool(b, `"strict":`, t.Strict)
	if t.VectorStoreIDs != nil {
		if b, ok = jsonx.List(m.Name(b, `"vector_store_ids":[`), t.VectorStoreIDs, appendString); !ok {
			return b, false
		}
	}
	if b, ok = m.Raw(b, `"filters":`, t.Filters); !ok {
		return b, false
	}
	b = m.Int(b, `"max_num_results":`, t.MaxNumResults)
	if o := t.RankingOptions; o != nil {
		var om jsonx.Members
		b = m.Name(b, `"ranking_options":{`)
		if b, ok = om.NonEmpty(b, `"ranker":`, o.Ranker); !ok {
			return b, false
		}
		if b, ok = om.Float(b, `"score_threshold":`, o.ScoreThreshold); !ok {
			return b, false
		}
		if b, ok = om.Kept(b, o.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if b, ok = m.NonEmpty(b, `"search_context_size":`, t.SearchContextSize); !ok {
		return b, false
	}
	if l := t.UserLocation; l != nil {
		var lm jsonx.Members
		if b, ok = lm.String(m.Name(b, `"user_location":{`), `"type":`, l.Type); !ok {
			return b, false
		}
		for _, f := range [...]struct {
			name string
			s    *string
		}{{`"city":`, l.City}, {`"region":`, l.Region}, {`"country":`, l.Country}, {`"timezone":`, l.Timezone}} {
			if b, ok = omitNilString(&lm, b, f.name, f.s); !ok {
				return b, false
			}
		}
		if b, ok = lm.Kept(b, l.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if t.Domains != nil {
		if b, ok = jsonx.List(m.Name(b, `"domains":[`), t.Domains, appendString); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"display_width":`, t.DisplayWidth)
	b = m.Int(b, `"display_height":`, t.DisplayHeight)
	if b, ok = m.NonEmpty(b, `"environment":`, t.Environment); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, t.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendToolChoice appends a mode string or an object naming a tool; an
// object's list of tools it leaves to Marshal.
func appendToolChoice(b []byte, tc *ToolChoice) (_ []byte, ok bool) {
	if tc.Mode != "" {
		return jsonx.AppendQuote(b, tc.Mode)
	}
	if tc.Tools != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.NonEmpty(b, `"type":`, tc.Type); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"name":`, tc.Name); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"mode":`, tc.AMode); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, tc.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendFormat appends text.format.
func appendFormat(b []byte, f *format) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, f.Type); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"name":`, f.Name); !ok {
		return b, false
	}
	if b, ok = omitNilString(&m, b, `"description":`, f.Description); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"schema":`, f.Schema); !ok {
		return b, false
	}
	b = m.Bool(b, `"strict":`, f.Strict)
	if b, ok = m.Kept(b, f.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}
