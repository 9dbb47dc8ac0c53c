package server_test

import (
	"net/http"
	"testing"
)

// TestWholeReplyToAStream: an upstream that ignores stream: true and
// answers with one JSON body is played back to every client dialect's
// official SDK as a stream, after one upstream request, with the whole
// reply's text and usage. (issue 18)
func TestWholeReplyToAStream(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, a := range dialectList {
		for _, b := range dialectList {
			t.Run(a.name+"→"+b.name, func(t *testing.T) {
				g.fakes[b.name].set("text", func(w http.ResponseWriter, _ *http.Request, _ int) {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write(fixture(t, "text", b.name, "response.json"))
				})
				res := sdks[a.name](t, g.url, clientKey, "via-"+b.name, fixture(t, "text", a.name, "request.json"), true)
				if res.err != nil {
					t.Fatalf("the SDK's stream failed: %v", res.err)
				}
				want := upstreamAnswer(t, "text", b, false)
				if got := res.answer; got.Text != answerOf(t, want).Text || got.Out != want.GetUsage().GetOutputTokens() {
					t.Errorf("the stream said %+v, the whole reply %+v", got, answerOf(t, want))
				}
				if n := len(g.fakes[b.name].requests()); n != 1 {
					t.Errorf("%d upstream requests, want 1", n)
				}
			})
		}
	}
}
