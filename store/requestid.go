package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// NewRequestID returns a new request id: "req_" and 32 hex digits, the
// first 12 the time in milliseconds since the Unix epoch, the other 20
// random (80 bits, so that ids made in the same millisecond anywhere in a
// fleet do not meet).
//
// The time comes first so that ids made one after another sort one after
// another. The ledger keys its records by request id: an id that sorts
// last adds to the end of that index, where the pages of the last writes
// are, while a random one lands on any page of it, and a batch of them
// rewrites hundreds of pages.
func NewRequestID() string {
	return newRequestID(time.Now())
}

func newRequestID(now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	var out [4 + 32]byte
	copy(out[:], "req_")
	hex.Encode(out[4:], b[:])
	return string(out[:])
}
