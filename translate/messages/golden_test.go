package messages_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// TestGolden runs the cases under testdata/messages through the shared round trip
// (translate/internal/dialecttest says what it checks), the cases an SDK
// builds rebuilt first.
func TestGolden(t *testing.T) {
	dialecttest.RunPrepared(t, dialecttest.Messages, func(t *testing.T, c golden.Case) string {
		sdkRequest(t, c)
		return "" // the model is in the body
	})
}
