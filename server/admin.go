package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/gen/parley/v1/parleyv1connect"
	"github.com/parleyhq/parley/govern"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// The admin API: managed keys and the usage ledger, as JSON under
// /admin/v1/ and as the Connect AdminService, both for admin keys only
// (Authorization: Bearer). Without admin keys configured it is not there
// at all: every path answers 404, as if Parley had no such API; except on
// a gateway with no key of any kind (which listens on loopback only),
// where it is as open as the rest. Its errors are {"error": {"code", "message", "field"}} with the HTTP status
// of the code.

// adminRoutes registers the admin API.
func (s *Server) adminRoutes() {
	s.mux.Handle("POST /admin/v1/keys", s.adminHandler(s.adminCreateKey))
	s.mux.Handle("GET /admin/v1/keys", s.adminHandler(s.adminListKeys))
	s.mux.Handle("GET /admin/v1/keys/{name}", s.adminHandler(s.adminGetKey))
	s.mux.Handle("PATCH /admin/v1/keys/{name}", s.adminHandler(s.adminUpdateKey))
	s.mux.Handle("DELETE /admin/v1/keys/{name}", s.adminHandler(s.adminRevokeKey))
	s.mux.Handle("GET /admin/v1/usage", s.adminHandler(s.adminUsage))
	s.mux.Handle("GET /admin/v1/info", s.adminHandler(s.adminInfo))
	s.mux.Handle("GET /admin/v1/stats", s.adminHandler(s.adminStats))
	s.mux.Handle("GET /admin/v1/models", s.adminHandler(s.adminModels))
	s.mux.HandleFunc("POST /admin/v1/try", s.adminTry)
	s.mux.Handle("GET /admin/v1/tasks", s.adminHandler(s.adminTasks))
	s.mux.Handle("/admin/", s.adminHandler(func(*http.Request) (int, any, error) {
		return 0, nil, translate.Status(parleyv1.Code_CODE_NOT_FOUND, "no such admin endpoint")
	}))
	s.mux.Handle(parleyv1connect.NewAdminServiceHandler(adminService{s}, connect.WithHandlerOptions(
		connect.WithInterceptors(adminGate{s}),
		connect.WithReadMaxBytes(1<<20),
	)))
}

// isAdmin checks an admin key in constant time against every admin key.
func (st *state) isAdmin(presented string) bool {
	if presented == "" {
		return false
	}
	d := sha256.Sum256([]byte(presented))
	ok := 0
	for i := range st.admins {
		ok |= subtle.ConstantTimeCompare(d[:], st.admins[i][:])
	}
	return ok == 1
}

// errAdminOff answers every admin path when no admin key is configured
// but client keys are.
var errAdminOff = errors.New("the admin API is off")

// adminAuth checks the caller of the admin API.
func (s *Server) adminAuth(h http.Header) error {
	st := s.state()
	if len(st.admins) == 0 {
		if st.keys.open {
			// No key of any kind is configured (and so Parley listens on
			// loopback only): the admin API is as open as the rest.
			return nil
		}
		return errAdminOff
	}
	presented := translate.BearerToken(h)
	if presented == "" {
		return translate.Status(parleyv1.Code_CODE_UNAUTHENTICATED, "the admin API needs an admin key (Authorization: Bearer)")
	}
	if !st.isAdmin(presented) {
		return translate.Status(parleyv1.Code_CODE_UNAUTHENTICATED, "this is not an admin key")
	}
	return nil
}

// adminOp serves one admin call: its status and the value of its JSON
// reply, or an error.
type adminOp func(r *http.Request) (int, any, error)

func (s *Server) adminHandler(op adminOp) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start, id := time.Now(), store.NewRequestID()
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("Cache-Control", "no-store")
		status, v, err := http.StatusOK, any(nil), s.adminAuth(r.Header)
		if errors.Is(err, errAdminOff) {
			http.NotFound(w, r)
			return
		}
		if err == nil {
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			status, v, err = op(r)
		}
		if err != nil {
			status = adminError(w, err)
		} else if c, ok := v.(csvReply); ok {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			w.WriteHeader(status)
			_ = csv.NewWriter(w).WriteAll(c)
		} else {
			body, merr := json.Marshal(v, json.Deterministic(true))
			if merr != nil {
				status = adminError(w, merr)
			} else {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				_, _ = w.Write(body)
			}
		}
		s.log.Info("admin", "id", id, "method", r.Method, "path", r.URL.Path, "status", status, "duration", time.Since(start).Round(time.Microsecond))
	})
}

