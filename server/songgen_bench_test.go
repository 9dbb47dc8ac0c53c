package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate/songgen"
)

// BenchmarkSonggenSubmitFetch is a client's submit of a lyrics task (served
// by the echo model, so no music service is in the loop) and a single
// query of it, over HTTP on loopback, against the embedded store.
func BenchmarkSonggenSubmitFetch(b *testing.B) {
	g := startMusic(b, musicOpts{noUpstream: true, lyricsModel: "echo"})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	do := func(method, path, body string) []byte {
		req, _ := http.NewRequest(method, g.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+aliceKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		return raw
	}
	for b.Loop() {
		var env struct{ Data string }
		if err := json.Unmarshal(do(http.MethodPost, songgen.PathLyrics, `{"prompt": "the first snow of winter"}`), &env); err != nil {
			b.Fatal(err)
		}
		do(http.MethodGet, songgen.PathFetch+"/"+env.Data, "")
	}
}
