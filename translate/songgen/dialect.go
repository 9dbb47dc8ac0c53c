package songgen

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Dialect describes the music-task interface to the layers above
// translate. It is no chat dialect: its client side is served by the
// music task endpoints and its upstream side by the task service.
func Dialect() *translate.Dialect {
	return &translate.Dialect{Enum: parleyv1.Dialect_DIALECT_SONGGEN}
}
