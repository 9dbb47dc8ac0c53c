package songgen_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/songgen"
)

func seeds(f *testing.F, sub, name string) {
	paths, _ := filepath.Glob(filepath.Join(dir, sub, "*", name))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeSubmit: any body either fails with an envelope error of
// status 400, or decodes to an input that encodes for the upstream and
// decodes back the same way. Nothing panics.
func FuzzDecodeSubmit(f *testing.F) {
	seeds(f, "submit", "request.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, decode := range []func([]byte) (*songgen.Submission, error){
			func(b []byte) (*songgen.Submission, error) { return songgen.DecodeMusic(b, nil) },
			songgen.DecodeLyrics, songgen.DecodeUpload, songgen.DecodeConcat,
		} {
			sub, err := decode(body)
			if err != nil {
				if status, _ := songgen.EncodeError(translate.ToProto(err)); status != http.StatusBadRequest {
					t.Fatalf("bad input answered %d: %v", status, err)
				}
				continue
			}
			if _, _, err := songgen.EncodeSubmit(sub.Input, "up-1"); err != nil {
				t.Fatalf("a decoded input does not encode: %v", err)
			}
		}
		if _, err := songgen.DecodeFetch(body); err != nil {
			if status, _ := songgen.EncodeError(translate.ToProto(err)); status != http.StatusBadRequest {
				t.Fatalf("bad fetch answered %d: %v", status, err)
			}
		}
	})
}

// FuzzDecodeFetchReply: any upstream reply is read or refused with an
// upstream error; progress stays within 0..100 or unknown.
func FuzzDecodeFetchReply(f *testing.F) {
	seeds(f, "upstream", "reply.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		ups, err := songgen.DecodeFetchReply(http.StatusOK, nil, body)
		if err != nil {
			return
		}
		for _, u := range ups {
			if u.Progress < -1 || u.Progress > 100 {
				t.Fatalf("progress %d", u.Progress)
			}
		}
	})
}
