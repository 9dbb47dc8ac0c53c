//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

// The benchmark reads each target's CPU and memory from /proc, which only
// Linux has; elsewhere it compiles, so that the module builds, and says so.

func dieWithParent(*exec.Cmd) {}

func raiseFileLimit(uint64) (uint64, error) {
	return 0, errors.New("the load benchmark reads /proc and runs on Linux only")
}
