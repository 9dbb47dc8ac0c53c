package cross_test

import (
	"bytes"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// A tool call's arguments and a tool's result are read from a client as
// every wire body is, a repeated name allowed (the last wins). Such an
// object is still an object on the way to every upstream, as it came, as
// the same-dialect path forwards it and as every raw value Parley keeps
// goes out: it is not refused as "not a JSON object", nor sent as text.
func TestRepeatedNamesStayAnObject(t *testing.T) {
	body := []byte(`{"model":"m","max_tokens":64,"messages":[` +
		`{"role":"user","content":"weather?"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris","city":"Rome"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"{\"temp\":1,\"temp\":2}"}]}],` +
		`"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]}`)
	s := dialecttest.Named("messages")
	req, err := s.Client.DecodeRequest(s.Incoming(http.Header{}, s.Model, body))
	if err != nil {
		t.Fatal(err)
	}
	ups := agentUpstreams()
	for _, name := range slices.Sorted(maps.Keys(ups)) {
		up := ups[name]
		t.Run(name, func(t *testing.T) {
			out, err := up.Upstream.EncodeRequest(req, translate.Target{Model: up.Model, APIKey: "sk-test", Upstream: "up"})
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			// As an object, or as the text of one where the dialect
			// carries arguments as a string.
			if !bytes.Contains(out.Body, []byte(`:{"city":"Paris","city":"Rome"}`)) &&
				!bytes.Contains(out.Body, []byte(`:"{\"city\":\"Paris\",\"city\":\"Rome\"}"`)) {
				t.Errorf("the call's arguments are not the object as it came:\n%s", out.Body)
			}
			if name == "generate_content" && !bytes.Contains(out.Body, []byte(`"response":{"temp":1,"temp":2}`)) {
				t.Errorf("the tool's result is not the object as it came:\n%s", out.Body)
			}
		})
	}
}
