package e2e_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ownsConn reports whether the process pid holds the loopback TCP socket
// whose local address is addr (as a server sees a client's RemoteAddr),
// from /proc: the socket's inode, then the process's descriptors. Other
// sockets may share the local port (one to another address, or one
// closed and waiting out TIME_WAIT, which has no inode): every open
// socket with the port counts, so that one listed later hides none.
func ownsConn(pid int, addr string) (bool, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return false, err
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[9] == "0" {
				continue
			}
			if _, hexPort, ok := strings.Cut(fields[1], ":"); ok && strings.EqualFold(hexPort, fmt.Sprintf("%04X", p)) {
				inodes["socket:["+fields[9]+"]"] = true
			}
		}
		_ = f.Close()
	}
	if len(inodes) == 0 {
		return false, fmt.Errorf("no socket with local port %d", p)
	}
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && inodes[link] {
			return true, nil
		}
	}
	return false, nil
}
