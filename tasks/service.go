// Package tasks owns the lifecycle of asynchronous music tasks: submit
// (relayed to the music upstream, or, for lyrics, written by a chat model
// through the dispatcher), storage, polling until a task finishes or
// grows too old, and the notify_hook callback. It names no dialect: the
// wire shapes belong to the task dialect (translate.TaskUpstream toward
// the music service, translate.TaskClient for callback bodies), which the
// command wires in from the list of dialects, and persistence to store.
//
// Lifecycle. A task is stored only once its upstream accepted it, so a
// failed submit leaves nothing behind. It is IN_PROGRESS until the
// upstream reports a final word, and is then final: SUCCESS or FAIL never
// change again (the store enforces it). Progress never goes down, and is
// 100 once finished. A task not finished max_age after submission fails
// with a fail_reason saying so. Tasks in progress are refreshed every
// poll_interval, in batches per upstream, from the store, so that a
// restart picks them all up again.
//
// Callbacks. When a task with a notify_hook finishes, its delivery is
// written with the final state in one transaction. Deliveries are POSTs
// of the task object (the body of a single query's data) with
// Content-Type application/json, X-Parley-Task-Id, X-Parley-Delivery-
// Attempt (1, 2, ...) and, when songgen.notify_secret is set,
// X-Parley-Signature: sha256=<hex HMAC-SHA256 of the body with the
// secret>. Any 2xx ends them; other replies, redirects included, and
// connection failures are retried with exponential backoff (2 s doubling,
// at most 15 min apart, 10 attempts over about an hour) that survives a
// restart, because the schedule is in the store. A crash during an
// attempt repeats it: delivery is at least once, and X-Parley-Task-Id
// lets a receiver drop repeats.
//
// Addresses. Unless songgen.allow_private_hooks is true, a notify_hook
// whose host is or resolves to a loopback, private, link-local (cloud
// metadata included), shared, multicast or reserved address is refused
// at submit, and the callback dialer refuses such addresses again at
// connect time, so that DNS rebinding cannot reach them.
//
// Ownership. A task belongs to the key that submitted it. Another key
// gets the same answer as for an id that does not exist, and a batch
// query leaves such ids out.
package tasks

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/secrets"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// Options configure a Service.
type Options struct {
	Store store.Tasks
	// Upstream serves music tasks; nil when none is configured.
	Upstream *MusicService
	// Client renders tasks for the clients' callbacks (the task
	// dialect's client side); nil sends no callbacks.
	Client translate.TaskClient
	// Dispatcher and LyricsModel, when both are set, serve lyrics tasks
	// with a chat model instead of the upstream.
	Dispatcher  *dispatch.Dispatcher
	LyricsModel string

	PollInterval time.Duration
	MaxAge       time.Duration
	// ModelVersions are the accepted mv values.
	ModelVersions []string

	NotifySecret      string
	AllowPrivateHooks bool
	// HookAttempts is how many times a callback is tried (default 10).
	HookAttempts int
	// HookBackoff is the wait after the n-th failed attempt (default 2 s
	// doubling, at most 15 min).
	HookBackoff func(n int) time.Duration
	// HookTransport, when set, carries callbacks (tests); it bypasses the
	// address guard of the default dialer.
	HookTransport http.RoundTripper
	// Resolver looks up notify_hook hosts (default net.DefaultResolver).
	Resolver *net.Resolver

	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Service runs music tasks.
type Service struct {
	o     Options
	log   *slog.Logger
	hooks *http.Client

	notifyWake chan struct{}
	// dispatcher is the one lyrics tasks are written through: o.Dispatcher
	// until a reload hands in another.
	dispatcher atomic.Pointer[dispatch.Dispatcher]

	mu       sync.Mutex
	inFlight map[string]bool // tasks whose lyrics a model is writing
	runCtx   context.Context // Run's context, while it runs
	stopping bool            // Run is waiting for its work to end
	work     sync.WaitGroup
}

// Defaults of the callback retries.
const (
	DefaultHookAttempts = 10
	hookBackoffBase     = 2 * time.Second
	hookBackoffLimit    = 15 * time.Minute
	hookTimeout         = 10 * time.Second
	// lyricsWorkers bounds the lyrics a model writes at once.
	lyricsWorkers = 4
	// activePage is how many tasks in progress are claimed at once: one
	// batch query of the music service, so that a claim allows for one
	// query's time-out, and the tasks of a replica that died mid-query
	// are free again that much later.
	activePage = fetchBatch
	// lyricsLease is how long a lyrics task is held while a model writes
	// it: longer than a model takes to write a song.
	lyricsLease = 5 * time.Minute
)

// New returns a Service; Run starts its background work.
func New(o Options) *Service {
	if o.PollInterval <= 0 {
		o.PollInterval = 5 * time.Second
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 30 * time.Minute
	}
	if len(o.ModelVersions) == 0 {
		o.ModelVersions = config.DefaultModelVersions
	}
	if o.HookAttempts <= 0 {
		o.HookAttempts = DefaultHookAttempts
	}
	if o.HookBackoff == nil {
		o.HookBackoff = dispatch.ExponentialBackoff(hookBackoffBase, hookBackoffLimit)
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	tr := o.HookTransport
	if tr == nil {
		tr = &http.Transport{
			DialContext:         hookDialer(o.AllowPrivateHooks).DialContext,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     30 * time.Second,
		}
	}
	s := &Service{
		o:   o,
		log: o.Logger,
		hooks: &http.Client{
			Transport: tr,
			Timeout:   hookTimeout,
			// A redirect is not followed: it could lead to an address the
			// guard would refuse, and a receiver should name its own URL.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		notifyWake: make(chan struct{}, 1),
		inFlight:   map[string]bool{},
	}
	s.dispatcher.Store(o.Dispatcher)
	return s
}

// UseDispatcher makes lyrics tasks go through d from now on (a reloaded
// configuration's models); a writing in progress ends on the one it
// started with.
func (s *Service) UseDispatcher(d *dispatch.Dispatcher) { s.dispatcher.Store(d) }

// UseKeys makes the music service's errors scrubbed of the keys of c (a
// reloaded configuration's client and upstream keys) from now on.
func (s *Service) UseKeys(c *config.Config) {
	if s.o.Upstream != nil {
		s.o.Upstream.scrub.Store(secrets.FromConfig(c))
	}
}

// ModelVersions are the accepted mv values.
func (s *Service) ModelVersions() []string { return s.o.ModelVersions }

func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// newID is a task id: a random UUID (version 4).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// notFound is the answer for an unknown id and for another key's task.
func notFound(field, id string) error {
	e := &parleyv1.Error{Code: parleyv1.Code_CODE_NOT_FOUND, Message: fmt.Sprintf("no task has the id %q", id)}
	if field != "" {
		e.Message = field + ": " + e.Message
		e.FieldViolations = []*parleyv1.FieldViolation{{Field: field, Description: "no task has this id"}}
	}
	return &translate.StatusError{Err: e}
}

// fieldError is a bad-input error with Parley's reason for it, which the
// task dialect renders as its own code.
func fieldError(reason, field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &translate.StatusError{Err: &parleyv1.Error{
		Code: parleyv1.Code_CODE_INVALID_ARGUMENT, Message: field + ": " + msg, Reason: reason,
		FieldViolations: []*parleyv1.FieldViolation{{Field: field, Description: msg}},
	}}
}

// invalidField is the error for a field with a wrong value.
func invalidField(field, format string, args ...any) error {
	return fieldError(translate.ReasonInvalidField, field, format, args...)
}

// hookRefused is the error for a notify_hook that may not be called.
func hookRefused(format string, args ...any) error {
	return fieldError(translate.ReasonHookRefused, "notify_hook", format, args...)
}

func internal(what string, err error) error {
	return &translate.StatusError{Err: &parleyv1.Error{
		Code: parleyv1.Code_CODE_INTERNAL, Message: what + ": " + err.Error(),
	}}
}

// Submit starts a task for owner and returns it as stored.
func (s *Service) Submit(ctx context.Context, owner string, in *parleyv1.TaskInput, hook string) (*parleyv1.Task, error) {
	if hook != "" && s.o.Client == nil {
		return nil, invalidField("notify_hook", "this server sends no callbacks")
	}
	if err := s.checkHook(ctx, hook); err != nil {
		return nil, err
	}
	now := timestamppb.New(s.o.Now())
	t := &parleyv1.Task{
		Id:          newID(),
		Owner:       owner,
		Action:      ActionOf(in),
		Status:      parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS,
		SubmittedAt: now,
		StartedAt:   now,
		UpdatedAt:   now,
		NotifyHook:  hook,
		Input:       in,
	}
	if t.Action == parleyv1.TaskAction_TASK_ACTION_UNSPECIFIED {
		return nil, translate.Invalid("input", "the task input names no kind of task")
	}
	if t.Action == parleyv1.TaskAction_TASK_ACTION_LYRICS && s.o.LyricsModel != "" && s.dispatcher.Load() != nil {
		t.Model = s.o.LyricsModel
		if err := s.o.Store.CreateTask(ctx, t); err != nil {
			return nil, internal("the task could not be stored", err)
		}
		s.mu.Lock()
		run := s.runCtx
		s.mu.Unlock()
		if run != nil {
			// Start writing now rather than at the next polling round.
			s.startLyrics(run, t)
		}
		return t, nil
	}
	if s.o.Upstream == nil {
		return nil, &translate.StatusError{Err: &parleyv1.Error{
			Code: parleyv1.Code_CODE_UNAVAILABLE, Reason: translate.ReasonUpstreamUnavailable,
			Message: "no music service is configured: add an upstream with dialect songgen (and songgen.lyrics_model for lyrics)",
		}}
	}
	continueID := ""
	if song := in.GetSong(); song.GetMode() == parleyv1.SongMode_SONG_MODE_CONTINUATION {
		prev, err := s.Get(ctx, owner, song.GetContinueTaskId())
		if err != nil {
			var se *translate.StatusError
			if errors.As(err, &se) && se.Err.GetCode() == parleyv1.Code_CODE_NOT_FOUND {
				return nil, notFound("task_id", song.GetContinueTaskId())
			}
			return nil, err
		}
		if prev.GetAction() != parleyv1.TaskAction_TASK_ACTION_MUSIC || prev.GetUpstream() != s.o.Upstream.Name() {
			return nil, invalidField("task_id", "task %q is not a song of the music service, so it cannot be continued", prev.GetId())
		}
		continueID = prev.GetUpstreamTaskId()
	}
	upID, err := s.o.Upstream.Submit(ctx, in, continueID)
	if err != nil {
		return nil, err
	}
	t.Upstream, t.UpstreamTaskId = s.o.Upstream.Name(), upID
	if err := s.o.Store.CreateTask(ctx, t); err != nil {
		s.log.Error("a task the music service accepted could not be stored", "upstream", t.Upstream, "error", err)
		return nil, internal("the task could not be stored", err)
	}
	return t, nil
}

// Get returns a task of owner.
func (s *Service) Get(ctx context.Context, owner, id string) (*parleyv1.Task, error) {
	t, err := s.o.Store.Task(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.GetOwner() != owner) {
		return nil, notFound("", id)
	}
	if err != nil {
		return nil, internal("the task could not be read", err)
	}
	return t, nil
}

// MaxListIDs is the most ids one List call may name.
const MaxListIDs = 500

// List returns owner's tasks among ids, in the order of ids, that pass the
// action filter (unspecified keeps all); other ids are left out.
func (s *Service) List(ctx context.Context, owner string, ids []string, action parleyv1.TaskAction) ([]*parleyv1.Task, error) {
	found, err := s.o.Store.Tasks(ctx, ids)
	if err != nil {
		return nil, internal("the tasks could not be read", err)
	}
	byID := make(map[string]*parleyv1.Task, len(found))
	for _, t := range found {
		if t.GetOwner() == owner && matches(t.GetAction(), action) {
			byID[t.GetId()] = t
		}
	}
	out := make([]*parleyv1.Task, 0, len(byID))
	for _, id := range ids {
		if t, ok := byID[id]; ok {
			out = append(out, t)
			delete(byID, id)
		}
	}
	return out, nil
}

// Run polls tasks and delivers callbacks until ctx ends, and returns once
// all its work has stopped.
func (s *Service) Run(ctx context.Context) {
	s.mu.Lock()
	s.runCtx, s.stopping = ctx, false
	s.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { s.pollLoop(ctx) })
	wg.Go(func() { s.notifyLoop(ctx) })
	wg.Wait()
	// No lyrics start from here on, so that the wait below is final.
	s.mu.Lock()
	s.runCtx, s.stopping = nil, true
	s.mu.Unlock()
	s.work.Wait()
}
