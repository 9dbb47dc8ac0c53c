package tasks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// special are ranges a callback may not reach unless private hooks are
// allowed, besides what netip classifies as loopback, private, link-local
// (169.254.169.254, the cloud metadata address, among them), multicast and
// unspecified: shared address space (100.64.0.0/10, where some clouds keep
// their metadata service), "this network", IETF protocol assignments,
// benchmarking, documentation and reserved ranges, and NAT64 forms.
var special = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"64:ff9b::/96", "64:ff9b:1::/48", "2001:db8::/32", "100::/64",
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// Blocked reports whether an address is one a callback may not reach.
func Blocked(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range special {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// hookResolveTimeout bounds the name lookup of a notify_hook at submit.
const hookResolveTimeout = 5 * time.Second

// checkHook refuses, at submit time, a notify_hook whose host is or
// resolves to an address Blocked reports. The dialer of the deliveries
// checks again at connect time, so that a name that resolves elsewhere
// later (DNS rebinding) cannot get through either.
func (s *Service) checkHook(ctx context.Context, hook string) error {
	if hook == "" || s.o.AllowPrivateHooks {
		return nil
	}
	u, err := url.Parse(hook)
	if err != nil {
		return invalidField("notify_hook", "%q is not a URL", hook)
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if Blocked(ip) {
			return hookRefused("%s is a loopback, private, link-local or otherwise reserved address, which callbacks may not reach", host)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, hookResolveTimeout)
	defer cancel()
	ips, err := s.o.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return hookRefused("the host %q does not resolve", host)
	}
	for _, ip := range ips {
		if Blocked(ip) {
			return hookRefused("the host %q resolves to %s, a loopback, private, link-local or otherwise reserved address, which callbacks may not reach", host, ip)
		}
	}
	return nil
}

// errBlockedDial is returned by a guarded dialer.
var errBlockedDial = errors.New("callbacks may not connect to a loopback, private, link-local or reserved address")

// guardDial is a net.Dialer Control function that refuses blocked
// addresses at connect time.
func guardDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("callback address %q: %w", address, err)
	}
	if Blocked(ap.Addr()) {
		return fmt.Errorf("%s: %w", ap.Addr(), errBlockedDial)
	}
	return nil
}

// hookDialer is the dialer of callback deliveries.
func hookDialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = guardDial
	}
	return d
}
