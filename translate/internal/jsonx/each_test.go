package jsonx_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

type eachHolder struct {
	List jsonx.Each[struct {
		N int `json:"n"`
	}] `json:"list"`
}

// Each hands over elements in order, stops calling Fn after its first
// error but still reads the whole array (so malformed JSON later on is
// the error reported), and starts again when the member comes twice.
func TestEach(t *testing.T) {
	var got []int
	h := eachHolder{}
	h.List.Reset = func() { got = got[:0] }
	h.List.Fn = func(i int, v *struct {
		N int `json:"n"`
	}) error {
		if v.N < 0 {
			return errors.New("negative")
		}
		got = append(got, i*100+v.N)
		return nil
	}
	for _, c := range []struct {
		body, want, fnErr, jsonErr string
		n                          int
	}{
		{body: `{"list":[{"n":1},{"n":2}]}`, want: "[1 102]", n: 2},
		{body: `{"list":null}`, want: "[]"},
		{body: `{"list":[{"n":1}],"list":[{"n":7}]}`, want: "[7]", n: 1},
		{body: `{"list":[{"n":-1},{"n":3}]}`, want: "[]", n: 2, fnErr: "negative"},
		{body: `{"list":[{"n":-1},{"n":"x"}]}`, jsonErr: "list"},
		{body: `{"list":{"n":1}}`, jsonErr: "list"},
	} {
		got = got[:0]
		h.List.N, h.List.Err = 0, nil
		err := jsonx.Unmarshal([]byte(c.body), &h)
		switch {
		case c.jsonErr != "":
			if err == nil || !strings.Contains(err.Error(), c.jsonErr) {
				t.Errorf("%s: error %v, want one naming %s", c.body, err, c.jsonErr)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if s := fmt.Sprint(got); s != c.want {
			t.Errorf("%s: elements %s, want %s", c.body, s, c.want)
		}
		if h.List.N != c.n {
			t.Errorf("%s: N %d, want %d", c.body, h.List.N, c.n)
		}
		if (h.List.Err == nil) != (c.fnErr == "") || h.List.Err != nil && h.List.Err.Error() != c.fnErr {
			t.Errorf("%s: Err %v, want %q", c.body, h.List.Err, c.fnErr)
		}
	}
}
