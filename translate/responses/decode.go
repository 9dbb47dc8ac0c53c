package responses

import (
	"regexp"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/structpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// D is this package's dialect.
const D = parleyv1.Dialect_DIALECT_RESPONSES

// Request-level spelling notes.
const (
	extInputString     = "@input_string"     // input was a string
	extGenerateSummary = "@generate_summary" // the summary was asked for with the deprecated name
	extAllowedTools    = "@allowed_tools"    // tool_choice was an allowed_tools object
	extToolChoiceType  = "@tool_choice_type" // the hosted tool type tool_choice named
)

// Client is the responses dialect as clients speak it.
type Client struct{}

var (
	_ translate.Client      = Client{}
	_ translate.CountClient = Client{}
)

// Dialect implements translate.Client.
func (Client) Dialect() parleyv1.Dialect { return D }

// APIKey implements translate.Client: clients send Authorization: Bearer.
func (Client) APIKey(in *translate.Incoming) string { return translate.BearerToken(in.Header) }

// DecodeRequest implements translate.Client.
func (Client) DecodeRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if err := jsonx.Unmarshal(in.Body, &w); err != nil {
		return nil, openai.InputError(err)
	}
	return decodeRequest(&w)
}

func decodeRequest(w *Request) (*parleyv1.Request, error) {
	if w.Model == "" {
		return nil, translate.Invalid("model", "is required")
	}
	if w.Input == nil && (w.PreviousResponseID == nil || *w.PreviousResponseID == "") {
		return nil, translate.Invalid("input", "is required")
	}
	req := &parleyv1.Request{Model: w.Model, Stream: w.Stream != nil && *w.Stream, Metadata: w.Metadata, Store: w.Store}
	jsonx.Keep(&req.Extensions, D, "", w.Unknown)
	if req.Extensions == nil {
		req.Extensions = &parleyv1.Extensions{Dialect: D}
	}
	if w.Instructions != nil {
		req.Instructions = []*parleyv1.Part{translate.TextPart(*w.Instructions)}
	}
	if w.PreviousResponseID != nil {
		req.PreviousResponseId = *w.PreviousResponseID
	}
	if in := w.Input; in != nil {
		if in.String {
			jsonx.KeepValue(&req.Extensions, D, extInputString, jsontext.Value("true"))
			req.Messages = []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart(in.Text))}
		}
		d := &itemDecoder{client: true, names: map[string]string{}}
		for i := range in.Items {
			m, err := d.item(&in.Items[i], "input.["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			if m != nil {
				req.Messages = append(req.Messages, m)
			}
		}
	}
	if err := decodeTools(req, w); err != nil {
		return nil, err
	}
	if err := decodeSettings(req, w); err != nil {
		return nil, err
	}
	return req, nil
}

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
	for i := range w.Tools {
		wt := &w.Tools[i]
		field := "tools.[" + strconv.Itoa(i) + "]"
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
				jsonx.Keep(&t.Extensions, D, "ranking_options", ro.Unknown)
			}
			if len(wt.Filters) > 0 && wt.Filters.Kind() != 'n' {
				f, err := decodeFilter(wt.Filters, field+".filters")
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
				jsonx.Keep(&t.Extensions, D, "user_location", l.Unknown)
			}
			t.Kind = &parleyv1.Tool_WebSearch{WebSearch: ws}
		case "computer_use_preview", "computer":
			if wt.DisplayWidth == nil || wt.DisplayHeight == nil || wt.Environment == "" {
				return translate.Invalid(field, "computer_use_preview needs display_width, display_height and environment")
			}
			t.Kind = &parleyv1.Tool_ComputerUse{ComputerUse: &parleyv1.ComputerUseTool{Version: wt.Type, DisplayWidth: int32(*wt.DisplayWidth), DisplayHeight: int32(*wt.DisplayHeight), Environment: wt.Environment}}
		default:
			raw, err := jsonx.Marshal(wt)
			if err != nil {
				return translate.Invalid(field, "%v", err)
			}
			jsonx.KeepValue(&t.Extensions, D, extTool, raw)
			req.Tools = append(req.Tools, t)
			continue
		}
		jsonx.Keep(&t.Extensions, D, "", wt.Unknown)
		req.Tools = append(req.Tools, t)
	}
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
			jsonx.KeepValue(&req.Extensions, D, extAllowedTools, jsontext.Value("true"))
		case tc.Type == "file_search":
			c.Mode, c.Kind = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH
		case tc.Type == "web_search_preview" || tc.Type == "web_search_preview_2025_03_11" || tc.Type == "web_search":
			c.Mode, c.Kind = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH
			jsonx.KeepValue(&req.Extensions, D, extToolChoiceType, quote(tc.Type))
		case tc.Type == "computer_use_preview":
			c.Mode, c.Kind = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE
		default:
			return translate.Invalid("tool_choice.type", "must be function, allowed_tools, file_search, web_search_preview or computer_use_preview; got %q", tc.Type)
		}
		jsonx.Keep(&req.Extensions, D, "tool_choice", tc.Unknown)
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

var inclusions = map[string]parleyv1.OutputInclusion{
	"reasoning.encrypted_content":           parleyv1.OutputInclusion_OUTPUT_INCLUSION_REASONING_ENCRYPTED_CONTENT,
	"file_search_call.results":              parleyv1.OutputInclusion_OUTPUT_INCLUSION_FILE_SEARCH_RESULTS,
	"message.input_image.image_url":         parleyv1.OutputInclusion_OUTPUT_INCLUSION_INPUT_IMAGE_URLS,
	"computer_call_output.output.image_url": parleyv1.OutputInclusion_OUTPUT_INCLUSION_COMPUTER_OUTPUT_IMAGE_URLS,
	"message.output_text.logprobs":          parleyv1.OutputInclusion_OUTPUT_INCLUSION_OUTPUT_LOGPROBS,
	"web_search_call.action.sources":        parleyv1.OutputInclusion_OUTPUT_INCLUSION_WEB_SEARCH_SOURCES,
	"code_interpreter_call.outputs":         parleyv1.OutputInclusion_OUTPUT_INCLUSION_CODE_EXECUTION_OUTPUTS,
}

