// Command parley runs the Parley gateway.
//
//	parley serve [--config FILE] [--listen ADDR]
//	parley config check FILE
//	parley migrate [--config FILE]
//	parley translate --from DIALECT --to DIALECT [--response [--stream]] [--model NAME]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		// Process-wide, so here rather than in serve, which tests run
		// in-process.
		startGCTuner(gcFloor, os.LookupEnv)
	}
	err := run(context.Background(), os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, lookup: os.LookupEnv})
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley:", err)
		os.Exit(2)
	}
}

// env is what a command may touch of the process, so that tests can run
// every command in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	lookup         func(string) (string, bool)
	// ready, when set, is told the address the server listens on.
	ready func(addr string)
}

const usage = `usage: parley <command> [flags]

commands:
  serve                 run the gateway (embedded defaults: 127.0.0.1:8080, the echo model,
                        and the public services whose keys are in the environment)
  config check FILE     check a configuration file without serving
  migrate               apply the PostgreSQL store's schema migrations without serving
  translate             turn a request (or --response) body on stdin from one dialect into another
`

func run(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], e)
	case "config":
		return configCmd(args[1:], e)
	case "migrate":
		return migrateCmd(ctx, args[1:], e)
	case "translate":
		return translateCmd(args[1:], e)
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, usage)
		return nil
	}
	fmt.Fprint(e.stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
