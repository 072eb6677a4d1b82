package testkit

import "os"

// HAProxyEnv names the environment variable that chooses the HAProxy executable the tests run (`make
// haproxy-versions` puts the newer series at bin/haproxy-<series>).
const HAProxyEnv = "HAROUTE_HAPROXY"

// DefaultHAProxy is Debian bookworm's HAProxy (2.6), used when HAProxyEnv is unset.
const DefaultHAProxy = "/usr/sbin/haproxy"

// HAProxyBinary returns $HAROUTE_HAPROXY, or DefaultHAProxy.
func HAProxyBinary() string {
	if p := os.Getenv(HAProxyEnv); p != "" {
		return p
	}
	return DefaultHAProxy
}
