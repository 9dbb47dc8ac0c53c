package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/internal/racedetect"
)

// stackChildEnv marks the process TestStreamsRunOnSmallStacks starts.
const stackChildEnv = "PARLEY_TEST_STACK_CHILD"

// smallStack is the handler's stack that a stream must fit in: the size
// net/http's own handlers keep. A goroutine's stack only doubles, and the
// runtime halves it again only while less than a quarter is in use; a
// stream waits about 5 KB deep, so a handler that once needed more than
// 8 KB keeps 16 KB for as long as its stream is open, 8 KB more for
// every held stream.
const smallStack = 8 << 10

// TestStreamsRunOnSmallStacks streams every recorded scenario, tools and
// reasoning included, from upstreams of every dialect to clients of every
// dialect, in a process whose goroutines may not grow past 8 KB, with
// stackMargin bytes to spare: a request's decoding, its encoding and
// sending, the reply's start and each event's decoding and encoding must
// all fit. A stack that would grow past it stops the process with the
// stack of the goroutine that did, which this test reports.
func TestStreamsRunOnSmallStacks(t *testing.T) {
	if os.Getenv(stackChildEnv) != "" {
		streamOnSmallStacks(t)
		return
	}
	if testing.Short() {
		t.Skip("starts a second test process")
	}
	if racedetect.Enabled {
		t.Skip("the race detector's instrumentation makes frames larger than those of the binary that runs")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamsRunOnSmallStacks$", "-test.count=1", "-test.v")
	// The limit is for the handlers' stacks; offstack's kept goroutines
	// are grown before it (growKept) and must stay grown: a collection
	// would otherwise shrink them, idle, below what their work takes.
	godebug := "gcshrinkstackoff=1"
	if v := os.Getenv("GODEBUG"); v != "" {
		godebug = v + "," + godebug
	}
	cmd.Env = append(os.Environ(), stackChildEnv+"=1", "GODEBUG="+godebug)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if i := bytes.Index(out, []byte("runtime: goroutine stack exceeds")); i >= 0 {
			out = out[i:]
		}
		t.Fatalf("the streams did not run on %d-byte stacks (%v):\n%s", smallStack, err, trimTrace(out))
	}
	if !bytes.Contains(out, []byte("streams on small stacks:")) {
		t.Fatalf("the child process ran no streams:\n%s", out)
	}
	t.Log(string(bytes.TrimSpace(out[bytes.Index(out, []byte("streams on small stacks:")):])))
}

// trimTrace keeps the first goroutine's stack of a fatal error's output:
// the one that grew.
func trimTrace(out []byte) []byte {
	const most = 8 << 10
	if i := bytes.Index(out, []byte("\n\ngoroutine ")); i >= 0 {
		if j := bytes.Index(out[i+2:], []byte("\n\ngoroutine ")); j >= 0 {
			out = append(out[:i+2+j:i+2+j], "\n..."...)
		}
	}
	if len(out) > most {
		out = out[:most]
	}
	return out
}

// Requests are read and written on the handler's stack, and what the
// quick readers and writers leave to reflection, which goes as deep as the
// value nests, goes off it by itself (jsonx.EncodeOffStack; a responses
// request's unmodelled items and kept tools, and its stream encoder's echo
// of tools and settings; a content-generation request's tools, schemas and
// parts kept whole, read or written).

// growKept fills offstack's kept goroutines with grown stacks, as a
// running gateway's are: the limit is for the handlers', and a kept
// goroutine first made under it (by a request that found the others
// busy) could not grow to do the deep work it is kept for. Every kept
// goroutine is busy at once, past as many as there may be.
func growKept() {
	n := 2*runtime.GOMAXPROCS(0) + 2
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	for range n {
		done.Go(func() {
			offstack.Run(func() {
				deep(64)
				started.Done()
				release.Wait()
			})
		})
	}
	started.Wait()
	release.Done()
	done.Wait()
}

// deep takes about n KB of stack.
//
//go:noinline
func deep(n int) byte {
	var pad [1000]byte
	if n > 0 {
		pad[n%len(pad)] = deep(n - 1)
	}
	return pad[0]
}

// stackMargin is how much of the 8 KB the streams must leave: the depth
// of a path varies by a few hundred bytes with what the runtime does
// inside it (an allocation that refills its span, a collection's
// assist), and a path that passes with nothing to spare passes by luck.
const stackMargin = 512

