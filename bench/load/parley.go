package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Parley under test: built once from the repository, configured with one
// upstream per mock, and started like any deployment, `parley serve
// --config FILE`, its log in a file (the access line it writes per
// request is part of what is measured).

// moduleRoot returns the repository to build Parley from: repo when set,
// else the module that holds the working directory (go env GOMOD).
func moduleRoot(repo string) (string, error) {
	if repo != "" {
		return filepath.Abs(repo)
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside Parley's module: run from the repository or pass -repo")
	}
	return filepath.Dir(mod), nil
}

// buildParley builds ./cmd/parley of root into dir and returns the binary.
func buildParley(root, dir string) (string, error) {
	bin := filepath.Join(dir, "parley")
	// -buildvcs=false: the build asks nothing of git, which others may be
	// using on the same checkout.
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "./cmd/parley")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/parley in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

// revision names the commit the checkout is on, or "" when git cannot say.
func revision(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// parleyConfig is a configuration with an upstream per mock and, for each,
// a model and a held model: m-<dialect> and m-<dialect>-hold.
func parleyConfig(ms *mocks, dataDir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: 127.0.0.1:0\ndata_dir: %q\nupstreams:\n", dataDir)
	ds := []dialect{messages, chat, responses, generate}
	for _, d := range ds {
		fmt.Fprintf(&b, "  - {name: %s, dialect: %s, base_url: %q, api_key: bench-upstream-key}\n", d, d.configName(), ms.url(d))
	}
	b.WriteString("models:\n")
	for _, d := range ds {
		for _, hold := range []bool{false, true} {
			fmt.Fprintf(&b, "  - {name: %s, upstream: %s, upstream_model: %s}\n", d.parleyModel(hold), d, d.upstreamModel(hold))
		}
	}
	return b.String()
}

// startParley starts `parley serve` in a directory of its own under tmp
// (configuration, data and log), so that several may run one after the
// other without sharing a database.
func startParley(ctx context.Context, bin, tmp, label string, ms *mocks) (*process, error) {
	dir := filepath.Join(tmp, "parley-"+label)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "parley.yaml")
	if err := os.WriteFile(file, []byte(parleyConfig(ms, filepath.Join(dir, "data"))), 0o600); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	return startProcess(ctx, spec{
		name: "parley", addr: addr, health: "/readyz",
		log:  filepath.Join(dir, "parley.log"),
		env:  ms.trustEnv(),
		argv: []string{bin, "serve", "--config", file, "--listen", addr},
	})
}
