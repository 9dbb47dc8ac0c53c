package chatcompletions_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// TestDecodedToolsOwnTheirSchemas: functions' parameters, read from the
// body in place, are the decoded request's own.
func TestDecodedToolsOwnTheirSchemas(t *testing.T) {
	dialecttest.ToolsOwnTheirSchemas(t, chatcompletions.Client{}, "", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[`+
		`{"type":"function","function":{"name":"read","description":"Reads a file.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"a \"path\"\n"}},"required":["path"]}}},`+
		`{"type":"function","function":{"name":"ls","parameters": { "type" : "object" , "properties" : { } } }}]}`))
}
