package translate

import (
	"net/http"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Task dialects carry asynchronous tasks (music generation) rather than
// chat. Their two sides mirror the chat ones: a TaskClient decodes what
// clients submit and renders tasks for them; a TaskUpstream relays tasks
// to a service and reads back their state. The task service (package
// tasks) owns the lifecycle between them and names no dialect.

// Parley's own reasons for task failures. They travel in a canonical
// error's reason so that a task dialect can tell the failures apart when
// it renders them, without parsing messages.
const (
	ReasonInvalidField        = "invalid_field"        // a field has the wrong type or value
	ReasonHookRefused         = "notify_hook_refused"  // a callback address that may not be called
	ReasonUpstreamError       = "upstream_error"       // the task service failed or answered nonsense
	ReasonUpstreamUnavailable = "upstream_unavailable" // no task service, or it cannot be reached
	ReasonUpstreamTimeout     = "upstream_timeout"     // the task service did not answer in time
	ReasonShuttingDown        = "shutting_down"        // the gateway ended the request as it shut down
	ReasonOverloaded          = "overloaded"           // the gateway holds as much as it may; retry later
)

// LyricsComplete is the status word of finished lyrics.
const LyricsComplete = "complete"

// TaskUpdate is what a task service reports of one task.
type TaskUpdate struct {
	// UpstreamID is the service's id of the task.
	UpstreamID string
	Status     parleyv1.TaskStatus
	// Word is the service's status word as sent.
	Word string
	// Progress is 0 to 100, or -1 when the service gave none.
	Progress   int32
	FailReason string
	Songs      []*parleyv1.Song
	Lyrics     *parleyv1.Lyrics
}

// TaskUpstream is the upstream side of a task dialect.
type TaskUpstream interface {
	// EncodeSubmit is the path and body that relay a task; continueID is
	// the service's own id of the task a continuation continues.
	EncodeSubmit(in *parleyv1.TaskInput, continueID string) (path string, body []byte, err error)
	// DecodeSubmitReply reads the service's id of a submitted task.
	DecodeSubmitReply(status int, h http.Header, body []byte) (string, error)
	// EncodeFetch is the path and body of a query for tasks' state.
	EncodeFetch(ids []string) (path string, body []byte, err error)
	// DecodeFetchReply reads the reply to such a query.
	DecodeFetchReply(status int, h http.Header, body []byte) ([]*TaskUpdate, error)
}

// TaskSubmission is a decoded task submission.
type TaskSubmission struct {
	Input *parleyv1.TaskInput
	// NotifyHook is where the client wants to be called when the task
	// ends; "" for none.
	NotifyHook string
}

// TaskClient is the client side of a task dialect.
type TaskClient interface {
	// APIKey returns the key the client presented, or "".
	APIKey(in *Incoming) string
	// DecodeSubmission reads a submission to the endpoint pattern names;
	// versions are the accepted model versions.
	DecodeSubmission(pattern string, body []byte, versions []string) (*TaskSubmission, error)
	// DecodeQuery reads a query for several tasks: their ids and the
	// action filter (unspecified for none).
	DecodeQuery(body []byte) (ids []string, action parleyv1.TaskAction, err error)
	// EncodeSubmitted renders the reply to an accepted submission.
	EncodeSubmitted(id string) ([]byte, error)
	// EncodeTask renders the reply with one task.
	EncodeTask(t *parleyv1.Task) ([]byte, error)
	// EncodeTasks renders the reply to a query.
	EncodeTasks(ts []*parleyv1.Task) ([]byte, error)
	// EncodeCallback renders the body of the call that tells a client its
	// task has ended.
	EncodeCallback(t *parleyv1.Task) ([]byte, error)
	// EncodeError renders an error: the HTTP status and the body.
	EncodeError(e *parleyv1.Error) (status int, body []byte)
}
