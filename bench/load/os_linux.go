package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the target when the benchmark ends,
// even when the benchmark itself is killed and cannot stop it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// raiseFileLimit lifts the open-file limit to at least need (the soft
// limit to the hard one, and the hard one too when the process may), so
// that thousands of held streams fit. The targets, started afterwards,
// inherit it: a process that sets RLIMIT_NOFILE itself passes it on to
// its children as it is.
func raiseFileLimit(need uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	want := max(lim.Max, need)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: want}); err == nil {
		return want, nil
	}
	// Not allowed to raise the hard limit: the soft one up to it.
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return lim.Cur, nil
}
