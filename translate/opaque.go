package translate

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Reasoning signatures and encrypted reasoning only work with the service
// that made them: a provider rejects a signature it did not issue. Parley
// therefore remembers the origin of every opaque value.
//
// Toward a client of the same dialect as the value's maker, the value goes
// out unchanged, so that a client may take its history straight to the real
// service, unless more upstreams than the maker speak that dialect
// (Origin.shared): a bare value would then come back without saying which
// of them made it, and go to the wrong one (another account refuses it),
// so it is sealed too. Toward a client of another dialect, the value is
// sealed: wrapped,
// still as standard base64 (some SDKs decode signatures as base64 bytes),
// together with its origin. When the client sends the history back, Parley
// opens the seal and knows where the value may go; a value without a seal
// is taken to come from a service of the client's own dialect.
//
// A seal also records what the value was, when the client's dialect has
// no place of the same kind for it: a carrier is a signature that the
// client's dialect cannot hold on its part (a thought signature on a tool
// call, say), which travels in a reasoning block of its own and is
// re-attached to the part after it (or before it) when it comes back; an
// encrypted value is reasoning content sealed into a signature field.

var sealMagic = []byte("PRLY")

const (
	sealVersion     = 1
	flagCarrierNext = 1 << 0
	flagWasBase64   = 1 << 1
	flagCarrierPrev = 1 << 2
	flagEncrypted   = 1 << 3
	flagSignature   = 1 << 4
	flagUnsigned    = 1 << 5
	flagCompaction  = 1 << 6
	flagItemID      = 1 << 7
	maxSealedHeader = 512
)

// SealKind says what a sealed value stands for in the client's dialect.
type SealKind int

const (
	// SealAsIs: a value in a field of its own kind.
	SealAsIs SealKind = iota
	// SealCarrierNext: the signature of the part after the carrier block.
	SealCarrierNext
	// SealCarrierPrev: the signature of the part before the carrier block.
	SealCarrierPrev
	// SealEncrypted: encrypted reasoning content held in a signature field.
	SealEncrypted
	// SealSignature: the signature of a reasoning part held in an
	// encrypted-content field (a dialect whose reasoning carries no
	// signature of its own).
	SealSignature
	// SealUnsigned: no signature at all, for a client whose dialect
	// requires one on every reasoning block (Unsigned).
	SealUnsigned
	// SealCompaction: the summary of a conversation Parley compacted
	// (SealSummary).
	SealCompaction
)

// Opened is a value a client sent back, with what its seal said.
type Opened struct {
	*parleyv1.Opaque
	Kind SealKind
	// ItemID is the id of the item the value belonged to, where the
	// maker's dialect names reasoning by item (SealItem).
	ItemID string
}

// SealOpaque returns the wire value of op for a client of dialect client.
// A value of the client's own dialect held as what it is goes out
// unchanged; anything else is sealed.
func SealOpaque(op *parleyv1.Opaque, client parleyv1.Dialect, kind SealKind) string {
	return SealItem(op, client, kind, "")
}

// SealItem is SealOpaque for a value that belongs to an item of its
// maker's dialect: a responses service's encrypted reasoning goes back to
// it only with its reasoning item's id, which the seal keeps for a client
// whose dialect has no place for one (the messages style's signature, the
// content-generation style's thought signature).
func SealItem(op *parleyv1.Opaque, client parleyv1.Dialect, kind SealKind, itemID string) string {
	if op == nil {
		return ""
	}
	origin := op.GetOrigin().GetDialect()
	if kind == SealAsIs && (origin == client && !op.GetOrigin().GetShared() || origin == parleyv1.Dialect_DIALECT_UNSPECIFIED) {
		return op.GetValue()
	}
	var flags byte
	payload := []byte(op.GetValue())
	switch kind {
	case SealCarrierNext:
		flags |= flagCarrierNext
	case SealCarrierPrev:
		flags |= flagCarrierPrev
	case SealEncrypted:
		flags |= flagEncrypted
	case SealSignature:
		flags |= flagSignature
	case SealUnsigned:
		flags |= flagUnsigned
	case SealCompaction:
		flags |= flagCompaction
	}
	if raw, err := base64.StdEncoding.DecodeString(op.GetValue()); err == nil && base64.StdEncoding.EncodeToString(raw) == op.GetValue() {
		flags |= flagWasBase64
		payload = raw
	}
	if len(itemID) > maxSealedHeader {
		itemID = "" // no service's item id is this long; the seal must open
	}
	if itemID != "" {
		flags |= flagItemID
	}
	b := make([]byte, 0, len(sealMagic)+3+len(op.GetOrigin().GetUpstream())+len(op.GetOrigin().GetModel())+len(itemID)+len(payload)+6)
	b = append(b, sealMagic...)
	b = append(b, sealVersion, flags, byte(origin))
	b = binary.AppendUvarint(b, uint64(len(op.GetOrigin().GetUpstream())))
	b = append(b, op.GetOrigin().GetUpstream()...)
	b = binary.AppendUvarint(b, uint64(len(op.GetOrigin().GetModel())))
	b = append(b, op.GetOrigin().GetModel()...)
	if itemID != "" {
		b = binary.AppendUvarint(b, uint64(len(itemID)))
		b = append(b, itemID...)
	}
	b = append(b, payload...)
	return base64.StdEncoding.EncodeToString(b)
}

// Unsigned is the signature a client of dialect client gets on reasoning
// that its upstream did not sign (a chat service's reasoning text, a
// responses service's summaries), where the client's dialect requires
// one on every reasoning block and its clients send it back: a seal that
// opens as SealUnsigned, so that the reasoning comes back without a
// signature and is never sent to a service as signed by it.
func Unsigned(client parleyv1.Dialect) string {
	return SealOpaque(&parleyv1.Opaque{}, client, SealUnsigned)
}

