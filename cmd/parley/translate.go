package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/parleyhq/parley/dialects"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// chatDialects are the dialects with both a client and an upstream side:
// the ones a translation can go from and to.
func chatDialects() translate.Dialects {
	return slices.DeleteFunc(dialects.All(), func(d *translate.Dialect) bool { return d.Client == nil || d.Upstream == nil })
}

func dialectNames() string {
	names := chatDialects().Names()
	slices.Sort(names)
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
	src, dst := chatDialects().Named(*from), chatDialects().Named(*to)
	if src == nil || dst == nil {
		return fmt.Errorf("--from and --to must each be one of %s", dialectNames())
	}
	body, err := io.ReadAll(io.LimitReader(e.stdin, 256<<20))
	if err != nil {
		return err
	}
	req := &parleyv1.Request{Model: *model}
	switch {
	case *response && *stream:
		enc := dst.Client.NewStreamEncoder(req)
		w := sse.NewWriter(e.stdout)
		for ev, err := range translate.DecodeStream(src.Upstream.Dialect(), strings.NewReader(string(body)), src.Upstream.NewStreamDecoder(translate.Target{Upstream: *from}), translate.StreamLimits{}) {
			if err != nil {
				return err
			}
			if err := enc.Encode(w, ev); err != nil {
				return err
			}
		}
		return nil
	case *response:
		resp, err := src.Upstream.DecodeResponse(translate.Target{Upstream: *from}, body)
		if err != nil {
			return err
		}
		out, err := dst.Client.EncodeResponse(req, resp)
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
	creq, err := src.Client.DecodeRequest(in)
	if err != nil {
		return err
	}
	m := creq.GetModel()
	if *model != "" {
		m = *model
	}
	out, err := dst.Upstream.EncodeRequest(creq, translate.Target{Upstream: *to, Model: m})
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
