package jsonx

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Walker reads a JSON value in place, for the quick readers of stream
// events: the events most streams are made of are read without reflection,
// by member name, and anything a quick reader does not expect makes it
// give up (ErrForm) so that Unmarshal reads the event instead.
//
// A Walker accepts only what Unmarshal accepts, and reads it the same way:
// it checks the grammar of every value it reads or passes over, strings
// for control characters, escapes and UTF-8 (a string with escapes is
// checked by jsontext itself), and numbers for their form. A member
// repeated in an object a reader reads is refused, where Unmarshal lets
// the last one win, so that such an event too is left to Unmarshal. It
// is a scanner of its own rather than a jsontext.Decoder because the
// decoder's state machine cost more than the rest of a quick read.
//
// Names given to Object's callback and values from Raw point into the
// data given to Reset; strings read with StringPtr live in the Walker
// until the next Reset.
type Walker struct {
	data  []byte
	pos   int
	depth int
	strs  [8]string
	nstr  int
	// names are the names of the objects being read, outermost first.
	names [][]byte
	// scratch holds the text of an escaped string being checked.
	scratch []byte
	// objects has a bit per depth Skip follows: set for an object, clear
	// for an array.
	objects [maxDepth/64 + 1]uint64
}

// ErrForm says that a value is not in the form a quick reader reads.
var ErrForm = errors.New("jsonx: not the quick form")

// maxDepth bounds the nesting a Walker follows (Unmarshal allows more;
// deeper values are left to it).
const maxDepth = 512

// Reset starts reading data.
func (w *Walker) Reset(data []byte) {
	w.data, w.pos, w.depth, w.nstr = data, 0, 0, 0
	w.names = w.names[:0]
}

// Release lets go of the data last read, the names it held included,
// for a Walker kept for later (in a pool) after reading a body as large
// as a conversation.
func (w *Walker) Release() {
	clear(w.names[:cap(w.names)])
	w.Reset(nil)
}

// space passes over white space and returns the next byte, or 0 at the
// end.
func (w *Walker) space() byte {
	for w.pos < len(w.data) {
		// Above the space, no byte is white space: one test for the
		// compact JSON most values come in.
		c := w.data[w.pos]
		if c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
		w.pos++
	}
	return 0
}

// A Place is where a Walker is in its input, for Back to return to.
type Place struct{ pos, depth, names int }

// Place returns where the Walker is.
func (w *Walker) Place() Place { return Place{w.pos, w.depth, len(w.names)} }

// Back returns the Walker to p, a place of the input it reads now, to
// read again what it read from there: a value a reader tried to read in
// place and declined, say.
func (w *Walker) Back(p Place) { w.pos, w.depth, w.names = p.pos, p.depth, w.names[:p.names] }

// Since returns the value read since p, as it came (as Raw would have
// returned it, read from p).
func (w *Walker) Since(p Place) jsontext.Value {
	start := p.pos
	for start < w.pos && (w.data[start] == ' ' || w.data[start] == '\t' || w.data[start] == '\n' || w.data[start] == '\r') {
		start++
	}
	return jsontext.Value(w.data[start:w.pos])
}

// End reports whether the value read was the whole input.
func (w *Walker) End() bool {
	w.space()
	return w.pos == len(w.data)
}

// Kind is the kind of the next value, as jsontext names kinds: '{', '[',
// '"', 'n', 't', 'f', '0' for a number, 0 for anything else.
func (w *Walker) Kind() jsontext.Kind {
	switch c := w.space(); c {
	case '{', '[', '"', 'n', 't', 'f':
		return jsontext.Kind(c)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0'
	}
	return 0
}

// Object reads a JSON object, calling member with each name (without its
// quotes); member reads the value. A name spelled with escapes is
// ErrForm: it may stand for a name the reader knows.
func (w *Walker) Object(member func(name []byte) error) error {
	return w.members(true, member)
}