// OpenOpaque reads a value a client of dialect client sent back: a sealed
// value with the origin and kind its seal records, any other value as made
// by a service of the client's dialect.
func OpenOpaque(value string, client parleyv1.Dialect) Opened {
	if o, ok := openSeal(value); ok {
		return o
	}
	return Opened{Opaque: &parleyv1.Opaque{Value: value, Origin: &parleyv1.Origin{Dialect: client}}}
}

func openSeal(value string) (Opened, bool) {
	// "UFJMWQ" is the base64 of the magic; anything else is not a seal.
	if len(value) < 12 || value[:6] != "UFJMWQ" {
		return Opened{}, false
	}
	b, err := base64.StdEncoding.DecodeString(value)
	if err != nil || !bytes.HasPrefix(b, sealMagic) || len(b) < len(sealMagic)+3 {
		return Opened{}, false
	}
	b = b[len(sealMagic):]
	if b[0] != sealVersion {
		return Opened{}, false
	}
	flags, dialect := b[1], parleyv1.Dialect(b[2])
	if _, known := parleyv1.Dialect_name[int32(dialect)]; !known {
		return Opened{}, false
	}
	b = b[3:]
	upstream, b, ok := readString(b)
	if !ok {
		return Opened{}, false
	}
	model, b, ok := readString(b)
	if !ok {
		return Opened{}, false
	}
	var itemID string
	if flags&flagItemID != 0 {
		if itemID, b, ok = readString(b); !ok {
			return Opened{}, false
		}
	}
	v := string(b)
	if flags&flagWasBase64 != 0 {
		v = base64.StdEncoding.EncodeToString(b)
	}
	o := Opened{Opaque: &parleyv1.Opaque{Value: v, Origin: &parleyv1.Origin{Dialect: dialect, Upstream: upstream, Model: model}}, ItemID: itemID}
	switch {
	case flags&flagCarrierNext != 0:
		o.Kind = SealCarrierNext
	case flags&flagCarrierPrev != 0:
		o.Kind = SealCarrierPrev
	case flags&flagEncrypted != 0:
		o.Kind = SealEncrypted
	case flags&flagSignature != 0:
		o.Kind = SealSignature
	case flags&flagUnsigned != 0:
		o.Kind = SealUnsigned
	case flags&flagCompaction != 0:
		o.Kind = SealCompaction
	}
	return o, true
}

func readString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxSealedHeader || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

// SendableTo reports whether an opaque value may be sent to an upstream of
// dialect d named upstream: only a service of the dialect that made it, and
// the very upstream when that is known.
func SendableTo(op *parleyv1.Opaque, d parleyv1.Dialect, upstream string) bool {
	if op.GetValue() == "" || op.GetOrigin().GetDialect() != d {
		return false
	}
	u := op.GetOrigin().GetUpstream()
	return u == "" || upstream == "" || u == upstream
}

// Stamp sets the origin of an opaque value an upstream just made.
func Stamp(value string, d parleyv1.Dialect, t Target) *parleyv1.Opaque {
	return &parleyv1.Opaque{Value: value, Origin: &parleyv1.Origin{Dialect: d, Upstream: t.Upstream, Model: t.Model, Shared: t.Shared}}
}

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns prefix followed by 24 random base-62 characters.
func NewID(prefix string) string {
	var raw [24]byte
	_, _ = rand.Read(raw[:])
	b := make([]byte, len(prefix), len(prefix)+len(raw))
	copy(b, prefix)
	for _, c := range raw {
		b = append(b, idAlphabet[int(c)%len(idAlphabet)])
	}
	return string(b)
}

// Disown returns a copy of req whose opaque values (signatures, encrypted
// reasoning) name no maker, or req itself when it carries none. Every
// encoder sends an opaque value only to the upstream that made it
// (SendableTo), so the copy goes to any upstream without them, exactly as
// another service's reasoning goes. The dispatcher sends it after an
// upstream refused the reasoning it was sent as not its own (a key, an
// account or a route changed since): reasoning a client kept is only
// ever a help to the model, never a reason to fail the turn.
func Disown(req *parleyv1.Request) *parleyv1.Request {
	if !carriesOpaque(req) {
		return req
	}
	out := proto.CloneOf(req)
	for _, m := range out.GetMessages() {
		for _, p := range m.GetParts() {
			disown(p.GetSignature())
			disown(p.GetReasoning().GetEncryptedContent())
		}
	}
	return out
}

func carriesOpaque(req *parleyv1.Request) bool {
	for _, m := range req.GetMessages() {
		for _, p := range m.GetParts() {
			if p.GetSignature() != nil || p.GetReasoning().GetEncryptedContent() != nil {
				return true
			}
		}
	}
	return false
}

// disown makes an opaque value nobody's: no dialect made it.
func disown(op *parleyv1.Opaque) {
	if op != nil {
		op.Origin = &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_UNSPECIFIED}
	}
}

// Maker is the upstream that made the newest opaque value of a request
// (a signature, encrypted reasoning), or "" when none names one: the
// upstream that can read the conversation's reasoning back.
func Maker(req *parleyv1.Request) string {
	msgs := req.GetMessages()
	for i := len(msgs) - 1; i >= 0; i-- {
		parts := msgs[i].GetParts()
		for j := len(parts) - 1; j >= 0; j-- {
			p := parts[j]
			for _, op := range []*parleyv1.Opaque{p.GetSignature(), p.GetReasoning().GetEncryptedContent()} {
				if u := op.GetOrigin().GetUpstream(); u != "" {
					return u
				}
			}
		}
	}
	return ""
}
