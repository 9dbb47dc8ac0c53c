// Package dialects is the one list of the dialects Parley speaks. The
// command wires it into the server and the dispatcher, which range over it
// and name no dialect themselves; tests range over it too. Adding a dialect
// is its package under translate and one line here.
package dialects

import (
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
	"github.com/parleyhq/parley/translate/songgen"
)

// All returns every dialect, in the order they are listed and documented.
func All() translate.Dialects {
	return translate.Dialects{
		messages.Dialect(),
		generatecontent.Dialect(),
		responses.Dialect(),
		chatcompletions.Dialect(),
		converse.Dialect(),
		songgen.Dialect(),
	}
}