// members reads an object, calling member for each name. With named, a
// name spelled with escapes or given twice is ErrForm; without, any name
// Unmarshal accepts is passed over.
func (w *Walker) members(named bool, member func(name []byte) error) error {
	if w.space() != '{' {
		return ErrForm
	}
	if w.depth++; w.depth > maxDepth {
		return ErrForm
	}
	w.pos++
	mark := len(w.names)
	// seen has a bit for each name read here (nameBit): a name whose
	// bit is clear is not among them, and is not looked for.
	var seen uint64
	if w.space() == '}' {
		w.pos++
		w.depth--
		return nil
	}
	for {
		if w.space() != '"' {
			return ErrForm
		}
		name, escaped, ok := w.str()
		if !ok || named && escaped {
			return ErrForm
		}
		if named {
			bit := nameBit(name)
			if seen&bit != 0 {
				for _, other := range w.names[mark:] {
					if bytes.Equal(other, name) {
						return ErrForm
					}
				}
			}
			seen |= bit
			w.names = append(w.names, name)
		}
		if w.space() != ':' {
			return ErrForm
		}
		w.pos++
		if err := member(name); err != nil {
			return err
		}
		switch w.space() {
		case ',':
			w.pos++
		case '}':
			w.pos++
			w.depth--
			w.names = w.names[:mark]
			return nil
		default:
			return ErrForm
		}
	}
}

// nameBit is one of 64 bits chosen by a name's length and its first and
// last bytes, which tell apart the names of most objects.
func nameBit(name []byte) uint64 {
	h := uint(len(name))
	if h > 0 {
		h = h*5 + uint(name[0])*3 + uint(name[h-1])
	}
	return 1 << (h & 63)
}

// Array reads a JSON array, or null (isNull, calling nothing), calling
// elem for each element; elem reads it.
func (w *Walker) Array(elem func() error) (isNull bool, err error) {
	if w.Null() {
		return true, nil
	}
	if w.space() != '[' {
		return false, ErrForm
	}
	if w.depth++; w.depth > maxDepth {
		return false, ErrForm
	}
	w.pos++
	if w.space() == ']' {
		w.pos++
		w.depth--
		return false, nil
	}
	for {
		if err := elem(); err != nil {
			return false, err
		}
		switch w.space() {
		case ',':
			w.pos++
		case ']':
			w.pos++
			w.depth--
			return false, nil
		default:
			return false, ErrForm
		}
	}
}

// literal reads lit if it comes next.
func (w *Walker) literal(lit string) bool {
	if w.space() != lit[0] || !bytes.HasPrefix(w.data[w.pos:], []byte(lit)) {
		return false
	}
	w.pos += len(lit)
	return true
}

// Null reads a null if one comes next.
func (w *Walker) Null() bool {
	// Most often the next byte is another value's: no call to see it.
	if w.pos < len(w.data) {
		if c := w.data[w.pos]; c > ' ' && c != 'n' {
			return false
		}
	}
	return w.literal("null")
}

// str reads the string at w.pos (its opening quote), returning what is
// between the quotes and whether it has escapes; ok is false for a string
// Unmarshal refuses: a control character, a bad escape, invalid UTF-8, no
// closing quote.
func (w *Walker) str() (inner []byte, escaped, ok bool) {
	start := w.pos + 1
	end, escaped, ok := scanString(w.data, start)
	if !ok {
		return nil, false, false
	}
	w.pos = end + 1
	inner = w.data[start:end]
	if escaped {
		// The one-letter escapes are read here; \u escapes (surrogates
		// among them) and whatever is not an escape are checked as
		// Unmarshal checks them.
		var quick bool
		if w.scratch, quick = appendUnquote(w.scratch[:0], inner); !quick {
			var err error
			if w.scratch, err = jsontext.AppendUnquote(w.scratch[:0], w.data[start-1:end+1]); err != nil {
				return nil, false, false
			}
		}
	}
	return inner, escaped, true
}

// String reads a string, or null as "" (as Unmarshal leaves a string).
func (w *Walker) String() (string, error) {
	if w.Null() {
		return "", nil
	}
	if w.space() != '"' {
		return "", ErrForm
	}
	inner, escaped, ok := w.str()
	switch {
	case !ok:
		return "", ErrForm
	case escaped:
		return string(w.scratch), nil
	}
	return string(inner), nil
}

// Word reads a string, or null as "", as String does, but returns the
// one of common it equals, when it does, so that reading a common word
// (an event's type, a role, a stop reason) allocates nothing.
func (w *Walker) Word(common ...string) (string, error) {
	if w.Null() {
		return "", nil
	}
	if w.space() != '"' {
		return "", ErrForm
	}
	inner, escaped, ok := w.str()
	switch {
	case !ok:
		return "", ErrForm
	case escaped:
		return string(w.scratch), nil
	}
	for _, c := range common {
		if string(inner) == c {
			return c, nil
		}
	}
	return string(inner), nil
}

