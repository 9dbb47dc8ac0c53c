package cross_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/sse"
)

// TestEncodersNeedNoRequestAfterTheStart: a client's stream encoder reads
// nothing of its request's conversation, instructions and tools after the
// stream's start (the responses encoder echoes the last two in every
// snapshot, from the start's). The server lets them go while a stream
// waits for its upstream. Every scenario's stream, from every upstream, is
// encoded for every client twice, with the request whole and with it
// emptied once the start is written: the bytes must be the same.
func TestEncodersNeedNoRequestAfterTheStart(t *testing.T) {
	root := "../../testdata/cross_table"
	scenarios, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	created := timestamppb.New(time.Unix(1_700_000_000, 0))
	for _, sc := range scenarios {
		if sc.Name() == "errors" {
			continue
		}
		for _, a := range dialecttest.All {
			body, err := os.ReadFile(filepath.Join(root, sc.Name(), a.Name(), "request.json"))
			if err != nil {
				t.Fatal(err)
			}
			req, err := a.Client.DecodeRequest(incoming(a, body))
			if err != nil {
				t.Fatalf("%s/%s: %v", sc.Name(), a.Name(), err)
			}
			req.Stream, req.StreamUsage = true, new(true)
			for _, b := range dialecttest.All {
				t.Run(sc.Name()+"/"+a.Name()+"_from_"+b.Name(), func(t *testing.T) {
					recorded, err := os.ReadFile(filepath.Join(root, sc.Name(), b.Name(), "stream.sse"))
					if err != nil {
						t.Fatal(err)
					}
					up := chatUpstream(b)
					var events []*parleyv1.StreamEvent
					for ev, err := range up.Stream(t, recorded, b.Upstream.NewStreamDecoder(translate.Target{Model: b.Model, Upstream: "up"})) {
						if err != nil {
							t.Fatal(err)
						}
						if r := ev.GetStart().GetResponse(); r != nil {
							stampID(r)
							if r.CreatedAt == nil {
								r.CreatedAt = created
							}
						}
						events = append(events, ev)
					}
					whole := sameIDs(encodeStream(t, a, proto.CloneOf(req), events, false))
					emptied := sameIDs(encodeStream(t, a, proto.CloneOf(req), events, true))
					if !bytes.Equal(whole, emptied) {
						t.Errorf("the %s stream differs when the request is let go after the start:\n%s\nagainst\n%s", a.Name(), emptied, whole)
					}
				})
			}
		}
	}
}

// madeID is an id an encoder makes up where the upstream gave none.
var madeID = regexp.MustCompile(`\b[a-z]+_[A-Za-z0-9]{20,}\b`)

// sameIDs numbers the made-up ids of a stream in order, so that two
// encodings of one stream compare equal.
func sameIDs(b []byte) []byte {
	seen := map[string][]byte{}
	return madeID.ReplaceAllFunc(b, func(id []byte) []byte {
		n, ok := seen[string(id)]
		if !ok {
			n = fmt.Appendf(nil, "id_%d", len(seen))
			seen[string(id)] = n
		}
		return n
	})
}

// encodeStream encodes events for a's client; with letGo, the request is
// emptied after the start as the server empties it.
func encodeStream(t *testing.T, a *dialecttest.Spec, req *parleyv1.Request, events []*parleyv1.StreamEvent, letGo bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := a.Client.NewStreamEncoder(req)
	for _, ev := range events {
		if err := enc.Encode(w, proto.CloneOf(ev)); err != nil {
			t.Fatalf("encode %s stream: %v", a.Name(), err)
		}
		if letGo && ev.GetStart() != nil {
			req.Messages, req.Instructions, req.Tools = nil, nil, nil
		}
	}
	return buf.Bytes()
}

// TestFailureNeedsNoRequestAfterTheStart: a stream that fails after its
// start (its upstream gone) ends the same, in every client's dialect,
// whether the request was let go or not: the responses encoder's failed
// snapshot echoes the instructions and tools as the others did.
func TestFailureNeedsNoRequestAfterTheStart(t *testing.T) {
	root := "../../testdata/cross_table"
	scenarios, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	created := timestamppb.New(time.Unix(1_700_000_000, 0))
	failure := &parleyv1.Error{Code: parleyv1.Code_CODE_UNAVAILABLE, Message: "the upstream went away"}
	for _, sc := range scenarios {
		if sc.Name() == "errors" {
			continue
		}
		for _, a := range dialecttest.All {
			t.Run(sc.Name()+"/"+a.Name(), func(t *testing.T) {
				body, err := os.ReadFile(filepath.Join(root, sc.Name(), a.Name(), "request.json"))
				if err != nil {
					t.Fatal(err)
				}
				req, err := a.Client.DecodeRequest(incoming(a, body))
				if err != nil {
					t.Fatal(err)
				}
				req.Stream = true
				recorded, err := os.ReadFile(filepath.Join(root, sc.Name(), a.Name(), "stream.sse"))
				if err != nil {
					t.Fatal(err)
				}
				var events []*parleyv1.StreamEvent
				for ev, err := range chatUpstream(a).Stream(t, recorded, a.Upstream.NewStreamDecoder(translate.Target{Model: a.Model, Upstream: "up"})) {
					if err != nil {
						t.Fatal(err)
					}
					if r := ev.GetStart().GetResponse(); r != nil {
						stampID(r)
						r.CreatedAt = created
					}
					events = append(events, ev)
					if len(events) == 3 {
						break
					}
				}
				var out [2][]byte
				for i, letGo := range []bool{false, true} {
					var buf bytes.Buffer
					w := sse.NewWriter(&buf)
					r := proto.CloneOf(req)
					enc := a.Client.NewStreamEncoder(r)
					for _, ev := range events {
						if err := enc.Encode(w, proto.CloneOf(ev)); err != nil {
							t.Fatal(err)
						}
						if letGo && ev.GetStart() != nil {
							r.Messages, r.Instructions, r.Tools = nil, nil, nil
						}
					}
					if err := enc.Fail(w, failure); err != nil {
						t.Fatal(err)
					}
					out[i] = sameIDs(buf.Bytes())
				}
				if !bytes.Equal(out[0], out[1]) {
					t.Errorf("the failed %s stream differs when the request is let go after the start:\n%s\nagainst\n%s", a.Name(), out[1], out[0])
				}
			})
		}
	}
}
