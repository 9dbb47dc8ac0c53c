package messages_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/messages"
)

// TestDecodedToolsOwnTheirSchemas: Claude Code's tools, their schemas
// read from the body in place, are the decoded request's own.
func TestDecodedToolsOwnTheirSchemas(t *testing.T) {
	dialecttest.ToolsOwnTheirSchemas(t, messages.Client{}, "agent_tools/claude_code/request.json", nil)
}
