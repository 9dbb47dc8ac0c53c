package responses

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/structpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Tools and the tool choice, in all directions: read from a client's
// request, written toward an upstream, and echoed in a response with the
// service's defaults filled in (echoTools). Calls and their results are in
// tool_calls.go.

var contextSizes = map[string]parleyv1.SearchContextSize{
	"low":    parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_LOW,
	"medium": parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_MEDIUM,
	"high":   parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_HIGH,
}

var operators = map[string]parleyv1.ComparisonOperator{
	"eq": parleyv1.ComparisonOperator_COMPARISON_OPERATOR_EQ, "ne": parleyv1.ComparisonOperator_COMPARISON_OPERATOR_NE,
	"gt": parleyv1.ComparisonOperator_COMPARISON_OPERATOR_GT, "gte": parleyv1.ComparisonOperator_COMPARISON_OPERATOR_GTE,
	"lt": parleyv1.ComparisonOperator_COMPARISON_OPERATOR_LT, "lte": parleyv1.ComparisonOperator_COMPARISON_OPERATOR_LTE,
}

type wireFilter struct {
	Type    string         `json:"type"`
	Key     string         `json:"key,omitzero"`
	Value   jsontext.Value `json:"value,omitzero"`
	Filters []wireFilter   `json:"filters,omitzero"`
}

func decodeFilter(raw jsontext.Value, field string) (*parleyv1.SearchFilter, error) {
	var w wireFilter
	if err := jsonx.Unmarshal(raw, &w); err != nil {
		return nil, translate.Invalid(field, "%v", err)
	}
	return filterOf(&w, field)
}

