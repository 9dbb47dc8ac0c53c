package dialecttest_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// TestAllIsTheDialectList: All describes every chat dialect of the
// gateway's list (one with both a client and an upstream side) once, in
// the list's order, with the list's own codecs, so that no shared test
// leaves a dialect out or tests codecs the gateway does not serve.
func TestAllIsTheDialectList(t *testing.T) {
	var want []*translate.Dialect
	for _, d := range dialects.All() {
		if d.Client != nil && d.Upstream != nil {
			want = append(want, d)
		}
	}
	var got []string
	for _, s := range dialecttest.All {
		got = append(got, s.Name())
	}
	if len(got) != len(want) {
		t.Fatalf("All describes %v; the list's chat dialects are %d", got, len(want))
	}
	for i, d := range want {
		s := dialecttest.All[i]
		if s.Enum != d.Enum {
			t.Errorf("All[%d] describes %s; the list has %s there", i, s.Name(), d.Name())
			continue
		}
		if dialecttest.Named(d.Name()) != s {
			t.Errorf("%s is described more than once", d.Name())
		}
		if !reflect.DeepEqual(s.Client, d.Client) || !reflect.DeepEqual(s.Upstream, d.Upstream) {
			t.Errorf("%s: the description's codecs are %T and %T, the list's %T and %T", d.Name(), s.Client, s.Upstream, d.Client, d.Upstream)
		}
		if s.Client.Dialect() != d.Enum || s.Upstream.Dialect() != d.Enum {
			t.Errorf("%s: the codecs say they are %v and %v", d.Name(), s.Client.Dialect(), s.Upstream.Dialect())
		}
	}
}

// TestSpecsAreComplete: every description sets what the shared tests
// call, and its files exist, so that a new dialect's gaps show here
// rather than as a nil call in one of them.
func TestSpecsAreComplete(t *testing.T) {
	optional := map[string]bool{"SDKSameStream": true, "PinStreams": true, "StreamText": true}
	for _, s := range dialecttest.All {
		v := reflect.ValueOf(s).Elem()
		for i := range v.NumField() {
			if name := v.Type().Field(i).Name; !optional[name] && v.Field(i).IsZero() {
				t.Errorf("%s: %s is not set", s.Name(), name)
			}
		}
		// The paths are relative to translate/<package>, one level
		// below this one.
		paths := []string{s.Cases, filepath.Join(s.Cases, s.BenchRequest), filepath.Join(s.Cases, s.Reply)}
		if s.StreamText != "" {
			paths = append(paths, filepath.Join(s.Cases, s.StreamText))
		}
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join("..", p)); err != nil {
				t.Errorf("%s: %v", s.Name(), err)
			}
		}
	}
}
