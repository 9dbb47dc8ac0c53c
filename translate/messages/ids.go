package messages

import (
	"encoding/base64"
	"strings"

	"github.com/parleyhq/parley/translate"
)

// Tool-call ids, both ways. This dialect takes tool_use ids of letters,
// digits, "_" and "-" only (the service answers 400 to any other), while
// other dialects' services make ids such as "functions.Bash:0" or
// "call:1/2". Such an id goes out, to a client or to an upstream, as
// idPrefix and the base64url of the id, which has only those characters,
// and comes back from a client as the original id, so that the upstream
// that made it gets its own id back. An id this dialect takes goes out as
// it is: nothing changes between services of this dialect.

// idPrefix marks an id that was mapped. A mapped id always stands for an
// id this dialect would refuse, so a service's own id that happens to
// start with it still reads as itself.
const idPrefix = "toolu_prly_"

// wireID is id as this dialect can carry it.
func wireID(id string) string {
	if id == "" || validID(id) {
		return id
	}
	return idPrefix + base64.RawURLEncoding.EncodeToString([]byte(id))
}

// canonicalID is the id a client's wire id stands for.
func canonicalID(id string) string {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok {
		return id
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) == 0 || validID(string(raw)) {
		return id
	}
	return string(raw)
}

func validID(id string) bool { return translate.IDChars(id) }
