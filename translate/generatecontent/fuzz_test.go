package generatecontent_test

import (
	"testing"

	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// The fuzz targets are the shared ones (translate/internal/dialecttest
// says what they check), declared here because CI fuzzes each package's
// targets by these names and testdata/fuzz/<name> holds their corpus.

func FuzzDecodeRequest(f *testing.F) { dialecttest.FuzzDecodeRequest(f, dialecttest.GenerateContent) }

func FuzzStreamDecoder(f *testing.F) { dialecttest.FuzzStreamDecoder(f, dialecttest.GenerateContent) }
