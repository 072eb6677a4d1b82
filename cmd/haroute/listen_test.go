package main

import (
	"net"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
)

func TestStatsHosts(t *testing.T) {
	pod4, pod6 := netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::3")
	cases := []struct {
		rc   runConfig
		want []string
	}{
		{runConfig{}, []string{""}},
		{runConfig{statsAddress: "10.9.9.9", podIPs: []netip.Addr{pod4}}, []string{"10.9.9.9"}},
		{runConfig{podIPs: []netip.Addr{pod4}}, []string{"10.1.2.3", "127.0.0.1"}},
		{runConfig{podIPs: []netip.Addr{pod4, pod6}}, []string{"10.1.2.3", "fd00::3", "127.0.0.1", "::1"}},
		{runConfig{podIPs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}, []string{"127.0.0.1"}},
	}
	for _, c := range cases {
		if got := statsHosts(c.rc); !slices.Equal(got, c.want) {
			t.Errorf("statsHosts(%+v) = %q, want %q", c.rc, got, c.want)
		}
	}
	if got := podAddresses(" 10.1.2.3, ::ffff:10.1.2.4,bad,fe80::1%eth0"); !slices.Equal(got, []netip.Addr{pod4, netip.MustParseAddr("10.1.2.4")}) {
		t.Errorf("podAddresses = %v", got)
	}
}

// TestStatsListenerBindsPodAddresses: with the pod's addresses known, the stats port answers on them
// and on loopback, and not on another address of the machine.
func TestStatsListenerBindsPodAddresses(t *testing.T) {
	port := testbed.FreePort(t)
	rc := runConfig{statsPort: port, podIPs: []netip.Addr{netip.MustParseAddr("127.0.0.77")}}
	lns, err := listenStats(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(lns)
	dial := func(host string) error {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, h := range []string{"127.0.0.77", "127.0.0.1"} {
		if err := dial(h); err != nil {
			t.Errorf("stats port on %s: %v", h, err)
		}
	}
	if err := dial("127.0.0.78"); err == nil {
		t.Error("the stats port answers on an address that is not the pod's")
	}
}
