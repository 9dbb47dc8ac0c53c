package server_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlite"
	"github.com/parleyhq/parley/translate/songgen"
)

// receiver is a notify_hook endpoint that fails its first failures
// calls with 500, then answers 200.
type receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	failures int
	calls    []hookCall
}

type hookCall struct {
	header http.Header
	body   []byte
	status int
}

func newReceiver(t testing.TB, failures int) *receiver {
	rc := &receiver{failures: failures}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		status := http.StatusOK
		if r.Method != http.MethodPost || len(rc.calls) < rc.failures {
			status = http.StatusInternalServerError
		}
		rc.calls = append(rc.calls, hookCall{header: r.Header.Clone(), body: body, status: status})
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) setFailures(n int) {
	rc.mu.Lock()
	rc.failures = n
	rc.mu.Unlock()
}

// waitDelivered waits for a 2xx delivery and returns every call so far.
func (rc *receiver) waitDelivered(t testing.TB) []hookCall {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		rc.mu.Lock()
		calls := append([]hookCall(nil), rc.calls...)
		rc.mu.Unlock()
		if n := len(calls); n > 0 && calls[n-1].status == http.StatusOK {
			return calls
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no successful callback within 20s")
	return nil
}

// TestCallbacks delivers SUCCESS and FAIL callbacks to a receiver that
// fails twice and then recovers, signed with the configured secret.
func TestCallbacks(t *testing.T) {
	const secret = "hook-secret-0001"
	g := startMusic(t, musicOpts{allowPrivate: true, secret: secret})
	for _, tc := range []struct{ name, body, status string }{
		{"success", `{"prompt": "la", "title": "Tin Roof", "tags": "pop", "notify_hook": "%s"}`, songgen.StatusSuccess},
		{"fail", `{"prompt": "FAIL now", "title": "x", "tags": "pop", "notify_hook": "%s"}`, songgen.StatusFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t, 2)
			hook := rc.srv.URL + "/parley?task=1"
			id := g.submit(t, songgen.PathMusic, aliceKey, strings.Replace(tc.body, "%s", hook, 1))
			final, _ := g.await(t, aliceKey, id)
			calls := rc.waitDelivered(t)
			if len(calls) != 3 {
				t.Fatalf("%d calls, want 2 failures and 1 success", len(calls))
			}
			for i, c := range calls {
				if got := c.header.Get("X-Parley-Delivery-Attempt"); got != strconv.Itoa(i+1) {
					t.Errorf("call %d: attempt header %q", i, got)
				}
				if c.header.Get("X-Parley-Task-Id") != id || c.header.Get("Content-Type") != "application/json" {
					t.Errorf("call %d: headers %v", i, c.header)
				}
				m := hmac.New(sha256.New, []byte(secret))
				m.Write(c.body)
				if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); c.header.Get("X-Parley-Signature") != want {
					t.Errorf("call %d: signature %q, want %q", i, c.header.Get("X-Parley-Signature"), want)
				}
			}
			got := decodeTask(t, calls[2].body)
			if got.TaskID != id || got.Status != tc.status || got.NotifyHook != hook || got.FinishTime != final.FinishTime || string(got.Data) != string(final.Data) {
				t.Errorf("callback body = %+v\nfetched       = %+v", got, final)
			}
			// The outcome is recorded just after the receiver answers.
			var d *store.Delivery
			var err error
			for range 200 {
				if d, err = g.store.Delivery(t.Context(), id); err == nil && d.State == store.DeliveryDone {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err != nil || d.State != store.DeliveryDone || d.Attempts != 3 {
				t.Errorf("delivery record = %+v, %v", d, err)
			}
			time.Sleep(60 * time.Millisecond)
			if n := len(rc.waitDelivered(t)); n != 3 {
				t.Errorf("%d calls after success; a delivered callback was repeated", n)
			}
		})
	}
}

