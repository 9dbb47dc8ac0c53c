// Package readall reads a body whole into one slice when its length is
// known.
package readall

import "io"

// Sized reads r to its end. A body whose length is known (size, at least
// 0) is read into one slice of that length, where io.ReadAll grows slices
// from 512 bytes and copies them into a last one; a body longer than size
// grows the slice, and one of unknown length (size below 0) is read by
// io.ReadAll. The slice is made before any of the body is read: the
// caller bounds size.
func Sized(r io.Reader, size int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(r)
	}
	// One byte more, for the read that finds the end.
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // longer than said: let it grow
			b = append(b, 0)[:len(b)]
		}
	}
}