func filterOf(w *wireFilter, field string) (*parleyv1.SearchFilter, error) {
	switch w.Type {
	case "and", "or":
		c := &parleyv1.CompoundFilter{Operator: parleyv1.LogicalOperator_LOGICAL_OPERATOR_AND}
		if w.Type == "or" {
			c.Operator = parleyv1.LogicalOperator_LOGICAL_OPERATOR_OR
		}
		for i := range w.Filters {
			f, err := filterOf(&w.Filters[i], field+".filters.["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			c.Filters = append(c.Filters, f)
		}
		return &parleyv1.SearchFilter{Kind: &parleyv1.SearchFilter_Compound{Compound: c}}, nil
	}
	op, ok := operators[w.Type]
	if !ok {
		return nil, translate.Invalid(field+".type", "must be eq, ne, gt, gte, lt, lte, and or or; got %q", w.Type)
	}
	if w.Key == "" || len(w.Value) == 0 {
		return nil, translate.Invalid(field, "a comparison filter needs key and value")
	}
	v := &structpb.Value{}
	if err := v.UnmarshalJSON(w.Value); err != nil {
		return nil, translate.Invalid(field+".value", "%v", err)
	}
	switch v.GetKind().(type) {
	case *structpb.Value_StringValue, *structpb.Value_NumberValue, *structpb.Value_BoolValue:
	default:
		return nil, translate.Invalid(field+".value", "must be a string, number or boolean")
	}
	return &parleyv1.SearchFilter{Kind: &parleyv1.SearchFilter_Comparison{Comparison: &parleyv1.ComparisonFilter{Key: w.Key, Operator: op, Value: v}}}, nil
}

func decodeTools(req *parleyv1.Request, w *Request) error {
	if err := decodeToolList(req, w.Tools, "tools", offstack.Run); err != nil {
		return err
	}
	return decodeToolChoice(req, w)
}

// decodeToolList decodes a list of tools at field into req.Tools. deep
// runs what goes by reflection (a kept tool, a file search's filters):
// offstack.Run on the request's stack, inPlace when the list is read off
// it already.
func decodeToolList(req *parleyv1.Request, list []tool, field0 string, deep func(func())) error {
	for i := range list {
		wt := &list[i]
		field := field0 + ".[" + strconv.Itoa(i) + "]"
		t := &parleyv1.Tool{}
		switch wt.Type {
		case "function":
			if wt.Name == "" {
				return translate.Invalid(field+".name", "is required")
			}
			t.Kind = &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: wt.Name, Description: deref(wt.Description), Parameters: string(wt.Parameters), Strict: wt.Strict}}
		case "file_search":
			if len(wt.VectorStoreIDs) == 0 {
				return translate.Invalid(field+".vector_store_ids", "is required")
			}
			fs := &parleyv1.FileSearchTool{VectorStoreIds: wt.VectorStoreIDs}
			if n := wt.MaxNumResults; n != nil {
				if *n < 1 || *n > 50 {
					return translate.Invalid(field+".max_num_results", "must be between 1 and 50; got %d", *n)
				}
				fs.MaxNumResults = new(int32(*n))
			}
			if ro := wt.RankingOptions; ro != nil {
				if st := ro.ScoreThreshold; st != nil && (*st < 0 || *st > 1) {
					return translate.Invalid(field+".ranking_options.score_threshold", "must be between 0 and 1; got %v", *st)
				}
				fs.Ranking = &parleyv1.RankingOptions{Ranker: ro.Ranker, ScoreThreshold: ro.ScoreThreshold}
				jsonx.Keep(&t.Extensions, thisDialect, "ranking_options", ro.Unknown)
			}
			if len(wt.Filters) > 0 && wt.Filters.Kind() != 'n' {
				// Read by reflection, as deep as the filters nest.
				var f *parleyv1.SearchFilter
				var err error
				deep(func() { f, err = decodeFilter(wt.Filters, field+".filters") })
				if err != nil {
					return err
				}
				fs.Filters = f
			}
			t.Kind = &parleyv1.Tool_FileSearch{FileSearch: fs}
		case "web_search_preview", "web_search_preview_2025_03_11", "web_search", "web_search_2025_08_26":
			ws := &parleyv1.WebSearchTool{Version: wt.Type, AllowedDomains: wt.Domains}
			if wt.SearchContextSize != "" {
				cs, ok := contextSizes[wt.SearchContextSize]
				if !ok {
					return translate.Invalid(field+".search_context_size", "must be low, medium or high; got %q", wt.SearchContextSize)
				}
				ws.ContextSize = cs
			}
			if l := wt.UserLocation; l != nil {
				if l.Type != "approximate" {
					return translate.Invalid(field+".user_location.type", "must be approximate")
				}
				ws.UserLocation = &parleyv1.UserLocation{City: deref(l.City), Region: deref(l.Region), Country: deref(l.Country), Timezone: deref(l.Timezone)}
				jsonx.Keep(&t.Extensions, thisDialect, "user_location", l.Unknown)
			}
			t.Kind = &parleyv1.Tool_WebSearch{WebSearch: ws}
		case "computer_use_preview", "computer":
			if wt.DisplayWidth == nil || wt.DisplayHeight == nil || wt.Environment == "" {
				return translate.Invalid(field, "computer_use_preview needs display_width, display_height and environment")
			}
			t.Kind = &parleyv1.Tool_ComputerUse{ComputerUse: &parleyv1.ComputerUseTool{Version: wt.Type, DisplayWidth: int32(*wt.DisplayWidth), DisplayHeight: int32(*wt.DisplayHeight), Environment: wt.Environment}}
		default:
			// A tool kept as it came (a namespace, a custom tool, one
			// Parley does not model) is marshalled and read by
			// reflection through whatever it nests: off the request's
			// stack.
			var kept []*parleyv1.Tool
			var err error
			deep(func() { kept, err = keptTool(wt, t, field) })
			if err != nil {
				return err
			}
			req.Tools = append(req.Tools, kept...)
			continue
		}
		jsonx.Keep(&t.Extensions, thisDialect, "", wt.Unknown)
		req.Tools = append(req.Tools, t)
	}
	return nil
}

// inPlace runs f where it is called.
func inPlace(f func()) { f() }