var summaries = map[string]parleyv1.ReasoningSummary{
	"auto":     parleyv1.ReasoningSummary_REASONING_SUMMARY_AUTO,
	"concise":  parleyv1.ReasoningSummary_REASONING_SUMMARY_CONCISE,
	"detailed": parleyv1.ReasoningSummary_REASONING_SUMMARY_DETAILED,
}

var formatName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func decodeSettings(req *parleyv1.Request, w *Request) error {
	g := &parleyv1.GenerationConfig{Temperature: w.Temperature, TopP: w.TopP}
	if t := w.Temperature; t != nil && (*t < 0 || *t > 2) {
		return translate.Invalid("temperature", "must be between 0 and 2; got %v", *t)
	}
	if p := w.TopP; p != nil && (*p < 0 || *p > 1) {
		return translate.Invalid("top_p", "must be between 0 and 1; got %v", *p)
	}
	if n := w.MaxOutputTokens; n != nil {
		// The service's own lower bound.
		if *n < 16 {
			return translate.Invalid("max_output_tokens", "must be at least 16; got %d", *n)
		}
		g.MaxOutputTokens = new(int32(min(*n, 1<<31-1)))
	}
	if n := w.TopLogprobs; n != nil {
		if *n < 0 || *n > 20 {
			return translate.Invalid("top_logprobs", "must be between 0 and 20")
		}
		g.TopLogprobs = new(int32(*n))
	}
	for i, s := range w.Include {
		inc, ok := inclusions[s]
		if !ok {
			return translate.Invalid("include.["+strconv.Itoa(i)+"]", "unknown value %q", s)
		}
		req.Include = append(req.Include, inc)
		if inc == parleyv1.OutputInclusion_OUTPUT_INCLUSION_OUTPUT_LOGPROBS {
			g.Logprobs = new(true)
		}
	}
	if t := w.Text; t != nil {
		if t.Verbosity != nil {
			v, ok := openai.Verbosity(*t.Verbosity)
			if !ok {
				return translate.Invalid("text.verbosity", "must be low, medium or high; got %q", *t.Verbosity)
			}
			g.Verbosity = v
		}
		if f := t.Format; f != nil {
			rf, err := decodeFormat(f)
			if err != nil {
				return err
			}
			req.ResponseFormat = rf
			jsonx.Keep(&req.Extensions, D, "text/format", f.Unknown)
		}
		jsonx.Keep(&req.Extensions, D, "text", t.Unknown)
	}
	req.Generation = g
	if r := w.Reasoning; r != nil {
		rc := &parleyv1.ReasoningConfig{}
		if r.Effort != nil {
			e, ok := openai.Effort(*r.Effort)
			if !ok {
				return translate.Invalid("reasoning.effort", "must be one of none, minimal, low, medium, high, xhigh; got %q", *r.Effort)
			}
			rc.Effort = e
		}
		summary := r.Summary
		if summary == nil && r.GenerateSummary != nil {
			summary = r.GenerateSummary
			jsonx.KeepValue(&req.Extensions, D, extGenerateSummary, jsontext.Value("true"))
		}
		if summary != nil {
			s, ok := summaries[*summary]
			if !ok {
				return translate.Invalid("reasoning.summary", "must be auto, concise or detailed; got %q", *summary)
			}
			rc.Summary = s
		}
		jsonx.Keep(&req.Extensions, D, "reasoning", r.Unknown)
		req.Reasoning = rc
	}
	if err := openai.Metadata("metadata", w.Metadata); err != nil {
		return err
	}
	if w.ServiceTier != nil {
		t, ok := openai.ServiceTier(*w.ServiceTier)
		if !ok {
			return translate.Invalid("service_tier", "must be one of auto, default, flex, priority; got %q", *w.ServiceTier)
		}
		req.ServiceTier = t
	}
	if w.Truncation != nil {
		switch *w.Truncation {
		case "auto":
			req.Truncation = parleyv1.Truncation_TRUNCATION_AUTO
		case "disabled":
			req.Truncation = parleyv1.Truncation_TRUNCATION_DISABLED
		default:
			return translate.Invalid("truncation", "must be auto or disabled; got %q", *w.Truncation)
		}
	}
	if w.User != nil {
		req.EndUserId = *w.User
	}
	return nil
}

func decodeFormat(f *Format) (*parleyv1.ResponseFormat, error) {
	switch f.Type {
	case "text":
		return &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT}, nil
	case "json_object":
		return &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT}, nil
	case "json_schema":
		if !formatName.MatchString(f.Name) {
			return nil, translate.Invalid("text.format.name", "must be 1 to 64 letters, digits, underscores or dashes; got %q", f.Name)
		}
		if len(f.Schema) == 0 || f.Schema.Kind() != '{' {
			return nil, translate.Invalid("text.format.schema", "is required and must be a JSON schema object")
		}
		return &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Name: f.Name, Description: deref(f.Description), Schema: string(f.Schema), Strict: f.Strict}, nil
	}
	return nil, translate.Invalid("text.format.type", "must be text, json_schema or json_object; got %q", f.Type)
}
