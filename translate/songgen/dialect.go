package songgen

import (
	"net/http"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Dialect describes the music-task interface to the layers above
// translate: a task dialect, whose client side the server serves and
// whose upstream side the task service calls.
func Dialect() *translate.Dialect {
	return &translate.Dialect{
		Enum:         parleyv1.Dialect_DIALECT_SONGGEN,
		TaskClient:   Client{},
		TaskUpstream: Upstream{},
		Routes: []translate.Route{
			{Pattern: "POST " + PathMusic, Op: translate.OpSubmitTask},
			{Pattern: "POST " + PathLyrics, Op: translate.OpSubmitTask},
			{Pattern: "POST " + PathUpload, Op: translate.OpSubmitTask},
			{Pattern: "POST " + PathConcat, Op: translate.OpSubmitTask},
			{Pattern: "POST " + PathFetch, Op: translate.OpQueryTasks},
			{Pattern: "GET " + PathFetch + "/{id}", Op: translate.OpGetTask},
		},
	}
}

// Client is the client side of the music-task interface.
type Client struct{}

// Upstream is the side of a music service that speaks the interface.
type Upstream struct{}

var (
	_ translate.TaskClient   = Client{}
	_ translate.TaskUpstream = Upstream{}
)

// APIKey implements translate.TaskClient: clients send a bearer token.
func (Client) APIKey(in *translate.Incoming) string { return translate.BearerToken(in.Header) }

// DecodeSubmission implements translate.TaskClient, by the endpoint.
func (Client) DecodeSubmission(pattern string, body []byte, versions []string) (*translate.TaskSubmission, error) {
	var (
		s   *Submission
		err error
	)
	switch pattern {
	case "POST " + PathMusic:
		s, err = DecodeMusic(body, versions)
	case "POST " + PathLyrics:
		s, err = DecodeLyrics(body)
	case "POST " + PathUpload:
		s, err = DecodeUpload(body)
	case "POST " + PathConcat:
		s, err = DecodeConcat(body)
	default:
		return nil, translate.Status(parleyv1.Code_CODE_NOT_FOUND, "%s takes no submission", pattern)
	}
	if err != nil {
		return nil, err
	}
	return &translate.TaskSubmission{Input: s.Input, NotifyHook: s.NotifyHook}, nil
}

// DecodeQuery implements translate.TaskClient.
func (Client) DecodeQuery(body []byte) ([]string, parleyv1.TaskAction, error) {
	f, err := DecodeFetch(body)
	if err != nil {
		return nil, 0, err
	}
	return f.IDs, f.Action, nil
}

// EncodeSubmitted implements translate.TaskClient: the envelope around
// the task id.
func (Client) EncodeSubmitted(id string) ([]byte, error) { return Success(id) }

// EncodeTask implements translate.TaskClient: the envelope around the
// task object.
func (Client) EncodeTask(t *parleyv1.Task) ([]byte, error) { return Success(WireTask(t)) }

// EncodeTasks implements translate.TaskClient.
func (Client) EncodeTasks(ts []*parleyv1.Task) ([]byte, error) { return EncodeTasks(ts) }

// EncodeCallback implements translate.TaskClient: the bare task object.
func (Client) EncodeCallback(t *parleyv1.Task) ([]byte, error) { return EncodeTask(t) }

// EncodeError implements translate.TaskClient.
func (Client) EncodeError(e *parleyv1.Error) (int, []byte) { return EncodeError(e) }

// EncodeSubmit implements translate.TaskUpstream.
func (Upstream) EncodeSubmit(in *parleyv1.TaskInput, continueID string) (string, []byte, error) {
	return EncodeSubmit(in, continueID)
}

// DecodeSubmitReply implements translate.TaskUpstream.
func (Upstream) DecodeSubmitReply(status int, h http.Header, body []byte) (string, error) {
	return DecodeSubmitReply(status, h, body)
}

// EncodeFetch implements translate.TaskUpstream: the batch query.
func (Upstream) EncodeFetch(ids []string) (string, []byte, error) {
	body, err := EncodeFetch(ids)
	return PathFetch, body, err
}

// DecodeFetchReply implements translate.TaskUpstream.
func (Upstream) DecodeFetchReply(status int, h http.Header, body []byte) ([]*translate.TaskUpdate, error) {
	return DecodeFetchReply(status, h, body)
}