// keptTool decodes a tool of a type decodeToolList does not model: a
// namespace's members, else t with the tool kept as it came (a custom
// tool also as a function).
func keptTool(wt *tool, t *parleyv1.Tool, field string) ([]*parleyv1.Tool, error) {
	raw, err := jsonx.Marshal(wt)
	if err != nil {
		return nil, translate.Invalid(field, "%v", err)
	}
	if wt.Type == "namespace" {
		members, ok, err := namespaceTools(wt, raw, field)
		if err != nil {
			return nil, err
		}
		if ok {
			return members, nil
		}
	}
	if wt.Type == "custom" {
		if wt.Name == "" {
			return nil, translate.Invalid(field+".name", "is required")
		}
		t.Kind = &parleyv1.Tool_Function{Function: customFunction(wt)}
	}
	markTool.Keep(&t.Extensions, raw)
	return []*parleyv1.Tool{t}, nil
}

func decodeToolChoice(req *parleyv1.Request, w *Request) error {
	if tc := w.ToolChoice; tc != nil {
		c := &parleyv1.ToolChoice{}
		switch {
		case tc.Mode == "auto":
			c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
		case tc.Mode == "none":
			c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE
		case tc.Mode == "required":
			c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED
		case tc.Mode != "":
			return translate.Invalid("tool_choice", "must be none, auto, required or an object; got %q", tc.Mode)
		case tc.Type == "function":
			if tc.Name == "" {
				return translate.Invalid("tool_choice.name", "is required")
			}
			c.Mode, c.Name = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, tc.Name
		case tc.Type == "allowed_tools":
			switch tc.AMode {
			case "auto":
				c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
			case "required":
				c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED
			default:
				return translate.Invalid("tool_choice.mode", "must be auto or required")
			}
			for _, t := range tc.Tools {
				c.AllowedNames = append(c.AllowedNames, t.Name)
			}
			markAllowedTools.Keep(&req.Extensions, jsontext.Value("true"))
		case tc.Type == "file_search":
			c.Mode, c.Kind = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH
		case tc.Type == "web_search_preview" || tc.Type == "web_search_preview_2025_03_11" || tc.Type == "web_search":
			c.Mode, c.Kind = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH
			markToolChoiceType.KeepString(&req.Extensions, tc.Type)
		case tc.Type == "computer_use_preview":
			c.Mode, c.Kind = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE
		default:
			return translate.Invalid("tool_choice.type", "must be function, allowed_tools, file_search, web_search_preview or computer_use_preview; got %q", tc.Type)
		}
		jsonx.Keep(&req.Extensions, thisDialect, "tool_choice", tc.Unknown)
		req.ToolChoice = c
	}
	if w.ParallelToolCalls != nil {
		if req.ToolChoice == nil {
			req.ToolChoice = &parleyv1.ToolChoice{}
		}
		req.ToolChoice.ParallelCalls = w.ParallelToolCalls
	}
	return nil
}

var kindTypes = map[parleyv1.ToolKind]string{
	parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH:  "file_search",
	parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:   "web_search_preview",
	parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE: "computer_use_preview",
}

func (e *encoder) tools(w *Request) error {
	for i, t := range e.req.GetTools() {
		field := "tools[" + strconv.Itoa(i) + "]"
		wt, ok, err := e.tool(t, field)
		if err != nil {
			return err
		}
		if ok {
			w.Tools = append(w.Tools, wt)
		}
	}
	return e.toolChoice(w)
}

