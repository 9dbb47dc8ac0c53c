package server

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/govern"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// usageRowJSON is one group of the usage ledger; the dimensions not
// grouped by are left out.
type usageRowJSON struct {
	Key              string  `json:"key,omitempty"`
	Model            string  `json:"model,omitempty"`
	Upstream         string  `json:"upstream,omitempty"`
	Dialect          string  `json:"dialect,omitempty"`
	Operation        string  `json:"operation,omitempty"`
	Status           int     `json:"status,omitzero"`
	Day              string  `json:"day,omitempty"`
	Hour             string  `json:"hour,omitempty"`
	Requests         int64   `json:"requests"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	DurationMS       int64   `json:"duration_ms"`
}

type usageReply struct {
	From    time.Time      `json:"from"`
	To      time.Time      `json:"to"`
	GroupBy []string       `json:"group_by"`
	Data    []usageRowJSON `json:"data"`
}

// csvReply is a reply written as CSV: a header row, then the rows.
type csvReply [][]string

// usageQuery reads /admin/v1/usage's query: from and to as RFC 3339 times
// or days (from defaults to the start of the month, to to now), group_by
// as a comma-separated list, and filters by key, model, upstream, dialect,
// operation and status.
func usageQuery(r *http.Request, now time.Time) (store.UsageQuery, error) {
	q := r.URL.Query()
	parse := func(name string, def time.Time) (time.Time, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t, nil
		}
		if t, err := time.Parse(time.DateOnly, v); err == nil {
			return t, nil
		}
		return time.Time{}, translate.Invalid(name, "%q is not an RFC 3339 time or a day (2006-01-02)", v)
	}
	month := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	var out store.UsageQuery
	var err error
	if out.From, err = parse("from", month); err != nil {
		return out, err
	}
	if out.To, err = parse("to", now); err != nil {
		return out, err
	}
	if g := q.Get("group_by"); g != "" {
		for d := range strings.SplitSeq(g, ",") {
			d = strings.TrimSpace(d)
			if !slices.Contains(store.GroupDimensions, d) {
				return out, translate.Invalid("group_by", "%q is not one of %s", d, strings.Join(store.GroupDimensions, ", "))
			}
			if !slices.Contains(out.GroupBy, d) {
				out.GroupBy = append(out.GroupBy, d)
			}
		}
	}
	out.Key, out.Model, out.Upstream, out.Dialect, out.Operation = q.Get("key"), q.Get("model"), q.Get("upstream"), q.Get("dialect"), q.Get("operation")
	if v := q.Get("status"); v != "" {
		if out.Status, err = strconv.Atoi(v); err != nil || out.Status < 100 || out.Status > 599 {
			return out, translate.Invalid("status", "%q is not an HTTP status", v)
		}
	}
	return out, nil
}

func (s *Server) adminUsage(r *http.Request) (int, any, error) {
	q, err := usageQuery(r, time.Now())
	if err != nil {
		return 0, nil, err
	}
	rows, err := s.admin.Usage(r.Context(), q)
	if err != nil {
		return 0, nil, err
	}
	out := usageReply{From: q.From.UTC(), To: q.To.UTC(), GroupBy: q.GroupBy, Data: make([]usageRowJSON, len(rows))}
	if out.GroupBy == nil {
		out.GroupBy = []string{}
	}
	for i, row := range rows {
		out.Data[i] = usageRowJSON{
			Key: row.Key, Model: row.Model, Upstream: row.Upstream, Dialect: row.Dialect, Operation: row.Operation,
			Status: row.Status, Day: row.Day, Requests: row.Requests, InputTokens: row.InputTokens,
			OutputTokens: row.OutputTokens, CacheReadTokens: row.CacheReadTokens, CacheWriteTokens: row.CacheWriteTokens,
			ReasoningTokens: row.ReasoningTokens, CostUSD: float64(row.CostNanos) / govern.NanosPerUSD,
			DurationMS: row.DurationNanos / int64(time.Millisecond), Hour: hourText(q.GroupBy, row.Hour),
		}
	}
	if strings.Contains(r.Header.Get("Accept"), "text/csv") {
		return http.StatusOK, usageCSV(q.GroupBy, rows), nil
	}
	return http.StatusOK, out, nil
}

// usageCSV writes usage rows as CSV, the grouped dimensions first.
func usageCSV(groups []string, rows []store.UsageRow) csvReply {
	head := append(slices.Clone(groups), "requests", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "cost_usd", "duration_ms")
	out := csvReply{head}
	for _, row := range rows {
		var line []string
		for _, g := range groups {
			line = append(line, csvCell(dimension(row, g)))
		}
		for _, n := range []int64{row.Requests, row.InputTokens, row.OutputTokens, row.CacheReadTokens, row.CacheWriteTokens, row.ReasoningTokens} {
			line = append(line, strconv.FormatInt(n, 10))
		}
		line = append(line, strconv.FormatFloat(float64(row.CostNanos)/govern.NanosPerUSD, 'f', -1, 64), strconv.FormatInt(row.DurationNanos/int64(time.Millisecond), 10))
		out = append(out, line)
	}
	return out
}

// csvCell keeps a value a spreadsheet would read as a formula (a model
// name a client chose under a glob, say) as text.
func csvCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

func dimension(row store.UsageRow, g string) string {
	switch g {
	case store.GroupKey:
		return row.Key
	case store.GroupModel:
		return row.Model
	case store.GroupUpstream:
		return row.Upstream
	case store.GroupDialect:
		return row.Dialect
	case store.GroupOperation:
		return row.Operation
	case store.GroupStatus:
		return strconv.Itoa(row.Status)
	case store.GroupDay:
		return row.Day
	case store.GroupHour:
		return hourText([]string{store.GroupHour}, row.Hour)
	}
	return ""
}

// hourText writes the start of a UTC hour as RFC 3339, when usage is
// grouped by hour.
func hourText(groups []string, unix int64) string {
	if !slices.Contains(groups, store.GroupHour) {
		return ""
	}
	return time.Unix(unix, 0).UTC().Format(time.RFC3339)
}