// belowMargin serves r with stackMargin bytes of its own frame above.
//
//go:noinline
func belowMargin(h http.Handler, w http.ResponseWriter, r *http.Request) {
	var pad [stackMargin]byte
	i := len(r.URL.Path) % len(pad)
	pad[i] = 1
	h.ServeHTTP(w, r)
	if pad[i] != 1 {
		panic("the margin's frame was written over")
	}
}

// streamOnSmallStacks runs in the child process.
func streamOnSmallStacks(t *testing.T) {
	g := startGateway(t, gwExtra{})
	// The handlers run below a frame of stackMargin bytes: what passes
	// has that much to spare.
	url := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		belowMargin(g.server, w, r)
	})).URL
	type call struct {
		name string
		req  func() *http.Request
	}
	var calls []call
	for _, scenario := range []string{"text", "tool", "reasoning", "structured", "image", "usage"} {
		for _, a := range dialectList {
			body := fixture(t, scenario, a.name, "request.json")
			for _, b := range dialectList {
				path, payload := streamRequest(t, a.name, "via-"+b.name, body)
				calls = append(calls, call{scenario + " " + a.name + ">" + b.name, func() *http.Request {
					return clientPost(url+path, bytes.NewReader(payload))
				}})
			}
		}
	}
	// Agents' own requests too: their tools, their instructions, Codex's
	// custom and namespaced tools.
	for _, agent := range []struct{ file, client string }{
		{"claude_code/request.json", "messages"},
		{"gemini_cli/request.json", "generate_content"},
		{"gemini_cli/request_yolo.json", "generate_content"},
		{"codex/request.json", "responses"},
		{"codex/request_fallback_metadata_gpt-5.1-codex.json", "responses"},
		{"codex/request_default_model_gpt-6.1-sol.json", "responses"},
	} {
		body, err := os.ReadFile("../testdata/agent_tools/" + agent.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range dialectList {
			path, payload := streamRequest(t, agent.client, "via-"+b.name, body)
			calls = append(calls, call{agent.file + " >" + b.name, func() *http.Request {
				return clientPost(url+path, bytes.NewReader(payload))
			}})
		}
	}
	// A connection of its own for each stream: a handler's goroutine
	// serves the next request on its connection with the stack the last
	// one grew, and the limit only stops a stack that grows.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	run := func(limited bool) {
		// The requests are made before the limit: only the streams run
		// under it.
		reqs := make([]*http.Request, len(calls))
		for i, c := range calls {
			reqs[i] = c.req()
		}
		if limited {
			debug.SetMaxStack(smallStack)
			defer debug.SetMaxStack(1 << 30)
		}
		for i, req := range reqs {
			if limited {
				// The process may stop in this call: say which it is.
				fmt.Fprintln(os.Stderr, "stream:", calls[i].name)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", calls[i].name, err)
			}
			out, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || len(out) == 0 {
				t.Fatalf("%s: status %d, %d bytes, %v: %.300s", calls[i].name, resp.StatusCode, len(out), err, out)
			}
		}
	}
	// Once without the limit first: what a process does once (building
	// the JSON encoders of each type by reflection, deep in their first
	// use) is not what every stream does.
	run(false)
	growKept()
	// Every stream under the limit opens its upstream connection, as a
	// stream does on a gateway just started or reloaded: dialling is on
	// the stream's path too.
	g.d.CloseIdleConnections()
	run(true)
	t.Logf("streams on small stacks: %d (6 scenarios, every dialect to every dialect; agents' requests to every dialect)", len(calls))
}

// streamRequest makes a recorded client request a stream to model: its
// path and body.
func streamRequest(t *testing.T, client, model string, body []byte) (string, []byte) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	path := map[string]string{
		"messages": "/v1/messages", "responses": "/v1/responses", "chat_completions": "/v1/chat/completions",
		"generate_content": "/v1beta/models/" + model + ":streamGenerateContent?alt=sse",
	}[client]
	if client != "generate_content" {
		m["model"], m["stream"] = model, true
	}
	if client == "chat_completions" {
		m["stream_options"] = map[string]any{"include_usage": true}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, "/") {
		t.Fatalf("no path for %s", client)
	}
	return path, out
}
