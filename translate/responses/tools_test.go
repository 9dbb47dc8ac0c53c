package responses_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/responses"
)

// TestDecodedToolsOwnTheirSchemas: the Codex CLI's tools, their schemas
// read from the body in place, are the decoded request's own.
func TestDecodedToolsOwnTheirSchemas(t *testing.T) {
	dialecttest.ToolsOwnTheirSchemas(t, responses.Client{}, "agent_tools/codex/request.json", nil)
}