// toolChoice sets w's tool choice and parallel tool calls.
func (e *encoder) toolChoice(w *Request) error {
	tc := e.req.GetToolChoice()
	if tc == nil {
		return nil
	}
	w.ParallelToolCalls = tc.ParallelCalls
	mode := ""
	switch tc.GetMode() {
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
		mode = "auto"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		mode = "none"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		mode = "required"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
		switch {
		case tc.GetName() != "":
			w.ToolChoice = &ToolChoice{Type: "function", Name: tc.GetName()}
		case kindTypes[tc.GetKind()] != "":
			typ := kindTypes[tc.GetKind()]
			if s, ok := markToolChoiceType.String(e.req.GetExtensions()); ok && e.same {
				typ = s
			}
			w.ToolChoice = &ToolChoice{Type: typ}
		default:
			return translate.Unsupported(thisDialect, "tool_choice.kind", "the responses style cannot force a %s tool", tc.GetKind())
		}
		w.ToolChoice.Unknown = e.take(e.req.GetExtensions(), "tool_choice")
		return nil
	default:
		return nil
	}
	switch names := tc.GetAllowedNames(); {
	case len(names) == 1 && mode == "required" && !e.has(e.req.GetExtensions(), markAllowedTools):
		w.ToolChoice = &ToolChoice{Type: "function", Name: names[0]}
	case len(names) > 0:
		c := &ToolChoice{Type: "allowed_tools", AMode: mode, Unknown: e.take(e.req.GetExtensions(), "tool_choice")}
		if mode == "none" {
			c.AMode = "auto"
		}
		for _, n := range names {
			c.Tools = append(c.Tools, tool{Type: "function", Name: n})
		}
		w.ToolChoice = c
	default:
		w.ToolChoice = &ToolChoice{Mode: mode}
	}
	return nil
}

