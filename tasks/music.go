package tasks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/secrets"
	"github.com/parleyhq/parley/translate"
)

// maxUpstreamReply bounds what is read of a music upstream's reply.
const maxUpstreamReply = 8 << 20

// fetchBatch is how many upstream ids go in one batch query.
const fetchBatch = 50

// MusicService is a music service, spoken to through its task dialect.
type MusicService struct {
	codec   translate.TaskUpstream
	name    string
	base    string
	key     string
	timeout time.Duration
	client  *http.Client
	// scrub removes the keys Parley knows from what the service writes
	// (its errors, a task's fail reason), before clients and logs see it;
	// a reload that adds keys swaps it (UseKeys).
	scrub atomic.Pointer[secrets.Scrubber]
}

// NewMusicService returns the client of a configured music upstream that
// speaks through codec. transport, when not nil, carries its requests
// (tests).
func NewMusicService(u config.Upstream, codec translate.TaskUpstream, transport http.RoundTripper) *MusicService {
	if transport == nil {
		transport = dispatch.NewTransport(u.ConnectTimeout.D(), u.HeaderTimeout.D())
	}
	timeout := u.HeaderTimeout.D()
	if timeout == 0 {
		timeout = config.DefaultHeaderTimeout
	}
	return &MusicService{
		codec:   codec,
		name:    u.Name,
		base:    strings.TrimRight(u.BaseURL, "/"),
		key:     u.APIKey,
		timeout: timeout,
		// A redirect is not followed, as a chat upstream's is not: it
		// would post the submission, a song charged for, wherever it
		// points. post reports it.
		client: &http.Client{Transport: transport, CheckRedirect: dispatch.KeepRedirect},
	}
}

// Name is the configured name of the upstream.
func (u *MusicService) Name() string { return u.name }

// post sends one request and returns the status, headers and body. A
// submit is not retried: a music service charges per song, and a submit
// whose reply was lost may have been accepted.
func (u *MusicService) post(ctx context.Context, path string, body []byte) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if u.key != "" {
		req.Header.Set("Authorization", "Bearer "+u.key)
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return 0, nil, nil, u.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		e := dispatch.Redirected("the music service "+u.name, resp.StatusCode)
		e.Reason = translate.ReasonUpstreamError
		return 0, nil, nil, translate.UpstreamFailed(e)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamReply+1))
	if err != nil {
		return 0, nil, nil, u.transportError(ctx, err)
	}
	if len(data) > maxUpstreamReply {
		return 0, nil, nil, translate.UpstreamFailed(&parleyv1.Error{
			Code: parleyv1.Code_CODE_UNKNOWN, Reason: translate.ReasonUpstreamError, HttpStatus: http.StatusBadGateway,
			Message: fmt.Sprintf("the music service %s sent a reply larger than %d bytes", u.name, maxUpstreamReply),
		})
	}
	return resp.StatusCode, resp.Header, data, nil
}

func (u *MusicService) transportError(ctx context.Context, err error) error {
	e := &parleyv1.Error{
		Code: parleyv1.Code_CODE_UNAVAILABLE, Reason: translate.ReasonUpstreamUnavailable, HttpStatus: http.StatusServiceUnavailable,
		Message: "the music service " + u.name + " cannot be reached",
		Retry:   translate.Retry(translate.RetryFacts{Status: http.StatusServiceUnavailable}),
	}
	if why := dispatch.TLSFailure(err); why != "" {
		e.Message += ": " + why
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		e.Code, e.Reason, e.HttpStatus = parleyv1.Code_CODE_DEADLINE_EXCEEDED, translate.ReasonUpstreamTimeout, http.StatusGatewayTimeout
		e.Message = fmt.Sprintf("the music service %s did not answer within %s", u.name, u.timeout)
	}
	return &translate.UpstreamError{Err: e, Cause: err}
}

// Submit relays a task and returns the upstream's id for it.
func (u *MusicService) Submit(ctx context.Context, in *parleyv1.TaskInput, continueID string) (string, error) {
	path, body, err := u.codec.EncodeSubmit(in, continueID)
	if err != nil {
		return "", err
	}
	status, h, reply, err := u.post(ctx, path, body)
	if err != nil {
		return "", err
	}
	id, err := u.codec.DecodeSubmitReply(status, h, reply)
	return id, u.scrub.Load().Err(err)
}

// FetchBound is the longest Fetch of n ids may take: each batch is bounded
// by the service's time-out.
func (u *MusicService) FetchBound(n int) time.Duration {
	return time.Duration((n+fetchBatch-1)/fetchBatch) * u.timeout
}

// Fetch asks for the state of upstream tasks, in batches.
func (u *MusicService) Fetch(ctx context.Context, ids []string) ([]*translate.TaskUpdate, error) {
	var out []*translate.TaskUpdate
	for len(ids) > 0 {
		n := min(len(ids), fetchBatch)
		path, body, err := u.codec.EncodeFetch(ids[:n])
		if err != nil {
			return nil, err
		}
		status, h, reply, err := u.post(ctx, path, body)
		if err != nil {
			return out, err
		}
		ups, err := u.codec.DecodeFetchReply(status, h, reply)
		if err != nil {
			return out, u.scrub.Load().Err(err)
		}
		for _, up := range ups {
			up.FailReason = u.scrub.Load().String(up.FailReason)
			for _, song := range up.Songs {
				if m := song.GetMetadata(); m != nil && m.ErrorMessage != nil {
					*m.ErrorMessage = u.scrub.Load().String(*m.ErrorMessage)
				}
			}
		}
		out = append(out, ups...)
		ids = ids[n:]
	}
	return out, nil
}
