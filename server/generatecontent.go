package server

import (
	"net/http"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
)

// generateContent serves POST /v1beta/models/{model}:{method} for the
// methods generateContent, streamGenerateContent and countTokens.
func (s *Server) generateContent(c generatecontent.Client) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := s.newExchange(w, r, c)
		model, method, found := strings.Cut(r.PathValue("call"), ":")
		in := &translate.Incoming{Model: "models/" + model}
		switch {
		case !found || model == "":
			x.fail(translate.Status(parleyv1.Code_CODE_NOT_FOUND, "no method in %q: expected models/{model}:generateContent", r.URL.Path))
		case method == "generateContent":
			x.serve(in)
		case method == "streamGenerateContent":
			in.Stream = true
			x.serve(in)
		case method == "countTokens":
			x.serveCount(c, in)
		default:
			x.fail(translate.Status(parleyv1.Code_CODE_NOT_FOUND, "method %q is not served here; Parley serves generateContent, streamGenerateContent and countTokens", method))
		}
	})
}
