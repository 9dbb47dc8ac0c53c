package generatecontent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/genai"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
)

// TestCountTokensThroughTheSDK: the SDK's countTokens call decodes with
// the model from the path, and the SDK reads the count Parley renders
// (the SDK's type keeps the total; the per-modality details are checked
// in TestDecodeCountRequestForms).
func TestCountTokensThroughTheSDK(t *testing.T) {
	var sent []byte
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent, _ = io.ReadAll(r.Body)
		path = r.URL.Path
		body, err := generatecontent.Client{}.EncodeCount(&parleyv1.TokenCount{InputTokens: 263, CachedTokens: 0,
			InputDetails: []*parleyv1.ModalityTokens{{Modality: parleyv1.Modality_MODALITY_TEXT, Tokens: 5}, {Modality: parleyv1.Modality_MODALITY_IMAGE, Tokens: 258}}})
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.Models.CountTokens(context.Background(), "gemini-2.5-flash", []*genai.Content{
		genai.NewContentFromParts([]*genai.Part{genai.NewPartFromText("Tell me about this image"), genai.NewPartFromBytes(tinyPNG, "image/png")}, genai.RoleUser),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.TotalTokens != 263 {
		t.Errorf("the SDK read %+v", got)
	}
	model, ok := strings.CutSuffix(strings.TrimPrefix(path, "/v1beta/"), ":countTokens")
	if !ok {
		t.Fatalf("the SDK called %s", path)
	}
	req, err := generatecontent.Client{}.DecodeCountRequest(&translate.Incoming{Model: model, Body: sent})
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if req.GetModel() != "gemini-2.5-flash" || len(req.GetMessages()) != 1 || len(req.GetMessages()[0].GetParts()) != 2 {
		t.Errorf("decoded %v", req)
	}

	// Toward an upstream of this dialect: the whole request, so that
	// instructions and tools count too, in the SDK's own request shape.
	out, err := generatecontent.Upstream{}.EncodeCountRequest(req, translate.Target{Model: "gemini-2.5-pro", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != "/v1beta/models/gemini-2.5-pro:countTokens" || out.Query.Get("alt") != "" || out.Header.Get("x-goog-api-key") != "k" {
		t.Errorf("upstream %s %v %v", out.Path, out.Query, out.Header)
	}
	var wrapped struct {
		GenerateContentRequest map[string]json.RawMessage `json:"generateContentRequest"`
	}
	if err := json.Unmarshal(out.Body, &wrapped); err != nil {
		t.Fatal(err)
	}
	if string(wrapped.GenerateContentRequest["model"]) != `"models/gemini-2.5-pro"` {
		t.Errorf("the inner request names %s", wrapped.GenerateContentRequest["model"])
	}
	delete(wrapped.GenerateContentRequest, "model")
	inner, _ := json.Marshal(wrapped.GenerateContentRequest)
	sdkcheck.GenerateContentRequest(t, inner)
}

func TestDecodeCountRequestForms(t *testing.T) {
	for name, c := range map[string]struct {
		body, field string
	}{
		"generateContentRequest": {`{"generateContentRequest":{"model":"models/gemini-2.0-flash","contents":[{"parts":[{"text":"The quick brown fox jumps over the lazy dog."}],"role":"user"}]}}`, ""},
		"contents":               {`{"contents":[{"parts":[{"text":"The quick brown fox jumps over the lazy dog."}]}]}`, ""},
		"neither":                {`{}`, "contents"},
		"both":                   {`{"contents":[],"generateContentRequest":{"contents":[]}}`, "generateContentRequest"},
		"inner without contents": {`{"generateContentRequest":{"model":"models/m"}}`, "generateContentRequest.contents"},
	} {
		_, err := generatecontent.Client{}.DecodeCountRequest(&translate.Incoming{Model: "models/gemini-2.0-flash", Body: []byte(c.body)})
		var ie *translate.InputError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.field != "" && (!errors.As(err, &ie) || ie.Field != c.field):
			t.Errorf("%s: error %v, want one naming %s", name, err, c.field)
		}
	}
	reply := `{"totalTokens":10,"promptTokensDetails":[{"modality":"TEXT","tokenCount":10}]}`
	c, err := generatecontent.Upstream{}.DecodeCount([]byte(reply))
	if err != nil || c.GetInputTokens() != 10 || c.GetInputDetails()[0].GetTokens() != 10 {
		t.Errorf("count %v, %v", c, err)
	}
	if back, _ := (generatecontent.Client{}).EncodeCount(c); string(back) != reply {
		t.Errorf("rendered %s, want %s", back, reply)
	}
}