// TestRefusedHooks: addresses that resolve to this machine, private
// networks or metadata services are refused at submit, and nothing is
// relayed.
func TestRefusedHooks(t *testing.T) {
	g := startMusic(t, musicOpts{allowPrivate: false})
	for _, hook := range []string{
		"http://127.0.0.1:8080/hook", "http://localhost/hook", "http://[::1]/hook", "http://10.0.0.7/hook",
		"http://192.168.1.20/hook", "http://172.16.0.1/hook", "http://169.254.169.254/latest/meta-data/",
		"http://100.100.100.200/", "http://[fd00:ec2::254]/", "http://0.0.0.0/", "http://[::ffff:127.0.0.1]/hook",
	} {
		r := g.call(t, http.MethodPost, songgen.PathLyrics, aliceKey, `{"prompt": "x", "notify_hook": "`+hook+`"}`)
		if r.Status != http.StatusBadRequest || r.Code != songgen.CodeHookRefused || !strings.Contains(r.Message, "notify_hook") {
			t.Errorf("%s: %d %s %q", hook, r.Status, r.Code, r.Message)
		}
	}
	if n := len(g.fake.submitted()); n != 0 {
		t.Errorf("%d refused submits reached the music service", n)
	}
	// A public address is accepted.
	g.submit(t, songgen.PathLyrics, aliceKey, `{"prompt": "x", "notify_hook": "https://93.184.215.14/hook"}`)
}

// TestRestartResumes stops the gateway with tasks in progress and a
// callback not yet delivered, and starts it again on the same data
// directory: the tasks finish and the callback arrives.
func TestRestartResumes(t *testing.T) {
	dir := t.TempDir()
	fake := newMusicFake(t)
	rc := newReceiver(t, 1<<30) // down until told otherwise
	g1 := startMusic(t, musicOpts{dataDir: dir, fake: fake, allowPrivate: true})
	hooked := g1.submit(t, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "rain", "notify_hook": "`+rc.srv.URL+`"}`)
	w, _ := g1.await(t, aliceKey, hooked)
	if w.Status != songgen.StatusSuccess {
		t.Fatalf("hooked task = %+v", w)
	}
	var ids []string
	for range 3 {
		ids = append(ids, g1.submit(t, songgen.PathMusic, aliceKey, `{"prompt": "la", "title": "t", "tags": "pop"}`))
	}
	lyr := g1.submit(t, songgen.PathLyrics, bobKey, `{"prompt": "snow"}`)
	// Stop while they are in progress, and while the callback is failing.
	for range 100 {
		if w, _ := g1.fetch(t, aliceKey, ids[0]); w.Progress == "40%" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	g1.stop()
	if d, err := g1.storeDelivery(t, dir, hooked); err != nil || d.State != store.DeliveryPending || d.Attempts == 0 {
		t.Fatalf("callback before the restart = %+v, %v; want pending after failed attempts", d, err)
	}
	submitted := len(fake.submitted())

	rc.setFailures(0)
	g2 := startMusic(t, musicOpts{dataDir: dir, fake: fake, allowPrivate: true})
	for _, id := range ids {
		if w, _ := g2.await(t, aliceKey, id); w.Status != songgen.StatusSuccess || len(songsOf(t, w)) != 2 {
			t.Errorf("task %s after the restart = %+v", id, w)
		}
	}
	if w, _ := g2.await(t, bobKey, lyr); w.Status != songgen.StatusSuccess {
		t.Errorf("lyrics task after the restart = %+v", w)
	}
	calls := rc.waitDelivered(t)
	if got := decodeTask(t, calls[len(calls)-1].body); got.TaskID != hooked || got.Status != songgen.StatusSuccess {
		t.Errorf("callback after the restart = %+v", got)
	}
	if n := len(fake.submitted()); n != submitted {
		t.Errorf("the restart submitted %d tasks again", n-submitted)
	}
}

// storeDelivery reads a delivery from a stopped gateway's database.
func (g *musicGW) storeDelivery(t testing.TB, dir, id string) (*store.Delivery, error) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), dir+"/parley.db")
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	return s.Delivery(t.Context(), id)
}
