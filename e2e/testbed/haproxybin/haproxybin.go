// Package haproxybin names the HAProxy executable the tests run. It is testbed's HAProxyBinary for
// the tests that cannot import e2e/testbed (mapping/render's own, since testbed imports render).
package haproxybin

import "os"

// Env names the environment variable that chooses the binary (`make haproxy-versions` puts the newer
// series at bin/haproxy-<series>).
const Env = "HAROUTE_HAPROXY"

// Default is Debian bookworm's HAProxy (2.6), used when Env is unset.
const Default = "/usr/sbin/haproxy"

// Path returns $HAROUTE_HAPROXY, or Default.
func Path() string {
	if p := os.Getenv(Env); p != "" {
		return p
	}
	return Default
}
