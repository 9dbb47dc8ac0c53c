package jsonx

// Skip passes over the next value, whatever it is, checking it as
// Unmarshal would. Nested objects and arrays are followed in a loop, not
// by recursion: a deep value (an agent's tool schema, a kept member) takes
// no more stack than a flat one, and values are passed over deep in a
// stream's loop, on a handler's small stack.
func (w *Walker) Skip() error {
	base := w.depth
	for {
		// A value.
		switch c := w.space(); c {
		case '"':
			if _, _, ok := w.str(); !ok {
				return ErrForm
			}
		case 'n':
			if !w.literal("null") {
				return ErrForm
			}
		case 't':
			if !w.literal("true") {
				return ErrForm
			}
		case 'f':
			if !w.literal("false") {
				return ErrForm
			}
		case '{', '[':
			if w.depth++; w.depth > maxDepth {
				return ErrForm
			}
			w.pos++
			w.setObject(c == '{')
			if w.space() == c+2 { // '}' or ']'
				w.pos++
				w.depth--
				break
			}
			if c == '{' && !w.skipName() {
				return ErrForm
			}
			continue // its first member's value, or first element
		default:
			if _, ok := w.number(); !ok {
				return ErrForm
			}
		}
		// After a value: the containers it ends, then the next value.
		next := false
		for !next {
			if w.depth == base {
				return nil
			}
			object := w.isObject()
			switch w.space() {
			case ',':
				w.pos++
				if object && !w.skipName() {
					return ErrForm
				}
				next = true
			case '}', ']':
				if (w.data[w.pos] == '}') != object {
					return ErrForm
				}
				w.pos++
				w.depth--
			default:
				return ErrForm
			}
		}
	}
}

// skipName passes over an object member's name and the colon after it.
func (w *Walker) skipName() bool {
	if w.space() != '"' {
		return false
	}
	if _, _, ok := w.str(); !ok || w.space() != ':' {
		return false
	}
	w.pos++
	return true
}

// setObject records whether the container at the current depth, which
// Skip follows, is an object or an array.
func (w *Walker) setObject(object bool) {
	i, bit := w.depth/64, uint64(1)<<(w.depth%64)
	if object {
		w.objects[i] |= bit
	} else {
		w.objects[i] &^= bit
	}
}

// isObject reports whether the container at the current depth is an
// object.
func (w *Walker) isObject() bool {
	return w.objects[w.depth/64]&(uint64(1)<<(w.depth%64)) != 0
}
