package memo_test

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	_ "github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/memo"
)

// TestMemo: a value is made once per text, failures are made again, and
// the memo never holds more than its bound.
func TestMemo(t *testing.T) {
	m := memo.New[int](3)
	made := 0
	double := func(s string) (int, error) {
		made++
		if s == "bad" {
			return 0, errors.New("bad")
		}
		n, err := strconv.Atoi(s)
		return 2 * n, err
	}
	for range 2 {
		if v, err := m.Do("21", double); v != 42 || err != nil {
			t.Fatalf("Do(21) = %d, %v", v, err)
		}
	}
	if made != 1 {
		t.Errorf("made %d times, want once", made)
	}
	for range 2 {
		if _, err := m.Do("bad", double); err == nil {
			t.Fatal("no error for bad")
		}
	}
	if made != 3 {
		t.Errorf("a failure was remembered (made %d times)", made)
	}
	for i := range 10 {
		if _, err := m.Do(strconv.Itoa(i), double); err != nil {
			t.Fatal(err)
		}
		if m.Len() > 3 {
			t.Fatalf("%d values held, bound 3", m.Len())
		}
	}
}

// TestMemoConcurrent: callers at once get the same values (run with
// -race).
func TestMemoConcurrent(t *testing.T) {
	m := memo.New[string](8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := strconv.Itoa((g + i) % 12)
				v, err := m.Do(k, func(s string) (string, error) { return "v" + s, nil })
				if err != nil || v != "v"+k {
					t.Errorf("Do(%s) = %q, %v", k, v, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
