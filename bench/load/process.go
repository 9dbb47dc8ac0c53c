package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A target under test runs as a process of its own, so that its CPU and
// memory can be read from the kernel's accounting of that process alone,
// apart from the load generator and the mocks.

// process is a running target: Parley or the reverse proxy.
type process struct {
	name string
	url  string // the base URL it serves on
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has ended
	err  error         // how it ended, once done is closed
}

// clockTicks is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which Linux fixes at 100 for user space on every architecture.
const clockTicks = 100

// spec says how to start a target.
type spec struct {
	name   string   // for messages
	addr   string   // the loopback address it listens on
	health string   // the path that answers 200 once it serves
	log    string   // the file its stdout and stderr go to
	env    []string // added to the benchmark's environment
	argv   []string
}

// startProcess runs a target and waits until its health path answers 200.
func startProcess(ctx context.Context, s spec) (*process, error) {
	log, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stdout, cmd.Stderr = log, log
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", s.name, err)
	}
	p := &process{name: s.name, url: "http://" + s.addr, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	if err := p.waitHealthy(ctx, s.health); err != nil {
		p.stop()
		return nil, fmt.Errorf("%w (its log: %s)", err, s.log)
	}
	return p, nil
}

// waitHealthy polls the process's health endpoint for up to 30 seconds.
func (p *process) waitHealthy(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-p.done:
			if p.err == nil {
				return fmt.Errorf("%s exited at start", p.name)
			}
			return fmt.Errorf("%s exited at start: %w", p.name, p.err)
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer %s within 30s", p.name, path)
		case <-time.After(20 * time.Millisecond):
		}
		resp, err := client.Get(p.url + path)
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
}

// pid is the target's process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// stop ends the process: SIGTERM, then SIGKILL if it has not ended within
// ten seconds.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	_ = p.log.Close()
}

// freeAddr returns a loopback address with a port free at the time of the
// call, for a target to listen on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// processCPU is the CPU time (user and system, every thread) the process
// has used so far, from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted from the last ')'. utime and stime are fields 14 and 15 of
	// the line, the 12th and 13th after the name.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc stat line")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat line")
	}
	utime, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// processRSS is the process's resident set size in KiB, VmRSS in
// /proc/<pid>/status.
func processRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no VmRSS in /proc status")
}