// adminErrorBody is the admin API's error reply.
type adminErrorBody struct {
	Error adminErrorDetail `json:"error"`
}

type adminErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func adminError(w http.ResponseWriter, err error) int {
	e := translate.ToProto(err)
	status := translate.HTTPStatusOf(e)
	d := adminErrorDetail{Code: strings.ToLower(strings.TrimPrefix(e.GetCode().String(), "CODE_")), Message: e.GetMessage()}
	if fv := e.GetFieldViolations(); len(fv) > 0 {
		d.Field = fv[0].GetField()
	}
	if e.GetCode() == parleyv1.Code_CODE_INTERNAL || e.GetCode() == parleyv1.Code_CODE_UNKNOWN {
		d.Message = "internal error"
	}
	body, _ := json.Marshal(adminErrorBody{Error: d})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}

// keyJSON is a managed key in the admin API's JSON: the configuration
// file's spelling of limits, times in RFC 3339.
type keyJSON struct {
	Name      string            `json:"name"`
	Models    []string          `json:"models,omitempty"`
	Limits    *limitsJSON       `json:"limits,omitempty"`
	ExpiresAt *time.Time        `json:"expires_at,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	CreatedAt *time.Time        `json:"created_at,omitempty"`
	UpdatedAt *time.Time        `json:"updated_at,omitempty"`
	RevokedAt *time.Time        `json:"revoked_at,omitempty"`
	Hint      string            `json:"hint,omitempty"`
	// Key is the secret, in the reply that creates the key only.
	Key string `json:"key,omitempty"`
}

type limitsJSON struct {
	RequestsPerMinute  *int64      `json:"requests_per_minute,omitempty"`
	TokensPerMinute    *int64      `json:"tokens_per_minute,omitempty"`
	ConcurrentRequests *int64      `json:"concurrent_requests,omitempty"`
	Budget             *budgetJSON `json:"budget,omitempty"`
}

type budgetJSON struct {
	USD    *float64 `json:"usd,omitempty"`
	Tokens *int64   `json:"tokens,omitempty"`
	Per    string   `json:"per"`
}

func timeOf(t *timestamppb.Timestamp) *time.Time {
	if t == nil {
		return nil
	}
	v := t.AsTime().UTC()
	return &v
}

func stampOf(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(*t)
}

func keyToJSON(k *parleyv1.ManagedKey) keyJSON {
	out := keyJSON{
		Name: k.GetName(), Models: k.GetModels(), Metadata: k.GetMetadata(), Hint: k.GetHint(), Key: k.GetKey(),
		ExpiresAt: timeOf(k.GetExpireTime()), CreatedAt: timeOf(k.GetCreateTime()), UpdatedAt: timeOf(k.GetUpdateTime()),
		RevokedAt: timeOf(k.GetRevokeTime()),
	}
	if l := k.GetLimits(); l != nil {
		out.Limits = &limitsJSON{RequestsPerMinute: l.RequestsPerMinute, TokensPerMinute: l.TokensPerMinute, ConcurrentRequests: l.ConcurrentRequests}
		if b := l.GetBudget(); b != nil {
			out.Limits.Budget = &budgetJSON{USD: b.Usd, Tokens: b.Tokens, Per: govern.PeriodName(b.GetPer())}
		}
	}
	return out
}

func limitsFromJSON(l *limitsJSON) (*parleyv1.KeyLimits, error) {
	if l == nil {
		return nil, nil
	}
	out := &parleyv1.KeyLimits{RequestsPerMinute: l.RequestsPerMinute, TokensPerMinute: l.TokensPerMinute, ConcurrentRequests: l.ConcurrentRequests}
	if b := l.Budget; b != nil {
		out.Budget = &parleyv1.Budget{Usd: b.USD, Tokens: b.Tokens, Per: govern.PeriodOf(b.Per)}
		if b.Per != "" && out.Budget.Per == parleyv1.BudgetPeriod_BUDGET_PERIOD_UNSPECIFIED {
			return nil, translate.Invalid("limits.budget.per", "%q is not day, week or month", b.Per)
		}
	}
	return out, nil
}

// decodeBody reads a JSON body strictly: an unknown member or a value of
// the wrong type is an error naming its field.
func decodeBody(r *http.Request, v any) error {
	var raw jsontext.Value
	dec := jsontext.NewDecoder(r.Body)
	if err := json.UnmarshalDecode(dec, &raw); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return translate.Invalid("", "the body is larger than 1 MiB")
		}
		return translate.Invalid("", "the body is not JSON: %s", strings.TrimPrefix(err.Error(), "jsontext: "))
	}
	if err := json.Unmarshal(raw, v, json.RejectUnknownMembers(true)); err != nil {
		return fieldError(err)
	}
	return nil
}

// fieldError names the member a JSON value could not be read into, in the
// dotted spelling of the admin API's errors.
func fieldError(err error) error {
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return translate.Invalid("", "is not valid here")
	}
	field := strings.ReplaceAll(strings.TrimPrefix(string(se.JSONPointer), "/"), "/", ".")
	switch {
	case errors.Is(se.Err, json.ErrUnknownName):
		return translate.Invalid(field, "is not a field of this object")
	case se.JSONKind != 0 && se.GoType != nil:
		return translate.Invalid(field, "has the wrong type (%s)", se.JSONKind.String())
	}
	return translate.Invalid(field, "is not valid here")
}

func (s *Server) adminCreateKey(r *http.Request) (int, any, error) {
	var in keyJSON
	if err := decodeBody(r, &in); err != nil {
		return 0, nil, err
	}
	limits, err := limitsFromJSON(in.Limits)
	if err != nil {
		return 0, nil, err
	}
	k, err := s.admin.CreateKey(r.Context(), &parleyv1.ManagedKey{
		Name: in.Name, Models: in.Models, Limits: limits, ExpireTime: stampOf(in.ExpiresAt), Metadata: in.Metadata, Key: in.Key,
	}, "")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, keyToJSON(k), nil
}

// keysReply is the admin API's list of keys.
type keysReply struct {
	Data []keyJSON `json:"data"`
}

func (s *Server) adminListKeys(r *http.Request) (int, any, error) {
	ks, err := s.admin.ListKeys(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := keysReply{Data: make([]keyJSON, len(ks))}
	for i, k := range ks {
		out.Data[i] = keyToJSON(k)
	}
	return http.StatusOK, out, nil
}

func (s *Server) adminGetKey(r *http.Request) (int, any, error) {
	k, err := s.admin.GetKey(r.Context(), r.PathValue("name"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, keyToJSON(k), nil
}

// adminUpdateKey changes a key as a JSON merge patch (RFC 7396): the
// members given replace the key's, objects merge member by member (so
// {"limits":{"requests_per_minute":120}} keeps the budget), and null
// clears a member.
func (s *Server) adminUpdateKey(r *http.Request) (int, any, error) {
	var patch map[string]any
	if err := decodeBody(r, &patch); err != nil {
		return 0, nil, err
	}
	fields := map[string]string{"models": govern.FieldModels, "limits": govern.FieldLimits, "expires_at": govern.FieldExpireTime, "metadata": govern.FieldMetadata}
	var paths []string
	for name := range patch {
		p, ok := fields[name]
		if !ok {
			return 0, nil, translate.Invalid(name, "cannot be changed: only models, limits, expires_at and metadata can")
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	cur, err := s.admin.GetKey(r.Context(), r.PathValue("name"))
	if err != nil {
		return 0, nil, err
	}
	var doc map[string]any
	raw, _ := json.Marshal(keyToJSON(cur))
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, nil, err
	}
	raw, _ = json.Marshal(mergePatch(doc, patch))
	var in keyJSON
	if err := json.Unmarshal(raw, &in, json.RejectUnknownMembers(true)); err != nil {
		return 0, nil, fieldError(err)
	}
	limits, err := limitsFromJSON(in.Limits)
	if err != nil {
		return 0, nil, err
	}
	k, err := s.admin.UpdateKey(r.Context(), r.PathValue("name"), &parleyv1.ManagedKey{
		Models: in.Models, Limits: limits, ExpireTime: stampOf(in.ExpiresAt), Metadata: in.Metadata,
	}, paths, "")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, keyToJSON(k), nil
}

// mergePatch applies an RFC 7396 merge patch to a JSON object.
func mergePatch(doc, patch map[string]any) map[string]any {
	if doc == nil {
		doc = map[string]any{}
	}
	for name, v := range patch {
		switch v := v.(type) {
		case nil:
			delete(doc, name)
		case map[string]any:
			sub, _ := doc[name].(map[string]any)
			doc[name] = mergePatch(sub, v)
		default:
			doc[name] = v
		}
	}
	return doc
}

func (s *Server) adminRevokeKey(r *http.Request) (int, any, error) {
	k, err := s.admin.RevokeKey(r.Context(), r.PathValue("name"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, keyToJSON(k), nil
}
