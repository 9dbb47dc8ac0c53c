package tasks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/parleyhq/parley/store"
)

// Callback headers.
const (
	HeaderSignature = "X-Parley-Signature"
	HeaderTaskID    = "X-Parley-Task-Id"
	HeaderAttempt   = "X-Parley-Delivery-Attempt"
)

// deliveryWorkers bounds the deliveries attempted at once; each is
// claimed for deliveryLease, which outlasts an attempt (bounded by
// hookTimeout) and the store's reads and writes around it.
const (
	deliveryWorkers = 4
	deliveryLease   = hookTimeout + 5*time.Second
)

func (s *Service) notifyLoop(ctx context.Context) {
	every := min(s.o.PollInterval, time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		s.Deliver(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.notifyWake:
		}
	}
}

// Deliver attempts every callback that is due, a few at a time. Each is
// claimed from the store first, so that in a fleet one replica attempts
// it; a replica that dies mid-attempt leaves it due again when the claim
// runs out (callbacks are at least once).
func (s *Service) Deliver(ctx context.Context) {
	for ctx.Err() == nil {
		due, err := s.o.Store.ClaimDeliveries(ctx, s.o.Now(), deliveryLease, deliveryWorkers)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("due callbacks could not be claimed", "error", err)
			}
			return
		}
		var wg sync.WaitGroup
		for _, d := range due {
			wg.Go(func() { s.attempt(ctx, d) })
		}
		wg.Wait()
		if len(due) < deliveryWorkers {
			return
		}
	}
}

// Sign is the X-Parley-Signature value of a callback body.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// attempt makes one delivery attempt and records its outcome.
func (s *Service) attempt(ctx context.Context, d *store.Delivery) {
	t, err := s.o.Store.Task(ctx, d.TaskID)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("the task of a callback could not be read", "task", d.TaskID, "error", err)
		}
		return
	}
	body, err := s.o.Client.EncodeCallback(t)
	if err != nil {
		s.log.Error("a callback body could not be encoded", "task", d.TaskID, "error", err)
		return
	}
	d.Attempts++
	err = s.post(ctx, d, body)
	if err != nil && ctx.Err() != nil {
		// Shutting down: the attempt did not count. The delivery is
		// due again at once, for another replica or after a restart.
		d.Attempts--
		d.NextAt = s.o.Now()
		if err := s.o.Store.SaveDelivery(context.WithoutCancel(ctx), d); err != nil {
			s.log.Warn("a callback's claim could not be given up; it ends with its lease", "task", d.TaskID, "error", err)
		}
		return
	}
	switch {
	case err == nil:
		d.State, d.LastError = store.DeliveryDone, ""
		s.log.Info("callback delivered", "task", d.TaskID, "attempt", d.Attempts)
	case d.Attempts >= s.o.HookAttempts:
		d.State, d.LastError = store.DeliveryAbandoned, err.Error()
		s.log.Warn("callback abandoned", "task", d.TaskID, "attempts", d.Attempts, "error", err)
	default:
		d.LastError = err.Error()
		d.NextAt = s.o.Now().Add(s.o.HookBackoff(d.Attempts - 1))
		s.log.Info("callback failed; will retry", "task", d.TaskID, "attempt", d.Attempts, "next", d.NextAt, "error", err)
	}
	// The outcome is stored even when stopping: an attempt that reached
	// the receiver is not made again for nothing.
	if err := s.o.Store.SaveDelivery(context.WithoutCancel(ctx), d); err != nil {
		s.log.Error("a callback's outcome could not be stored", "task", d.TaskID, "error", err)
	}
}

func (s *Service) post(ctx context.Context, d *store.Delivery, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Parley")
	req.Header.Set(HeaderTaskID, d.TaskID)
	req.Header.Set(HeaderAttempt, strconv.Itoa(d.Attempts))
	if s.o.NotifySecret != "" {
		req.Header.Set(HeaderSignature, Sign(s.o.NotifySecret, body))
	}
	resp, err := s.hooks.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}
