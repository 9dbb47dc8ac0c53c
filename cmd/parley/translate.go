package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
	"github.com/parleyhq/parley/translate/sse"
)

type dialectPair struct {
	client   translate.Client
	upstream translate.Upstream
}

var dialects = map[string]dialectPair{
	"messages":         {messages.Client{}, messages.Upstream{}},
	"generate_content": {generatecontent.Client{}, generatecontent.Upstream{}},
	"responses":        {responses.Client{}, responses.Upstream{}},
	"chat_completions": {chatcompletions.Client{}, chatcompletions.Upstream{}},
}

func dialectNames() string {
	var names []string
	for n := range dialects {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// translateCmd runs the translators on stdin: a client request of --from
// becomes the request an upstream of --to gets; with --response, an
// upstream reply of --from becomes what a client of --to gets (an event
// stream with --stream).
func translateCmd(args []string, e env) error {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	from := fs.String("from", "", "dialect of the input: "+dialectNames())
	to := fs.String("to", "", "dialect of the output")
	response := fs.Bool("response", false, "translate a response body instead of a request")
	stream := fs.Bool("stream", false, "with --response: the input is an event stream")
	model := fs.String("model", "", "model name, for a generate_content request (the model is in its path) or to rename it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	src, ok1 := dialects[*from]
	dst, ok2 := dialects[*to]
	if !ok1 || !ok2 {
		return fmt.Errorf("--from and --to must each be one of %s", dialectNames())
	}
	body, err := io.ReadAll(io.LimitReader(e.stdin, 256<<20))
	if err != nil {
		return err
	}
	req := &parleyv1.Request{Model: *model}
	switch {
	case *response && *stream:
		enc := dst.client.NewStreamEncoder(req)
		w := sse.NewWriter(e.stdout)
		for ev, err := range translate.DecodeStream(src.upstream.Dialect(), strings.NewReader(string(body)), src.upstream.NewStreamDecoder(translate.Target{Upstream: *from}), translate.StreamLimits{}) {
			if err != nil {
				return err
			}
			if err := enc.Encode(w, ev); err != nil {
				return err
			}
		}
		return nil
	case *response:
		resp, err := src.upstream.DecodeResponse(translate.Target{Upstream: *from}, body)
		if err != nil {
			return err
		}
		out, err := dst.client.EncodeResponse(req, resp)
		if err != nil {
			return err
		}
		return writeLine(e.stdout, out)
	case *stream:
		return errors.New("--stream goes with --response")
	}
	in := &translate.Incoming{Header: http.Header{}, Body: body}
	if *model != "" {
		in.Model = "models/" + *model
	}
	creq, err := src.client.DecodeRequest(in)
	if err != nil {
		return err
	}
	m := creq.GetModel()
	if *model != "" {
		m = *model
	}
	out, err := dst.upstream.EncodeRequest(creq, translate.Target{Upstream: *to, Model: m})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s %s\n", out.Method, out.Path)
	for _, d := range out.Dropped {
		fmt.Fprintf(e.stderr, "dropped: %s\n", d)
	}
	return writeLine(e.stdout, out.Body)
}

func writeLine(w io.Writer, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
