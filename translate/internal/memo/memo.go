// Package memo remembers what a costly function of a text gave, for texts
// that come again and again: agents send the same tools, with the same
// JSON Schemas, on every turn of a conversation, and adjusting a schema
// for a service costs more than the rest of a request's translation.
package memo

import "sync"

// Memo remembers the values of at most max texts, and forgets them all
// when full (a bound, not an eviction policy: a working set fits many
// times over). Values are shared by every caller and must not be
// modified. Failures are not remembered.
type Memo[V any] struct {
	mu  sync.Mutex
	m   map[string]V
	max int
}

// New returns a Memo of at most max values.
func New[V any](max int) *Memo[V] {
	return &Memo[V]{m: map[string]V{}, max: max}
}

// Do returns the value remembered for key, or makes it with f and
// remembers it.
func (c *Memo[V]) Do(key string, f func(string) (V, error)) (V, error) {
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := f(key)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[key] = v
	c.mu.Unlock()
	return v, nil
}

// Len is how many values are remembered.
func (c *Memo[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