// StringPtr reads a string, or null as nil.
func (w *Walker) StringPtr() (*string, error) {
	if w.Null() {
		return nil, nil
	}
	s, err := w.String()
	if err != nil {
		return nil, err
	}
	var p *string
	if w.nstr < len(w.strs) {
		p = &w.strs[w.nstr]
		w.nstr++
	} else {
		p = new(string)
	}
	*p = s
	return p, nil
}

// Strings reads an array of strings, or null as nil, as Unmarshal reads
// a []string; an element of another kind (null included) is ErrForm.
func (w *Walker) Strings() ([]string, error) {
	var list []string
	isNull, err := w.Array(func() error {
		if w.Kind() != '"' {
			return ErrForm
		}
		s, err := w.String()
		list = append(list, s)
		return err
	})
	if err == nil && !isNull && list == nil {
		list = []string{}
	}
	return list, err
}

// SkipString passes over a string or null.
func (w *Walker) SkipString() error {
	if k := w.Kind(); k != '"' && k != 'n' {
		return ErrForm
	}
	return w.Skip()
}

// number reads a number in JSON's grammar and returns it.
func (w *Walker) number() ([]byte, bool) {
	d := w.data
	start, i := w.pos, w.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	w.pos = i
	return d[start:i], true
}

// numberOrNull reads a number's token, or null as nil.
func (w *Walker) numberOrNull() ([]byte, error) {
	if w.Null() {
		return nil, nil
	}
	if w.Kind() != '0' {
		return nil, ErrForm
	}
	v, ok := w.number()
	if !ok {
		return nil, ErrForm
	}
	return v, nil
}

// Int reads an integer as Unmarshal reads one into an int64 (digits only,
// in range), or null as 0.
func (w *Walker) Int() (int64, error) {
	v, err := w.numberOrNull()
	if err != nil || v == nil {
		return 0, err
	}
	neg := v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 18 {
		return 0, ErrForm
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, ErrForm
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// Float reads a number as Unmarshal reads one into a float64, or null as
// 0; a number out of range is ErrForm.
func (w *Walker) Float() (float64, error) {
	v, err := w.numberOrNull()
	if err != nil || v == nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, ErrForm
	}
	return f, nil
}

// The readers of whole bodies keep what they read after the Walker has
// gone back to its pool: these read into storage of their own, and read
// null as nil, as Unmarshal leaves a pointer.

// IntPtr reads an integer as Int does, or null as nil.
func (w *Walker) IntPtr() (*int64, error) {
	if w.Null() {
		return nil, nil
	}
	n, err := w.Int()
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// IntAt reads a number as Int does into *at and returns at, or null as
// nil: for a reader that keeps several counts in one allocation.
func (w *Walker) IntAt(at *int64) (*int64, error) {
	if w.Null() {
		return nil, nil
	}
	n, err := w.Int()
	if err != nil {
		return nil, err
	}
	*at = n
	return at, nil
}

// FloatPtr reads a number as Float does, or null as nil.
func (w *Walker) FloatPtr() (*float64, error) {
	if w.Null() {
		return nil, nil
	}
	f, err := w.Float()
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// WordPtr reads a string as Word does, or null as nil. (StringPtr's
// strings live in the Walker.)
func (w *Walker) WordPtr(common ...string) (*string, error) {
	if w.Null() {
		return nil, nil
	}
	s, err := w.Word(common...)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// Copy reads the next value whole, as Raw does, into bytes of its own.
func (w *Walker) Copy() (jsontext.Value, error) {
	v, err := w.Raw()
	if err != nil {
		return nil, err
	}
	return append(jsontext.Value(nil), v...), nil
}

// Keep reads the next value into kept, under name, as an embedded Unknown
// keeps a member Unmarshal does not model.
func (w *Walker) Keep(kept Unknown, name []byte) (Unknown, error) {
	v, err := w.Copy()
	if err != nil {
		return kept, err
	}
	if kept == nil {
		kept = Unknown{}
	}
	kept[string(name)] = v
	return kept, nil
}

// Raw reads the next value whole; it points into the data being read.
func (w *Walker) Raw() (jsontext.Value, error) {
	w.space()
	start := w.pos
	if err := w.Skip(); err != nil {
		return nil, err
	}
	return jsontext.Value(w.data[start:w.pos]), nil
}

// BoolPtr reads true or false into *at, returning at; null is nil.
func (w *Walker) BoolPtr(at *bool) (*bool, error) {
	switch {
	case w.Null():
		return nil, nil
	case w.literal("true"):
		*at = true
		return at, nil
	case w.literal("false"):
		*at = false
		return at, nil
	}
	return nil, ErrForm
}
