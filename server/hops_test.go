package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/server"
)

// TestPlainRequestsTakeNoHop counts the hops to another goroutine's stack
// (offstack) that a request without tools takes (the recorded text and
// reasoning requests), from a client of every dialect to an upstream of
// every dialect: none for a whole
// request, and for a stream the one that starts its reply (net/http
// writing the head goes deep, under a stream's frames). Reading, writing
// and translating such a request is shallow; only what nests (tools,
// schemas, members kept as they came) goes off the handler's stack, and a
// hop costs microseconds a request.
func TestPlainRequestsTakeNoHop(t *testing.T) {
	g := startGateway(t, gwExtra{})
	client := &http.Client{}
	for _, scenario := range []string{"text", "reasoning"} {
		for _, a := range dialectList {
			hopsOfRequests(t, g.url, client, scenario, a.name)
		}
	}
	// The replies' header values are shared: serving them changed none.
	for want, v := range server.SharedHeaderValues() {
		if len(v) != 1 || v[0] != want {
			t.Errorf("the shared header value %q is now %q", want, v)
		}
	}
}

// hopsOfRequests checks the hops of a scenario's request from a client of
// dialect a to an upstream of every dialect.
func hopsOfRequests(t *testing.T, url string, client *http.Client, scenario, a string) {
	body := fixture(t, scenario, a, "request.json")
	for _, b := range dialectList {
		for _, stream := range []bool{false, true} {
			path, payload := plainRequest(t, a, "via-"+b.name, body, stream)
			name := scenario + " " + a + ">" + b.name
			if stream {
				name += " stream"
			}
			do := func() {
				resp, err := client.Do(clientPost(url+path, bytes.NewReader(payload)))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				out, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || len(out) == 0 {
					t.Fatalf("%s: status %d, %d bytes, %v: %.300s", name, resp.StatusCode, len(out), err, out)
				}
			}
			do() // first uses (encoders made by reflection once) aside
			before := offstack.Runs()
			do()
			want := uint64(0)
			if stream {
				want = 1
			}
			if hops := offstack.Runs() - before; hops != want {
				t.Errorf("%s: %d hops off the handler's stack, want %d", name, hops, want)
			}
		}
	}
}

// plainRequest is a recorded client request to model, streamed or not,
// without the settings that make a request deep: its path and body.
func plainRequest(t *testing.T, client, model string, body []byte, stream bool) (string, []byte) {
	path, out := streamRequest(t, client, model, body)
	if stream {
		return path, out
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if client == "generate_content" {
		path = strings.Replace(path, ":streamGenerateContent?alt=sse", ":generateContent", 1)
	} else {
		m["stream"] = false
		delete(m, "stream_options")
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return path, out
}
