package chatcompletions_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// TestGolden runs the cases under testdata/chat_completions through the shared round trip
// (translate/internal/dialecttest says what it checks).
func TestGolden(t *testing.T) { dialecttest.Run(t, dialecttest.ChatCompletions) }
