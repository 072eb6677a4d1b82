//go:build e2e

package cluster

import (
	"crypto/x509"
	"fmt"

	"github.com/haroute/haroute/e2e/testbed"
)

// verifyLeaf checks that the certificate resp came with verifies for host against ca.
func verifyLeaf(resp *testbed.Response, ca *testbed.CA, host string) error {
	leaf := resp.Leaf()
	if leaf == nil {
		return fmt.Errorf("no server certificate")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: host}); err != nil {
		return fmt.Errorf("served certificate (subject %q, serial %s) does not verify for %s: %w", leaf.Subject, leaf.SerialNumber, host, err)
	}
	return nil
}
