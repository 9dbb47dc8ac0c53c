package generatecontent_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// TestDecodedToolsOwnTheirSchemas: the Gemini CLI's tools, their schemas
// read from the body in place, are the decoded request's own.
func TestDecodedToolsOwnTheirSchemas(t *testing.T) {
	dialecttest.ToolsOwnTheirSchemas(t, generatecontent.Client{}, "agent_tools/gemini_cli/request.json", nil)
}
