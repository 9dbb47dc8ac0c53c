package messages

import "testing"

// An id this dialect refuses goes out as one it takes and comes back as
// itself; an id it takes, a service's own id that happens to start with
// the prefix included, goes and comes back unchanged.
func TestToolIDsRoundTrip(t *testing.T) {
	for _, id := range []string{"functions.Bash:0", "call:1/2", "ü", "a b", "toolu_01A09q90qw90lq917835lq9", "call_abc-1", "toolu_prly_x", "toolu_prly_YWJj", ""} {
		w := wireID(id)
		if !validID(w) {
			t.Errorf("%q went out as %q, which the dialect refuses", id, w)
		}
		if validID(id) && w != id {
			t.Errorf("%q, valid already, went out as %q", id, w)
		}
		if back := canonicalID(w); back != id {
			t.Errorf("%q went out as %q and came back as %q", id, w, back)
		}
	}
}