func (e *encoder) tool(t *parleyv1.Tool, field string) (tool, bool, error) {
	if e.same && markInInput.In(t.GetExtensions()) {
		return tool{}, false, nil // it goes in its input item, whole
	}
	if f := t.GetFunction(); f != nil && f.GetNamespace() != "" {
		return e.namespaceTool(t, f, field)
	}
	if v, ok := markTool.Value(t.GetExtensions()); ok && e.same {
		// A tool kept whole (a custom tool too, which other dialects get
		// as a function) goes back to a service of this dialect as it came.
		var wt tool
		if err := jsonx.Unmarshal(v, &wt); err != nil {
			return tool{}, false, err
		}
		return wt, true, nil
	}
	unknown := e.take(t.GetExtensions(), "")
	switch k := t.GetKind().(type) {
	case *parleyv1.Tool_Function:
		f := k.Function
		wt := tool{Type: "function", Name: f.GetName(), Strict: f.Strict, Unknown: unknown}
		if f.GetDescription() != "" {
			wt.Description = new(f.GetDescription())
		}
		if f.GetParameters() != "" {
			wt.Parameters = jsontext.Value(f.GetParameters())
		} else if !e.same {
			wt.Parameters = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		if !e.same && wt.Strict == nil {
			// The service takes a function as strict unless told; a
			// schema from another dialect rarely meets strict mode.
			wt.Strict = new(false)
		}
		return wt, true, nil
	case *parleyv1.Tool_FileSearch:
		fs := k.FileSearch
		wt := tool{Type: "file_search", VectorStoreIDs: fs.GetVectorStoreIds(), Unknown: unknown}
		if fs.MaxNumResults != nil {
			wt.MaxNumResults = new(int64(fs.GetMaxNumResults()))
		}
		if r := fs.GetRanking(); r != nil {
			wt.RankingOptions = &rankingOptions{Ranker: r.GetRanker(), ScoreThreshold: r.ScoreThreshold, Unknown: e.take(t.GetExtensions(), "ranking_options")}
		}
		if fs.GetFilters() != nil {
			raw, err := jsonx.Marshal(wireFilterOf(fs.GetFilters()))
			if err != nil {
				return tool{}, false, err
			}
			wt.Filters = raw
		}
		return wt, true, nil
	case *parleyv1.Tool_WebSearch:
		ws := k.WebSearch
		typ := ws.GetVersion()
		if !strings.HasPrefix(typ, "web_search") {
			typ = "web_search_preview"
		}
		wt := tool{Type: typ, Domains: ws.GetAllowedDomains(), Unknown: unknown}
		for w, cs := range contextSizes {
			if cs == ws.GetContextSize() {
				wt.SearchContextSize = w
			}
		}
		if l := ws.GetUserLocation(); l != nil {
			wt.UserLocation = &userLocation{Type: "approximate", Unknown: e.take(t.GetExtensions(), "user_location")}
			for _, f := range []struct {
				dst **string
				v   string
			}{{&wt.UserLocation.City, l.GetCity()}, {&wt.UserLocation.Region, l.GetRegion()}, {&wt.UserLocation.Country, l.GetCountry()}, {&wt.UserLocation.Timezone, l.GetTimezone()}} {
				if f.v != "" {
					*f.dst = new(f.v)
				}
			}
		}
		if len(ws.GetBlockedDomains()) > 0 {
			e.dropped = append(e.dropped, field+".web_search.blocked_domains")
		}
		if ws.MaxUses != nil {
			e.dropped = append(e.dropped, field+".web_search.max_uses")
		}
		return wt, true, nil
	case *parleyv1.Tool_ComputerUse:
		c := k.ComputerUse
		typ := c.GetVersion()
		if typ != "computer" {
			typ = "computer_use_preview"
		}
		env := c.GetEnvironment()
		if env == "" {
			env = "linux"
		}
		return tool{Type: typ, DisplayWidth: new(int64(c.GetDisplayWidth())), DisplayHeight: new(int64(c.GetDisplayHeight())), Environment: env, Unknown: unknown}, true, nil
	case nil:
		if v, ok := markTool.Value(t.GetExtensions()); ok && e.same {
			var wt tool
			if err := jsonx.Unmarshal(v, &wt); err != nil {
				return tool{}, false, err
			}
			return wt, true, nil
		}
		return tool{}, false, nil
	}
	return tool{}, false, translate.Unsupported(thisDialect, field, "the responses style has no %s tool", strings.TrimPrefix(strings.ToLower(kindName(t)), "tool_"))
}

func kindName(t *parleyv1.Tool) string {
	switch t.GetKind().(type) {
	case *parleyv1.Tool_CodeExecution:
		return "code execution"
	case *parleyv1.Tool_Bash:
		return "bash"
	case *parleyv1.Tool_TextEditor:
		return "text editor"
	case *parleyv1.Tool_UrlContext:
		return "URL fetch"
	}
	return "such"
}

func wireFilterOf(f *parleyv1.SearchFilter) map[string]any {
	switch k := f.GetKind().(type) {
	case *parleyv1.SearchFilter_Compound:
		typ := "and"
		if k.Compound.GetOperator() == parleyv1.LogicalOperator_LOGICAL_OPERATOR_OR {
			typ = "or"
		}
		var subs []any
		for _, s := range k.Compound.GetFilters() {
			subs = append(subs, wireFilterOf(s))
		}
		return map[string]any{"type": typ, "filters": subs}
	case *parleyv1.SearchFilter_Comparison:
		typ := ""
		for w, op := range operators {
			if op == k.Comparison.GetOperator() {
				typ = w
			}
		}
		return map[string]any{"type": typ, "key": k.Comparison.GetKey(), "value": k.Comparison.GetValue().AsInterface()}
	}
	return nil
}

// echoTools renders the request's tools as the response echoes them, with
// the service's defaults filled in; all is false when one of them could
// not be rendered (and is left out).
func echoTools(req *parleyv1.Request) (_ []tool, all bool) {
	out := []tool{}
	all = true
	e := &encoder{req: req, same: req.GetExtensions().GetDialect() == thisDialect}
	for _, t := range req.GetTools() {
		wt, ok, err := e.tool(t, "")
		if err != nil {
			all = false
			continue
		}
		if !ok {
			continue
		}
		switch {
		case wt.Type == "function":
			if wt.Strict == nil {
				wt.Strict = new(true)
			}
			if wt.Parameters == nil {
				wt.Parameters = jsontext.Value(`{"type":"object","properties":{}}`)
			}
		case strings.HasPrefix(wt.Type, "web_search"):
			if wt.SearchContextSize == "" {
				wt.SearchContextSize = "medium"
			}
		case wt.Type == "file_search":
			if wt.Filters == nil {
				wt.Filters = jsontext.Value("null")
			}
			if wt.MaxNumResults == nil {
				wt.MaxNumResults = new(int64(20))
			}
			if wt.RankingOptions == nil {
				wt.RankingOptions = &rankingOptions{Ranker: "auto", ScoreThreshold: new(0.0)}
			}
		}
		out = append(out, wt)
	}
	return out, all
}
