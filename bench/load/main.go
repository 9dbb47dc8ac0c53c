// Command load measures what Parley costs in front of an upstream, against
// the floor any Go proxy pays: net/http/httputil.ReverseProxy carrying the
// same upstream replies untranslated.
//
// It starts mock upstreams for every dialect in its own process, the
// reverse proxy and Parley as processes of their own, and a load
// generator; it reports throughput, CPU per request (the target
// process's own accounting), time to first byte and memory per held
// stream, over interleaved rounds. See bench/README.md.
//
//	go run ./bench/load [-rounds 3] [-duration 1.5s] [-streams 2000] [-only proxy|parley] ...
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// mainErr runs the command with args, the report on stdout and the
// progress on stderr.
func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := defineFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *f.serveProxy {
		return serveProxy(*f.target, *f.listen)
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	if err := fileLimitFor(opts.streams); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, opts, stderr)
	if err != nil {
		return err
	}
	res.summarize()
	printReport(stdout, res)
	if *f.jsonOut != "" {
		return writeJSON(*f.jsonOut, res)
	}
	return nil
}

// flags are the command's flags, as parsed.
type flags struct {
	rounds, requests, streams     *int
	promptKB                      *int
	duration, settle, openTimeout *time.Duration
	concs, routes, scenarios      *string
	only, repo, parleyBin         *string
	jsonOut                       *string
	keep, holdBeforeHead          *bool
	upstreamTLS                   *string
	serveProxy                    *bool
	target, listen                *string
}

func defineFlags(fs *flag.FlagSet) flags {
	return flags{
		rounds:      fs.Int("rounds", 3, "interleaved rounds; medians and ranges are taken across them"),
		duration:    fs.Duration("duration", 1500*time.Millisecond, "how long each scenario runs on each target per round (the direct call runs half as long)"),
		requests:    fs.Int("requests", 0, "requests per run instead of -duration, when above 0"),
		concs:       fs.String("conc", "1,32", "concurrencies, comma-separated"),
		routes:      fs.String("routes", "messages>messages,chat>messages,messages>chat", `routes (client>upstream), comma-separated, or "all"`),
		scenarios:   fs.String("scenarios", "", `regular expression the scenario names must match, e.g. "stream.*c=32" or "held"`),
		streams:     fs.Int("streams", 2000, "held streams per memory measurement (0: none)"),
		settle:      fs.Duration("hold-settle", time.Second, "how long held streams stay open before memory is read"),
		openTimeout: fs.Duration("hold-timeout", 20*time.Second, "how long held streams may take to get their first bytes"),
		promptKB:    fs.Int("prompt-kb", 0, "pad every request's first turn to about this many KiB, as long as an agent's conversation (0: a short one)"),
		only:        fs.String("only", "", `measure one target only: "proxy" or "parley" (with the direct call)`),
		repo:        fs.String("repo", "", "Parley's repository to build (default: the module of the working directory)"),
		parleyBin:   fs.String("parley-bin", "", "a Parley binary to measure instead of building one"),
		jsonOut:     fs.String("json", "", "also write the results, every round included, to this file as JSON"),
		keep:        fs.Bool("keep", false, "keep the temporary directory (configuration and logs of the targets)"),
		holdBeforeHead: fs.Bool("hold-before-head", false, "hold the memory measurement's requests before their upstream's reply begins, as a model "+
			"still reading a long conversation holds them, rather than after its first events"),
		upstreamTLS: fs.String("upstream-tls", "", `serve the mock upstreams over HTTPS, as production services are: "http1" (HTTP/1.1 alone) or "h2" (HTTP/2 offered); `+
			"the targets trust the mocks' certificate through SSL_CERT_FILE"),

		serveProxy: fs.Bool("serve-proxy", false, "serve as the reverse proxy (how the benchmark starts its baseline)"),
		target:     fs.String("target", "", "with -serve-proxy: the upstream URL"),
		listen:     fs.String("listen", "127.0.0.1:0", "with -serve-proxy: the address to listen on"),
	}
}

// options checks the flags and turns them into a run's options.
func (f flags) options() (options, error) {
	o := options{
		rounds: *f.rounds, duration: *f.duration, requests: *f.requests, streams: *f.streams, settle: *f.settle, openTimeout: *f.openTimeout,
		only: targetKind(*f.only), repo: *f.repo, parleyBin: *f.parleyBin, keep: *f.keep, promptKB: *f.promptKB,
		holdBeforeHead: *f.holdBeforeHead, upstreamTLS: *f.upstreamTLS,
	}
	var err error
	if o.concs, err = parseInts(*f.concs); err != nil {
		return o, fmt.Errorf("-conc: %w", err)
	}
	if o.routes, err = parseRoutes(*f.routes); err != nil {
		return o, err
	}
	if o.filter, err = regexp.Compile(*f.scenarios); err != nil {
		return o, fmt.Errorf("-scenarios: %w", err)
	}
	switch {
	case o.rounds < 1:
		return o, errors.New("-rounds must be at least 1")
	case o.duration <= 0 && o.requests <= 0:
		return o, errors.New("-duration or -requests must be above 0")
	case o.promptKB < 0:
		return o, errors.New("-prompt-kb must not be negative")
	case o.upstreamTLS != tlsNone && o.upstreamTLS != tlsHTTP1 && o.upstreamTLS != tlsH2:
		return o, fmt.Errorf(`-upstream-tls: %q is neither "http1" nor "h2"`, o.upstreamTLS)
	case o.only != "" && o.only != proxy && o.only != parley:
		return o, fmt.Errorf(`-only: %q is neither "proxy" nor "parley"`, o.only)
	}
	return o, nil
}

// fileLimitFor raises the open-file limit for n held streams: each holds
// two descriptors in this process (the client's connection and the
// mock's) and two in the target, which inherits the limit.
func fileLimitFor(n int) error {
	need := uint64(2*n + 512)
	got, err := raiseFileLimit(need)
	if err != nil {
		return fmt.Errorf("raising the open-file limit: %w", err)
	}
	if got < need {
		return fmt.Errorf("-streams %d needs %d open files in this process and in the target, and the limit is %d: "+
			"raise the hard limit (ulimit -Hn, as root) or hold fewer streams", n, need, got)
	}
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", part)
		}
		out = append(out, n)
	}
	return out, nil
}

func writeJSON(path string, res *results) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // route names hold '>'
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
