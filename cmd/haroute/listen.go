package main

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// statsHosts returns the addresses the stats listener binds: the one ROUTER_LISTEN_ADDR or
// ROUTER_BIND_ADDRESS names; else, when the pod's own addresses are known (HAROUTE_POD_IPS), those
// and loopback — what the kubelet's probes, a scraper and `kubectl port-forward` reach, and not the
// other addresses of a node in the hostNetwork shape; else every address ("").
func statsHosts(rc runConfig) []string {
	if rc.statsAddress != "" || len(rc.podIPs) == 0 {
		return []string{rc.statsAddress}
	}
	seen := map[netip.Addr]bool{}
	var hosts []string
	add := func(a netip.Addr) {
		if !seen[a] {
			seen[a] = true
			hosts = append(hosts, a.String())
		}
	}
	v6 := false
	for _, a := range rc.podIPs {
		add(a)
		v6 = v6 || a.Is6()
	}
	add(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	if v6 {
		add(netip.IPv6Loopback())
	}
	return hosts
}

// listenStats takes the stats port of rc on every address of statsHosts (none when there is no
// port: port 0, or --once). It takes all or none.
func listenStats(rc runConfig) ([]net.Listener, error) {
	if rc.statsPort == 0 || rc.once {
		return nil, nil
	}
	var lns []net.Listener
	for _, h := range statsHosts(rc) {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(rc.statsPort)))
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("stats listener: %w", err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// closeAll closes listeners (the servers on them may have closed them already).
func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		_ = ln.Close()
	}
}

// podAddresses parses HAROUTE_POD_IPS (comma-separated; the translation options report a bad value).
func podAddresses(v string) []netip.Addr {
	var out []netip.Addr
	for _, f := range strings.Split(v, ",") {
		if a, err := netip.ParseAddr(strings.TrimSpace(f)); err == nil && a.Zone() == "" {
			out = append(out, a.Unmap())
		}
	}
	return out
}
