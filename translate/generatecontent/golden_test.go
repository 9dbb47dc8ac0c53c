package generatecontent_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// TestGolden runs the cases under testdata/generate_content through the shared round trip
// (translate/internal/dialecttest says what it checks), the cases an SDK
// builds rebuilt first.
func TestGolden(t *testing.T) {
	dialecttest.RunPrepared(t, dialecttest.GenerateContent, sdkRequest)
}
